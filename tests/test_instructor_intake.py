"""Submissions as students hand them in, regrades and shards, visibility before publication."""

from __future__ import annotations

import csv
import json
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from grader import cli
from course_lib.checking.catalog import EXERCISES, TOTAL_POINTS, get_exercise
from grader.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox"]


def _rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


def _reference_zip(path: Path, prefix: str = "", extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for exercise in EXERCISES:
            archive.write(ROOT / "solutions" / f"{exercise.name}.py", f"{prefix}{exercise.name}.py")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A folder, a nested folder, a BOM+CRLF folder and a zip of the reference: all full marks."""
    base = tmp_path_factory.mktemp("intake")
    subs = base / "subs"
    shutil.copytree(ROOT / "solutions", subs / "plain")
    nested = subs / "hw4 student-17" / "exercises"
    shutil.copytree(ROOT / "solutions", nested)
    (subs / "hw4 student-17" / "__MACOSX").mkdir()
    (subs / "hw4 student-17" / "__MACOSX" / "commit_turn.py").write_text("garbage(")
    (nested / ".ipynb_checkpoints").mkdir()
    (nested / ".ipynb_checkpoints" / "commit_turn.py").write_text("garbage(")
    (nested / "._commit_turn.py").write_bytes(b"\x00\x05\x16\x07")
    bom = subs / "bom_crlf"
    bom.mkdir()
    for exercise in EXERCISES:
        text = (ROOT / "solutions" / f"{exercise.name}.py").read_text(encoding="utf-8")
        (bom / f"{exercise.name}.py").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    _reference_zip(subs / "zipped.zip", "my work/exercises/", {
        "__MACOSX/my work/exercises/._commit_turn.py": b"\x00\x05\x16\x07",
        "my work/.ipynb_checkpoints/commit_turn-checkpoint.py": b"garbage(",
    })  # fmt: skip
    out = base / "out"
    code = cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET])
    return code, out, subs


def test_every_packaging_scores_full_marks(graded):
    code, out, _ = graded
    assert code == 0
    rows = _rows(out)
    assert set(rows) == {"plain", "hw4_student-17-9093687c", "bom_crlf", "zipped"}
    for row in rows.values():
        assert row["status"] == "ok", row
        assert float(row["score"]) == float(row["max_score"]) == TOTAL_POINTS


def test_no_absolute_path_in_feedback_csv_or_results(graded):
    _, out, subs = graded
    texts = [(out / "grades.csv").read_text(encoding="utf-8"), (out / "similarity.csv").read_text()]
    for folder in out.iterdir():
        if folder.is_dir():
            texts += [path.read_text(encoding="utf-8") for path in folder.iterdir() if path.is_file()]
    for text in texts:
        assert str(subs) not in text and str(ROOT) not in text


def test_ambiguity_is_a_status_not_a_guess(tmp_path):
    sub = tmp_path / "twice"
    (sub / "a").mkdir(parents=True)
    (sub / "b").mkdir()
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", sub / "a" / "commit_turn.py")
    shutil.copyfile(ROOT / "exercises" / "commit_turn.py", sub / "b" / "commit_turn.py")
    out = tmp_path / "out"
    assert cli.main([str(sub), "--out", str(out), "--exercise", "commit_turn", *QUIET]) == 0
    row = _rows(out)["twice"]
    assert row["status"] == "ambiguous" and row["commit_turn"] == "0.00"
    feedback = (out / "twice" / "feedback.md").read_text(encoding="utf-8")
    assert "a/commit_turn.py" in feedback and "b/commit_turn.py" in feedback and "оставьте один" in feedback


def _zip_of(path: Path, members: dict[str, bytes], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, "/work/main/solutions/commit_turn.py")
    return path


def test_hostile_zips_are_refused_member_by_member(tmp_path):
    reference = (ROOT / "solutions" / "commit_turn.py").read_bytes()
    exercise = get_exercise("commit_turn")
    cases = {
        "traversal": (_zip_of(tmp_path / "t.zip", {"../../commit_turn.py": reference}), "missing"),
        "absolute": (_zip_of(tmp_path / "a.zip", {"/etc/commit_turn.py": reference}), "missing"),
        "symlink": (_zip_of(tmp_path / "s.zip", {}, symlink="commit_turn.py"), "missing"),
        "huge": (_zip_of(tmp_path / "h.zip", {"commit_turn.py": b"#" * (600 * 1024)}), "crash"),
        "bomb": (_zip_of(tmp_path / "b.zip", {"commit_turn.py": b"\n" * (500 * 1024)}), "crash"),
    }
    for label, (path, category) in cases.items():
        submission = Submission.open(path)
        try:
            found = submission.read(exercise)
        finally:
            submission.close()
        assert found.source is None and found.failure.category == category, label
    ok = Submission.open(_zip_of(tmp_path / "ok.zip", {"x/commit_turn.py": reference}))
    assert ok.read(exercise).source == reference.decode()
    ok.close()
    # A .zip that is not a zip (a cut download): that student's status, the batch goes on.
    not_zip = tmp_path / "fake.zip"
    not_zip.write_bytes(b"PK not really")
    assert cli.main([str(not_zip), "--out", str(tmp_path / "o"), *QUIET]) == 0
    row = (tmp_path / "o" / "grades.csv").read_text(encoding="utf-8").splitlines()[1]
    assert row.startswith("fake,missing,0.00,") and "архив работы повреждён" in row
    not_a_submission = tmp_path / "notes.txt"
    not_a_submission.write_text("не работа")
    assert cli.main([str(not_a_submission), "--out", str(tmp_path / "o2"), *QUIET]) == 2


def test_regrade_keeps_every_other_row_and_says_so(graded, tmp_path, capsys):
    _, out, subs = graded
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    before = _rows(copy)
    broken = tmp_path / "again" / "plain"
    shutil.copytree(ROOT / "exercises", broken)  # the same student, now with stubs
    assert cli.main([str(broken), "--out", str(copy), "--exercise", "commit_turn", *QUIET]) == 0
    err = capsys.readouterr().err
    assert "обновлено строк 1, добавлено 0, прежних строк сохранено 3" in err
    assert "продолжает папку plain" in err  # a new download of the same hand-in, and it says so
    after = _rows(copy)
    assert set(after) == set(before)
    for name in set(before) - {"plain"}:
        assert after[name] == before[name]
    plain = after["plain"]
    assert plain["commit_turn"] == "0.00" and plain["build_chat_messages"] == "10.00"
    assert float(plain["score"]) == TOTAL_POINTS - 10
    assert not [p for p in copy.iterdir() if p.name.endswith(".tmp")]


def test_parallel_shards_share_one_output_folder(tmp_path):
    subs = tmp_path / "subs"
    for index in range(4):
        folder = subs / f"s{index}"
        folder.mkdir(parents=True)
        shutil.copyfile(ROOT / "solutions" / "commit_turn.py", folder / "commit_turn.py")
    out = tmp_path / "out"
    codes = []

    def shard(names):
        codes.append(cli.main([*(str(subs / n) for n in names), "--out", str(out), "--exercise",
                               "commit_turn", "--jobs", "1", *QUIET]))  # fmt: skip

    threads = [threading.Thread(target=shard, args=(names,)) for names in (["s0", "s1"], ["s2", "s3"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [0, 0]
    assert sorted(_rows(out)) == ["s0", "s1", "s2", "s3"]


def test_nothing_before_publication_reveals_hidden_outcomes(tmp_path):
    # Passes every public case of select_recent_turns, fails hidden ones.
    sub = tmp_path / "s"
    sub.mkdir()
    source = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8")
    (sub / "select_recent_turns.py").write_text(
        source.replace("    if not _is_int(available_tokens):", "    if type(available_tokens) not in (int, bool):")
    )
    for visibility in ("after_published", "hidden", "after_due_date"):
        out = tmp_path / visibility
        assert cli.main([str(sub), "--out", str(out), "--exercise", "select_recent_turns",
                         "--hidden-visibility", visibility, *QUIET]) == 0  # fmt: skip
        results = json.loads((out / "s" / "results.json").read_text(encoding="utf-8"))
        feedback = (out / "s" / "feedback.md").read_text(encoding="utf-8")
        visible = [t for t in results["tests"] if t["visibility"] == "visible"]
        assert visible and all(t["extra_data"]["kind"] == "public" for t in visible)
        seen = json.dumps([results["output"], visible, results["extra_data"]], ensure_ascii=False) + feedback
        hidden_names = [t["extra_data"]["case"] for t in results["tests"] if t["extra_data"]["kind"] == "hidden"]
        # A hidden name as a whole (quoted in JSON or «…» in feedback); a public case may be named
        # after a hidden one ("… (открытый пример)").
        assert not [n for n in hidden_names if f'"{n}"' in seen or f"«{n}»" in seen or f": {n}\"" in seen]
        assert f"{results['score']:g}" not in results["output"].replace(" из ", "|")  # no total
        assert "Итого" not in seen and "скрытые:" not in seen
        assert results["output_format"] == "md" and isinstance(results["execution_time"], int)
    full = (tmp_path / "after_published" / "s" / "feedback_after_publication.md").read_text(encoding="utf-8")
    assert "Итого" in full and "Подсказка" in full
    out = tmp_path / "visible"
    assert cli.main([str(sub), "--out", str(out), "--exercise", "select_recent_turns",
                     "--hidden-visibility", "visible", *QUIET]) == 0  # fmt: skip
    assert "Итого" in (out / "s" / "feedback.md").read_text(encoding="utf-8")
    assert not (out / "s" / "feedback_after_publication.md").exists()


def test_similarity_report_pairs_and_course_code(graded):
    _, out, _ = graded
    with open(out / "similarity.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    pairs = {(r["exercise"], r["submission"], r["other"]) for r in rows if r["kind"] == "submissions"}
    assert ("commit_turn", "bom_crlf", "plain") in pairs  # the same code, BOM and CRLF aside
    assert all(float(r["similarity"]) >= 0.9 for r in rows)


def test_similarity_finds_code_copied_from_course_lib():
    import ast

    from course_lib.checking.catalog import BY_NAME, CourseLayout
    from grader.similarity import MIN_NODES, similarity_rows, tokens

    path = ROOT / "course_lib" / "chat_history.py"
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    function = next(
        node for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and len(tokens(ast.Module([node], []))) >= MIN_NODES
    )  # fmt: skip
    copied = ast.get_source_segment(source, function)
    body = copied.replace(f"def {function.name}(", "def select_recent_turns(", 1)
    if body.startswith("    "):
        body = "\n".join(line[4:] for line in body.splitlines())
    rows = similarity_rows(CourseLayout(ROOT), [BY_NAME["select_recent_turns"]],
                           {"copycat": {"select_recent_turns": body}})  # fmt: skip
    assert any(r[1] == "course_code" and r[2] == "copycat" and "course_lib/chat_history.py" in r[3]
               for r in rows), rows  # fmt: skip
