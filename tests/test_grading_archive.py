"""Zip members are read with the bytes actually produced bounded (issue 21, items 1 and 2).

Bombs declare a small size and expand far beyond it with every compression method; damaged members
must become that submission's status, with the batch exiting 0.
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import io
import random
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from grader import cli
from grader.archive import read_member
from course_lib.checking.catalog import BY_NAME
from grader.submission import MAX_SOURCE_BYTES, Submission

ROOT = Path(__file__).resolve().parents[1]
SOURCE = (ROOT / "solutions" / "commit_turn.py").read_bytes()


def compress(method: int, data: bytes) -> bytes:
    if method == zipfile.ZIP_STORED:
        return data
    if method == zipfile.ZIP_DEFLATED:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        return packer.compress(data) + packer.flush()
    if method == zipfile.ZIP_BZIP2:
        return bz2.compress(data)
    packer = zipfile.LZMACompressor()
    return packer.compress(data) + packer.flush()


def handmade_zip(members: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A zip from (name, method, compressed data, crc, declared size): sizes may lie."""
    body, central = b"", b""
    for name, method, data, crc, size in members:
        raw = name.encode()
        offset = len(body)
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 46, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0)
        body += raw + data
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 0x31E, 46, 0, method, 0, 0x21, crc, len(data), size,
            len(raw), 0, 0, 0, 0, 0o100644 << 16, offset,
        ) + raw  # fmt: skip
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(body), 0)
    return body + central + end


def bomb(method: int, expanded: int) -> bytes:
    """A member named commit_turn.py declaring 1 000 bytes that expands to `expanded` bytes."""
    if method == zipfile.ZIP_BZIP2:
        packer = bz2.BZ2Compressor(9)
        data = b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(expanded >> 20)) + packer.flush()
    else:
        data = compress(method, b"\0" * expanded)
    return handmade_zip([("hw/commit_turn.py", method, data, 0, 1000)])


def read(path: Path):
    submission = Submission.open(path)
    try:
        return submission.read(BY_NAME["commit_turn"])
    finally:
        submission.close()


@pytest.mark.parametrize(
    "method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]
)
def test_every_method_reads_an_honest_member(tmp_path, method):
    path = tmp_path / "hw.zip"
    path.write_bytes(handmade_zip([("hw/commit_turn.py", method, compress(method, SOURCE), zlib.crc32(SOURCE), len(SOURCE))]))
    found = read(path)
    assert found.failure is None and found.source == SOURCE.decode()


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_bomb_that_lies_about_its_size_stops_at_the_limit(tmp_path, method):
    path = tmp_path / "bomb.zip"
    path.write_bytes(bomb(method, 64 << 20))
    assert path.stat().st_size < 200_000
    found = read(path)
    assert found.source is None
    assert (found.failure.category, found.failure.detail) == ("crash", "файл commit_turn.py больше 512 КБ")


def test_a_stored_member_longer_than_declared_is_damaged(tmp_path):
    path = tmp_path / "hw.zip"
    path.write_bytes(handmade_zip([("commit_turn.py", 0, SOURCE, zlib.crc32(SOURCE), 100)]))
    found = read(path)
    assert found.failure.category == "missing"
    assert found.failure.detail.startswith("commit_turn.py в архиве повреждён (размер не совпадает")


BOMB_RSS = r"""
import resource, sys, zipfile
from pathlib import Path
from course_lib.checking.catalog import BY_NAME
from grader.submission import Submission
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
submission = Submission.open(Path(sys.argv[1]))
found = submission.read(BY_NAME["commit_turn"])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(found.failure.category, (after - before) // 1024)
"""


def test_the_grader_own_memory_stays_bounded(tmp_path):
    """The issue's bzip2 bomb took the grader to 1 GB; reading it now grows the peak by a few MB."""
    path = tmp_path / "bomb.zip"
    path.write_bytes(bomb(zipfile.ZIP_BZIP2, 256 << 20))
    result = subprocess.run([sys.executable, "-c", BOMB_RSS, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    status, grown_mb = result.stdout.split()
    assert status == "crash" and int(grown_mb) < 24, result.stdout + result.stderr


def test_fuzzed_deflate_members_never_raise(tmp_path):
    """4 000 corruptions in the issue raised zlib.error 1 644 times; now each is data or a status."""
    data = compress(zipfile.ZIP_DEFLATED, SOURCE)
    generator = random.Random(21)
    outcomes = set()
    for _ in range(400):
        broken = bytearray(data)
        for _ in range(generator.randint(1, 4)):
            broken[generator.randrange(len(broken))] = generator.randrange(256)
        archive = zipfile.ZipFile(io.BytesIO(handmade_zip([("commit_turn.py", 8, bytes(broken), zlib.crc32(SOURCE), len(SOURCE))])))
        content, failure = read_member(archive, archive.infolist()[0], "commit_turn.py", MAX_SOURCE_BYTES)
        assert (content is None) != (failure is None)
        if failure is not None:
            assert failure.category in ("missing", "crash") and "commit_turn.py" in failure.detail
            outcomes.add(failure.detail.split("(")[1].split(")")[0])
        else:
            assert content == SOURCE  # only a corruption the CRC cannot see may pass, and none here
    assert "испорчены сжатые данные" in outcomes


def test_a_damaged_member_is_the_submission_status_and_the_batch_exits_0(tmp_path):
    data = bytearray(compress(zipfile.ZIP_DEFLATED, SOURCE))
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    broken = tmp_path / "broken.zip"
    broken.write_bytes(handmade_zip([("commit_turn.py", 8, bytes(data), zlib.crc32(SOURCE), len(SOURCE))]))
    honest = tmp_path / "honest"
    honest.mkdir()
    (honest / "commit_turn.py").write_bytes(SOURCE)
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([str(broken), str(honest), "--out", str(out), "--exercise", "commit_turn", "--no-progress", "--jobs", "1"])
    assert code == 0
    rows = {row["submission"]: row for row in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    assert (rows["broken"]["status"], rows["broken"]["details"]) == ("missing", "commit_turn: missing")
    assert (rows["honest"]["status"], rows["honest"]["score"]) == ("ok", "10.00")
    report = (out / "broken" / "feedback.md").read_text(encoding="utf-8")
    assert "commit_turn.py в архиве повреждён (испорчены сжатые данные)" in report
