"""Reading a submission as students hand it in: a folder (files at any depth) or a .zip.

An exercise file `<name>.py` is found when it sits exactly once anywhere below the submission
(folders `__MACOSX`, `.ipynb_checkpoints`, `__pycache__` and every dotfile are ignored); twice is
the status "ambiguous", never a guess. Files are decoded as UTF-8 with or without a BOM, and CRLF
line ends become LF. Paths in messages are relative to the submission: never absolute.

Folders: a submission that is itself a symlink is refused (it could point at solutions/); so is an
exercise file that is a symlink, or a hard link to a file of the course tree (solutions, hidden
cases, stubs) when the submission lives outside that tree. Any other file with more than one hard
link is graded but flagged ("hard_link"), since two students' files may be the same file. Every
folder on the way to a file is opened without following symlinks.

Zips are never extracted: the wanted members are read in memory, each bounded. Refused: a zip
larger than 50 MB or with more than 10 000 entries, members with absolute or `..` names (ignored),
symlink members, members over 512 KB, a compression ratio over 200 (a zip bomb), encrypted members.

Hand-ins as they arrive:
* Moodle's "download submissions in folders" (`Имя Фамилия_1234567_assignsubmission_file_/
  handin.zip`): a folder with no exercise file but a zip is graded as that zip, opened exactly like
  a top-level one (read into memory within the 50 MB limit, the same member checks). Several
  different zips are "ambiguous"; byte-identical copies are one.
* Two byte-identical copies of one exercise file are one file, not "ambiguous".
* A notebook (`*.ipynb`) with no exercise file at all: notebooks are not graded; `notice` says so
  once (feedback, grades.csv) and each exercise's message names the notebook.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.archive import read_member
from course_lib.checking.catalog import EXERCISES, CourseLayout, Exercise
from course_lib.checking.results import Failure
from course_lib.checking.source import MAX_SOURCE_BYTES, SourceFile, decode_source, read_source
from grader.roster import CANVAS_FILE, MOODLE_FOLDER

MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_ENTRIES = 10_000
MAX_DEPTH = 20
MAX_RATIO = 200
IGNORED_DIRS = frozenset({"__MACOSX", ".ipynb_checkpoints", "__pycache__"})


def is_ignored(part: str) -> bool:
    return part in IGNORED_DIRS or part.startswith(".")


DAMAGED_ZIP = (
    "архив работы повреждён или скачан не полностью, его не открыть: соберите handin.zip заново "
    "(python -m course_lib handin) и сдайте ещё раз"
)


def submission_kind(path: Path) -> str | None:
    """"folder", "zip", "symlink" (refused at grading, reported per exercise) or None (not usable)."""
    if os.path.islink(path):
        return "symlink"
    if path.is_dir():
        return "folder"
    # A damaged or truncated .zip (an interrupted download) is still that student's hand-in: it gets
    # the status «архив повреждён» in the report instead of stopping the whole batch.
    if path.is_file() and (path.name.lower().endswith(".zip") or zipfile.is_zipfile(path)):
        return "zip"
    return None


def _holds_entry(path: Path, wanted, limit: int) -> bool:
    """Whether one of the first `limit` entries of the folder `path` is `wanted(entry)` (never
    following a link: the folder itself or its entries)."""
    if os.path.islink(path) or not path.is_dir():
        return False
    try:
        with os.scandir(path) as entries:
            for index, entry in enumerate(entries):
                if index >= limit:
                    return False
                if wanted(entry):
                    return True
    except OSError:
        return False
    return False


def moodle_download_root(path: Path, limit: int = 1000) -> bool:
    """True for the folder Moodle's "download submissions in folders" unzips to: its subfolders are the
    students' (`Имя Фамилия_1234567_assignsubmission_file_`). Graded as one hand-in it would take
    every student's files as one student's; the instructor means `grade "Задание 1"/*`."""
    if MOODLE_FOLDER.match(Path(os.path.abspath(path)).name):
        return False
    return _holds_entry(
        path, lambda entry: bool(MOODLE_FOLDER.match(entry.name)) and entry.is_dir(follow_symlinks=False), limit
    )


def canvas_download_root(path: Path, limit: int = 1000) -> bool:
    """True for a folder of Canvas's "Download Submissions" (its files are named
    `<login>_<canvas id>_<id>_<file>`): graded as one hand-in it would be every student's at once."""
    return _holds_entry(
        path, lambda entry: bool(CANVAS_FILE.match(entry.name)) and entry.is_file(follow_symlinks=False), limit
    )


def _ambiguous(name: str, places: list[str]) -> Failure:
    listed = ", ".join(sorted(places)[:5])
    return Failure("ambiguous", f"файл {name} найден несколько раз ({listed}): оставьте один")


