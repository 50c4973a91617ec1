"""Reading a submission folder: regular files only, no symlinks, hard links noticed.

A submission folder that is itself a symlink is refused (it could point at solutions/); so is an
exercise file that is a symlink, or a hard link to a file of the course tree (solutions, hidden
cases, stubs) when the submission lives outside that tree. Any other file with more than one hard
link is graded but flagged ("hard_link"), since two students' files may be the same file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.grading.catalog import CourseLayout, Exercise
from course_lib.grading.results import Failure

MAX_SOURCE_BYTES = 512 * 1024


@dataclass
class SourceFile:
    source: str | None
    failure: Failure | None = None
    flags: tuple[str, ...] = ()


@dataclass
class Submission:
    """An opened submission folder (never followed through a symlink)."""

    path: Path
    problem: Failure | None = None  # the whole folder is refused or missing
    course_files: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    _fd: int | None = None

    @classmethod
    def open(cls, path: Path, layout: CourseLayout | None = None) -> Submission:
        path = Path(os.path.abspath(path))  # no resolve(): the last component must stay as given
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return cls(path, Failure("missing", "папка работы не найдена"))
        except OSError as error:
            if path.is_symlink():
                return cls(path, Failure("missing", "папка работы — символическая ссылка"))
            return cls(path, Failure("missing", f"папка работы не читается: {error.strerror}"))
        inside_course = layout is not None and path.is_relative_to(layout.root)
        files = frozenset() if layout is None or inside_course else _course_inodes(layout)
        return cls(path, None, files, fd)

    def read(self, exercise: Exercise) -> SourceFile:
        if self.problem is not None:
            return SourceFile(None, self.problem)
        return read_source(self._fd, exercise, self.course_files)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _course_inodes(layout: CourseLayout) -> frozenset[tuple[int, int]]:
    found = set()
    for folder in (layout.solutions_dir, layout.hidden_cases_dir, layout.exercises_dir):
        for path in folder.glob("*"):
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.add((info.st_dev, info.st_ino))
    return frozenset(found)


def read_source(
    dir_fd: int, exercise: Exercise, course_files: frozenset[tuple[int, int]] = frozenset()
) -> SourceFile:
    """`<name>.py` in the opened folder: a regular file, not a symlink, UTF-8, of sane size."""
    name = f"{exercise.name}.py"
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return SourceFile(None, Failure("missing", f"нет файла {name}"))
    except OSError as error:
        try:
            is_link = stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
        except OSError:
            is_link = False
        if is_link:
            return SourceFile(None, Failure("missing", f"{name} — символическая ссылка, а не файл"))
        return SourceFile(None, Failure("missing", f"файл {name} не читается: {error.strerror}"))
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
    try:
        return SourceFile(data.decode("utf-8"), None, flags)
    except UnicodeDecodeError:
        return SourceFile(None, Failure("syntax_error", f"файл {name} не в кодировке UTF-8"), flags)


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
