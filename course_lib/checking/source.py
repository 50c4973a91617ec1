"""Reading one exercise file safely: what `check()` and the grader both do before running it.

The file `<name>.py` is opened without following a symlink, must be a regular file of at most
512 KB, and is decoded as UTF-8 with or without a BOM (CRLF becomes LF). A hard link to a file of
the course tree (solutions, hidden cases, stubs) is refused when the grader names those files.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from course_lib.checking.catalog import Exercise
from course_lib.checking.results import Failure

MAX_SOURCE_BYTES = 512 * 1024


def decode_source(data: bytes, name: str) -> tuple[str | None, Failure | None]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, Failure("syntax_error", f"файл {name} не в кодировке UTF-8")
    return text.replace("\r\n", "\n"), None


@dataclass
class SourceFile:
    source: str | None
    failure: Failure | None = None
    flags: tuple[str, ...] = ()


def read_source(
    dir_fd: int,
    exercise: Exercise,
    course_files: frozenset[tuple[int, int]] = frozenset(),
    shown_as: str | None = None,
) -> SourceFile:
    """`<name>.py` in the opened folder: a regular file, not a symlink, UTF-8 (a BOM and CRLF are
    fine), of sane size. `shown_as` is the relative path messages name (default: the file name)."""
    name = f"{exercise.name}.py"
    file_name = name
    try:
        fd = os.open(file_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return SourceFile(None, Failure("missing", f"нет файла {name}"))
    except OSError as error:
        name = shown_as or name
        try:
            is_link = stat.S_ISLNK(os.lstat(file_name, dir_fd=dir_fd).st_mode)
        except OSError:
            is_link = False
        if is_link:
            return SourceFile(None, Failure("missing", f"{name} — символическая ссылка, а не файл"))
        return SourceFile(None, Failure("missing", f"файл {name} не читается: {error.strerror}"))
    name = shown_as or name
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return SourceFile(None, Failure("missing", f"{name} — не обычный файл"))
        if (info.st_dev, info.st_ino) in course_files:
            return SourceFile(None, Failure("missing", f"{name} — жёсткая ссылка на файл курса"))
        if info.st_size > MAX_SOURCE_BYTES:
            return SourceFile(None, Failure("crash", f"файл {name} больше 512 КБ"))
        data = os.read(fd, MAX_SOURCE_BYTES + 1)
    finally:
        os.close(fd)
    flags = ("hard_link",) if info.st_nlink > 1 else ()
    source, failure = decode_source(data, name)
    return SourceFile(source, failure, flags)


def read_submission_file(folder: Path, exercise: Exercise) -> tuple[str | None, Failure | None]:
    """One file of a folder the student works in (the notebook's check()): (source, failure)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None, Failure("missing", f"нет файла {exercise.name}.py")
    try:
        found = read_source(dir_fd, exercise)
    finally:
        os.close(dir_fd)
    return found.source, found.failure