@dataclass
class Submission:
    """An opened submission folder (never followed through a symlink) or zip."""

    path: Path
    problem: Failure | None = None  # the whole submission is refused or missing
    course_files: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    _fd: int | None = None
    _places: dict[str, list[str]] = field(default_factory=dict)  # "x.py" -> relative paths
    _zip: zipfile.ZipFile | None = None
    _members: dict[str, list[zipfile.ZipInfo]] = field(default_factory=dict)
    _zips: list[str] = field(default_factory=list)  # zips found in a folder (relative paths)
    _notebooks: list[str] = field(default_factory=list)  # *.ipynb found (relative paths)
    notice: str = ""  # about the hand-in as a whole, for feedback and grades.csv

    @classmethod
    def open(cls, path: Path, layout: CourseLayout | None = None) -> Submission:
        path = Path(os.path.abspath(path))  # no resolve(): the last component must stay as given
        if not os.path.islink(path) and path.is_file():
            return cls._open_zip(path)
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
        submission = cls(path, None, files, fd)
        submission._index_folder()
        if submission.problem is None and not submission._places and submission._zips:
            nested = submission._open_nested_zip()
            if nested is not None:
                return nested
        submission._note_notebooks()
        return submission

    def _open_nested_zip(self) -> Submission | None:
        """The one zip of a Moodle folder, opened like a top-level zip (this folder is closed)."""
        contents: dict[bytes, str] = {}
        for place in self._zips:
            data, failure = self._read_bytes(place, MAX_ZIP_BYTES, "архив работы больше 50 МБ")
            if failure is not None:
                self.close()
                return Submission(self.path, Failure(failure.category, f"{place}: {failure.detail}"))
            contents.setdefault(data, place)
        self.close()
        if len(contents) > 1:
            listed = ", ".join(sorted(contents.values())[:5])
            why = f"в работе несколько разных архивов ({listed}): оставьте один"
            return Submission(self.path, Failure("ambiguous", why))
        data, place = next(iter(contents.items()))
        nested = Submission._from_zip_handle(self.path, io.BytesIO(data))
        if nested.problem is not None:
            nested.problem = Failure(nested.problem.category, f"{place}: {nested.problem.detail}")
        return nested

    def _read_bytes(self, place: str, limit: int, too_large: str) -> tuple[bytes | None, Failure | None]:
        """A regular file below the folder, every directory opened without following symlinks."""
        parts = PurePosixPath(place).parts
        fd = self._fd
        opened = []
        try:
            for part in parts[:-1]:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                opened.append(fd)
            file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            opened.append(file_fd)
            info = os.fstat(file_fd)
            if not stat.S_ISREG(info.st_mode):
                return None, Failure("missing", "не обычный файл")
            if (info.st_dev, info.st_ino) in self.course_files:
                return None, Failure("missing", "жёсткая ссылка на файл курса")
            if info.st_size > limit:
                return None, Failure("crash", too_large)
            chunks, size = [], 0
            while size <= limit:
                chunk = os.read(file_fd, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > limit:
                return None, Failure("crash", too_large)
            return b"".join(chunks), None
        except OSError as error:
            return None, Failure("missing", f"не читается: {error.strerror}")
        finally:
            for handle in opened:
                os.close(handle)

    def _note_notebooks(self) -> None:
        if self.problem is None and self._notebooks and not (self._places or self._members):
            listed = ", ".join(sorted(self._notebooks)[:3])
            self.notice = (
                f"В работе есть ноутбук ({listed}), но нет ни одного файла упражнения .py — "
                "ноутбуки не проверяются. Сдайте файлы exercises/*.py: python -m course_lib handin "
                "соберёт их в handin.zip"
            )

    def _index_folder(self) -> None:
        wanted = {f"{exercise.name}.py" for exercise in EXERCISES}
        seen = 0
        for top, dirs, files in os.walk(self.path, followlinks=False):
            relative = Path(top).relative_to(self.path)
            dirs[:] = sorted(d for d in dirs if not is_ignored(d)) if len(relative.parts) < MAX_DEPTH else []
            seen += len(dirs) + len(files)
            if seen > MAX_ENTRIES:
                self.problem = Failure("crash", f"в работе больше {MAX_ENTRIES} файлов и папок")
                return
            for name in files:
                if name in wanted:
                    self._places.setdefault(name, []).append((relative / name).as_posix())
                elif not is_ignored(name) and name.lower().endswith(".zip"):
                    self._zips.append((relative / name).as_posix())
                elif not is_ignored(name) and name.lower().endswith(".ipynb"):
                    self._notebooks.append((relative / name).as_posix())

    @classmethod
    def _open_zip(cls, path: Path) -> Submission:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as error:
            return cls(path, Failure("missing", f"архив работы не читается: {error.strerror}"))
        handle = os.fdopen(fd, "rb")
        try:
            too_large = os.fstat(handle.fileno()).st_size > MAX_ZIP_BYTES
        except OSError as error:
            handle.close()
            return cls(path, Failure("missing", f"архив работы не читается: {error.strerror}"))
        if too_large:
            handle.close()
            return cls(path, Failure("crash", "архив работы больше 50 МБ"))
        return cls._from_zip_handle(path, handle)

    @classmethod
    def _from_zip_handle(cls, path: Path, handle) -> Submission:
        """A zip from an open binary file (a top-level zip, or a Moodle folder's zip in memory)."""
        try:
            archive = zipfile.ZipFile(handle)
            infos = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as error:
            handle.close()
            return cls(path, Failure("missing", DAMAGED_ZIP))
        if len(infos) > MAX_ENTRIES:
            archive.close()
            return cls(path, Failure("crash", f"в архиве больше {MAX_ENTRIES} файлов"))
        wanted = {f"{exercise.name}.py" for exercise in EXERCISES}
        members: dict[str, list[zipfile.ZipInfo]] = {}
        notebooks: list[str] = []
        for info in infos:
            name = info.filename.replace("\\", "/")
            parts = PurePosixPath(name).parts
            if (
                info.is_dir()
                or not parts
                or name.startswith("/")
                or ":" in parts[0]
                or ".." in parts
                or any(is_ignored(part) for part in parts)
            ):
                continue
            if parts[-1] in wanted:
                members.setdefault(parts[-1], []).append(info)
            elif parts[-1].lower().endswith(".ipynb"):
                notebooks.append(name)
        submission = cls(path, None, frozenset(), None, {}, archive, members)
        submission._notebooks = notebooks
        submission._note_notebooks()
        return submission

    def read(self, exercise: Exercise) -> SourceFile:
        if self.problem is not None:
            return SourceFile(None, self.problem)
        name = f"{exercise.name}.py"
        if self._zip is not None:
            return self._read_member(name)
        places = self._places.get(name, [])
        if len(places) > 1:
            found = [self._read_place(exercise, place) for place in places]
            if all(f.source is not None for f in found) and len({f.source for f in found}) == 1:
                return found[0]  # byte-identical copies (after BOM/CRLF): one file
            return SourceFile(None, _ambiguous(name, places))
        if not places:
            return SourceFile(None, self._missing(name))
        return self._read_place(exercise, places[0])

    def _missing(self, name: str) -> Failure:
        if self._notebooks:
            return Failure("missing", f"нет файла {name}: сдан ноутбук, а проверяются файлы .py")
        return Failure("missing", f"нет файла {name}")

    def _read_place(self, exercise: Exercise, place: str) -> SourceFile:
        name = f"{exercise.name}.py"
        places = [place]
        parts = PurePosixPath(places[0]).parts[:-1]
        fd = self._fd
        opened = []
        try:
            for part in parts:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                opened.append(fd)
        except OSError as error:
            for handle in opened:
                os.close(handle)
            return SourceFile(None, Failure("missing", f"папка с {name} не читается: {error.strerror}"))
        try:
            return read_source(fd, exercise, self.course_files, shown_as=places[0])
        finally:
            for handle in opened:
                os.close(handle)

    def _read_member(self, name: str) -> SourceFile:
        infos = self._members.get(name, [])
        if len(infos) > 1:
            found = [self._read_one_member(name, info) for info in infos]
            if all(f.source is not None for f in found) and len({f.source for f in found}) == 1:
                return found[0]  # byte-identical copies (after BOM/CRLF): one file
            return SourceFile(None, _ambiguous(name, [info.filename for info in infos]))
        if not infos:
            if self._notebooks:
                return SourceFile(None, self._missing(name))
            return SourceFile(None, Failure("missing", f"нет файла {name} в архиве"))
        return self._read_one_member(name, infos[0])

    def _read_one_member(self, name: str, info: zipfile.ZipInfo) -> SourceFile:
        if stat.S_ISLNK(info.external_attr >> 16):
            return SourceFile(None, Failure("missing", f"{name} в архиве — символическая ссылка"))
        if info.flag_bits & 0x1:
            return SourceFile(None, Failure("missing", f"{name} в архиве зашифрован"))
        if info.file_size > MAX_SOURCE_BYTES:
            return SourceFile(None, Failure("crash", f"файл {name} больше 512 КБ"))
        if info.file_size > 4096 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            return SourceFile(None, Failure("crash", f"{name}: подозрительно сильное сжатие (zip-бомба)"))
        data, failure = read_member(self._zip, info, name, MAX_SOURCE_BYTES)  # bounded, never raises
        if failure is not None:
            return SourceFile(None, failure)
        source, failure = decode_source(data, name)
        return SourceFile(source, failure)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._zip is not None:
            fp = self._zip.fp
            self._zip.close()
            if fp is not None:
                fp.close()
            self._zip = None


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
