"""Getting each student's feedback file back to them through the LMS (written with the gradebook).

* **Moodle** — `feedback-moodle.zip`, for the assignment's View all submissions → Grading action →
  "Upload multiple feedback files in a zip" (the assignment needs the "Feedback files" type). Moodle's
  importer (`assignfeedback_file_zip_importer`) reads each path part as
  `fullname_participantid_plugintype_pluginname_` and attaches the file to the participant with that
  id: the number in the folder names of the assignment's own "Download submissions". So a student's
  file goes in `<name>_<participant id>_assignfeedback_file_/feedback.md`, and only submissions
  graded from such folders can be placed; the others are listed, never guessed.
* **Canvas** — its gradebook CSV import reads grades only, no comments, and its "Re-Upload
  Submissions" accepts only files named after an attachment of the student's own submission (and
  shows them under that attachment's name). So `feedback-canvas/` holds one file per roster student
  with a submission, named `<Student>_<Canvas ID>_feedback.md` (the name and ID of the gradebook's
  row): attach it to a comment on that student's submission in SpeedGrader.
* **Gradescope** shows each submission's `results.json` itself; nothing to deliver.

`which` picks the file: `feedback.md` (what the student may see now: hidden cases concealed by
default) or `feedback_after_publication.md` (hidden names and hints, after you publish).
"""

from __future__ import annotations

import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.roster import CANVAS_FILE, MOODLE_FOLDER, Matching, Roster, download_names

WHICH = {"now": "feedback.md", "after-publication": "feedback_after_publication.md"}
MOODLE_ZIP = "feedback-moodle.zip"
CANVAS_FOLDER = "feedback-canvas"
_UNSAFE = re.compile(r'[\x00-\x1f/\\:*?"<>|_]+')  # and "_": Moodle splits a path part on it


@dataclass
class FeedbackPackage:
    path: Path
    delivered: int = 0
    not_placed: list[str] = field(default_factory=list)  # submissions the LMS could not be told about


def _feedback_file(out: Path, submission: str, which: str) -> Path | None:
    folder = out / submission
    wanted = folder / WHICH[which]
    if wanted.is_file():
        return wanted
    plain = folder / WHICH["now"]  # with hidden results visible there is one file only
    return plain if plain.is_file() else None


def _safe(text: str) -> str:
    return " ".join(_UNSAFE.sub(" ", text).split())[:80] or "student"


def _moodle_participant(name: str, source: str) -> tuple[str, str] | None:
    """(name, participant id) from a Moodle download folder's name, the submission's or its source's."""
    for stem in download_names(name, source):
        found = MOODLE_FOLDER.match(stem)
        if found:
            return found.group("name"), found.group("participant")
    return None


def _replace_atomically(path: Path, write) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def moodle_zip(out: Path, grades: list[dict[str, str]], which: str = "now") -> FeedbackPackage:
    package = FeedbackPackage(out / MOODLE_ZIP)
    members: dict[str, Path] = {}
    for row in grades:
        submission, source = row["submission"], row.get("source", "")
        feedback = _feedback_file(out, submission, which)
        found = _moodle_participant(submission, source)
        if feedback is None or found is None:
            package.not_placed.append(submission)
            continue
        name, participant = found
        members[f"{_safe(name)}_{participant}_assignfeedback_file_/{WHICH['now']}"] = feedback

    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for member, feedback in sorted(members.items()):
                archive.writestr(member, feedback.read_bytes())

    package.delivered = len(members)
    if members:
        _replace_atomically(package.path, write)
    else:  # no submission came from Moodle's download: an old zip would look current
        package.path.unlink(missing_ok=True)
    return package


def canvas_folder(out: Path, roster: Roster, grades: list[dict[str, str]], matching: Matching,
                  which: str = "now") -> FeedbackPackage:  # fmt: skip
    """`matching`: the gradebook's own (lms.write_gradebook), so a file goes to the row with the grade."""
    package = FeedbackPackage(out / CANVAS_FOLDER)
    files: dict[str, bytes] = {}
    for row in grades:
        submission = row["submission"]
        number = matching.student_of.get(submission)
        feedback = _feedback_file(out, submission, which)
        if number is None or feedback is None:
            package.not_placed.append(submission)
            continue
        student = roster.students[number]
        key = (student.get("canvas_id") or _canvas_id(submission, row.get("source", ""))
               or student.get("sis_login_id") or student.get("sis_user_id"))  # fmt: skip
        files[f"{_safe(student.get('name') or student.display_name)}_{_safe(key)}_feedback.md"] = feedback.read_bytes()
    package.path.mkdir(exist_ok=True)
    for stale in package.path.glob("*_feedback.md"):  # a regrade may have renamed or dropped one
        if stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        target = package.path / name
        if not target.is_file() or target.read_bytes() != data:
            _replace_atomically(target, lambda path, data=data: path.write_bytes(data))
    package.delivered = len(files)
    return package


def _canvas_id(name: str, source: str) -> str:
    for stem in download_names(name, source):
        found = CANVAS_FILE.match(stem)
        if found:
            return found.group("canvas_id")
    return ""


def write_package(out: Path, lms: str, roster: Roster, grades: list[dict[str, str]], matching: Matching,
                  which: str = "now") -> FeedbackPackage:  # fmt: skip
    if lms == "moodle":
        return moodle_zip(out, grades, which)
    return canvas_folder(out, roster, grades, matching, which)
