"""Reading one zip member with every byte bounded: what is produced, not what the archive declares.

`zipfile` trusts the sizes an archive declares and decompresses bzip2 and lzma members without an
output limit: a 500-byte member that declares 1 000 bytes can expand to gigabytes inside the grader.
Here the compressed bytes are read from the local header onwards in small chunks and fed to a
decompressor with an explicit output budget (`max_length`), for every supported method (stored,
deflate, bzip2, lzma); reading stops as soon as the output passes the limit. The grader's memory for
one member is therefore about one chunk plus the limit, plus the decompressor's own state, which is
bounded too (bzip2: ~4 MB at most; lzma: the dictionary size the member declares, refused over
`MAX_LZMA_DICT`).

A damaged member (bad header, corrupt or truncated data, wrong CRC, a size that differs from the one
declared) is that submission's status with a Russian message, never an exception for the batch.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
import zlib

from course_lib.checking.results import Failure

CHUNK = 64 * 1024
MAX_LZMA_DICT = 64 * 1024 * 1024
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


class _Damaged(Exception):
    """The member's data cannot be what it claims to be (message: a short Russian reason)."""


class _TooLarge(Exception):
    pass


class _Stored:
    eof = False
    needs_input = True

    def decompress(self, data: bytes, max_length: int) -> bytes:
        return data  # the caller's budget check catches anything over the limit


class _Deflate:
    """zlib's raw deflate with the bzip2/lzma interface: unconsumed input waits for the next call."""

    def __init__(self) -> None:
        self._inner = zlib.decompressobj(-15)
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._inner.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        data = self._inner.unconsumed_tail + data
        out = self._inner.decompress(data, max_length)
        self.needs_input = not self._inner.unconsumed_tail
        return out


class _ZipLzma:
    """Zip's lzma layout: 2 bytes version, 2 bytes properties size, the properties, raw LZMA1 data."""

    def __init__(self) -> None:
        self._header = b""
        self._inner: lzma.LZMADecompressor | None = None
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._inner is not None and self._inner.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if self._inner is None:
            self._header += data
            if len(self._header) < 4:
                return b""
            size = struct.unpack("<H", self._header[2:4])[0]
            if len(self._header) < 4 + size:
                return b""
            properties = self._header[4 : 4 + size]
            data = self._header[4 + size :]
            self._header = b""
            try:
                filter_ = lzma._decode_filter_properties(lzma.FILTER_LZMA1, properties)
            except (lzma.LZMAError, ValueError) as error:
                raise _Damaged("неверные параметры сжатия lzma") from error
            if filter_.get("dict_size", 0) > MAX_LZMA_DICT:
                raise _Damaged("словарь lzma больше 64 МБ")
            self._inner = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[filter_])
        out = self._inner.decompress(data, max_length)
        self.needs_input = self._inner.needs_input
        return out


class _Bzip2:
    def __init__(self) -> None:
        self._inner = bz2.BZ2Decompressor()
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._inner.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        out = self._inner.decompress(data, max_length)
        self.needs_input = self._inner.needs_input
        return out


DECOMPRESSORS = {
    zipfile.ZIP_STORED: _Stored,
    zipfile.ZIP_DEFLATED: _Deflate,
    zipfile.ZIP_BZIP2: _Bzip2,
    zipfile.ZIP_LZMA: _ZipLzma,
}


def _data_offset(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    fp = archive.fp
    if fp is None:
        raise _Damaged("архив закрыт")
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise _Damaged("обрезан заголовок файла")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_SIGNATURE:
        raise _Damaged("испорчен заголовок файла")
    return info.header_offset + _LOCAL_HEADER.size + fields[10] + fields[11]


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    factory = DECOMPRESSORS.get(info.compress_type)
    if factory is None:
        raise _Damaged(f"неподдерживаемый способ сжатия ({info.compress_type})")
    decompressor = factory()
    offset = _data_offset(archive, info)
    remaining = info.compress_size
    out = bytearray()
    fp = archive.fp
    while remaining > 0 and not decompressor.eof:
        fp.seek(offset)
        chunk = fp.read(min(CHUNK, remaining))
        if not chunk:
            raise _Damaged("архив обрезан")
        offset += len(chunk)
        remaining -= len(chunk)
        data = chunk
        while True:
            try:
                out += decompressor.decompress(data, limit + 1 - len(out))
            except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as error:
                raise _Damaged("испорчены сжатые данные") from error
            if len(out) > limit:
                raise _TooLarge
            data = b""
            if decompressor.eof or decompressor.needs_input:
                break
    if info.compress_type != zipfile.ZIP_STORED and not decompressor.eof:
        raise _Damaged("сжатые данные обрываются")
    return bytes(out)


def read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, shown_name: str, limit: int
) -> tuple[bytes | None, Failure | None]:
    """The member's bytes, or why it cannot be graded (status "crash" if over `limit`, else "missing")."""
    too_large = Failure("crash", f"файл {shown_name} больше {limit // 1024} КБ")
    if info.file_size > limit:
        return None, too_large
    try:
        data = _inflate(archive, info, limit)
        if len(data) != info.file_size:
            raise _Damaged("размер не совпадает с записанным в архиве")
        if zlib.crc32(data) != info.CRC:
            raise _Damaged("не сходится контрольная сумма")
    except _TooLarge:
        return None, too_large
    except _Damaged as reason:
        return None, Failure(
            "missing", f"{shown_name} в архиве повреждён ({reason}): соберите архив заново и сдайте ещё раз"
        )
    except (OSError, ValueError) as error:
        return None, Failure("missing", f"{shown_name} в архиве не читается: {type(error).__name__}")
    return data, None
