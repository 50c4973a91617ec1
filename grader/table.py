"""Reading a CSV as instructors' tools write it: the encoding and the delimiter are detected.

Encodings: UTF-8 with or without a BOM, UTF-16 with a BOM (Excel's "Unicode text"), else cp1251
(what a Russian Excel or Windows tool writes). Delimiters: `,` `;` or tab — the one that splits the
header line into the most columns, outside quotes. A file that still cannot be read raises
`TableError` with a Russian message naming the file, line and column (1-based).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from course_lib.checking.safetext import one_line

DELIMITERS = (",", ";", "\t")
MAX_BYTES = 20 * 1024 * 1024
DELIMITER_NAMES = {",": "запятая", ";": "точка с запятой", "\t": "табуляция"}


class TableError(ValueError):
    """A CSV file that cannot be understood (the message is for the instructor, in Russian)."""


@dataclass
class Table:
    path: Path
    encoding: str  # "utf-8-sig", "utf-8", "utf-16", "cp1251"
    delimiter: str
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line number in the file, cells)

    @property
    def described(self) -> str:
        return f"{self.encoding}, разделитель — {DELIMITER_NAMES[self.delimiter]}"


def where(path: Path, line: int, column: int | None = None) -> str:
    place = f"{one_line(str(path))}, строка {line}"
    return place + (f", столбец {column}" if column else "")


def decode(data: bytes, path: Path) -> tuple[str, str]:
    """(text, encoding name)."""
    if data.startswith(b"\xef\xbb\xbf"):
        encodings = ("utf-8-sig",)
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings = ("utf-16",)
    else:
        encodings = ("utf-8", "cp1251")
    for encoding in encodings:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as error:
            last = error
    before = data[: last.start]
    line = before.count(b"\n") + 1
    column = last.start - (before.rfind(b"\n") + 1) + 1
    raise TableError(
        f"{where(path, line, column)}: файл не в UTF-8 и не в cp1251 (байт 0x{data[last.start]:02x}). "
        "Сохраните его как «CSV UTF-8»."
    )


def _count_outside_quotes(line: str, delimiter: str) -> int:
    count, quoted = 0, False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif char == delimiter and not quoted:
            count += 1
    return count


def sniff_delimiter(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    counts = {d: _count_outside_quotes(first, d) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: (counts[d], d == ","))
    return best


def read_table(path: Path) -> Table:
    """The header and the non-empty rows of a CSV file (see the module's docstring)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise TableError(f"{one_line(str(path))}: не читается: {error.strerror}") from error
    if len(data) > MAX_BYTES:
        raise TableError(f"{one_line(str(path))}: файл больше {MAX_BYTES // 2**20} МБ")
    text, encoding = decode(data, path)
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise TableError(f"{where(path, line)}: в файле нулевой байт — это не CSV")
    delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows: list[tuple[int, list[str]]] = []
    header: list[str] | None = None
    try:
        for cells in reader:
            line = reader.line_num
            cells = [cell.strip() for cell in cells]
            if not any(cells):
                continue
            if header is None:
                header = cells
                continue
            rows.append((line, cells))
    except csv.Error as error:
        raise TableError(f"{where(path, reader.line_num)}: {error}") from error
    if header is None:
        raise TableError(f"{where(path, 1)}: файл пуст — нет строки заголовков")
    return Table(path, encoding, delimiter, header, rows)
