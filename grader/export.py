"""`course-grader export FOLDER --lms moodle|canvas --roster roster.csv`: a gradebook from an existing
grading output folder (its grades.csv), without grading anything again.

`grade --roster … --lms …` does the same after grading and remembers the settings in
FOLDER/.state/lms/<lms>.json, one file per LMS (a subfolder: `.state/<name>.json` is a submission's,
and a student may be called "gradebook"): a later `grade` into that folder (a regrade, a late
submission) rewrites every gradebook there (a Moodle and a Canvas one alike) from the updated
grades.csv, so a gradebook never looks fresh while its grades are stale. When that is impossible
(the roster was moved or changed, no settings remembered) that gradebook is removed and the
command says how to export again.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.feedback_delivery import WHICH, write_package
from grader.gradebook import SheetError, read_sheet
from grader.invocation import command_name, full_path
from grader.lms import RAW, Gradebook, moodle_warning, write_gradebook
from grader.roster import RosterError, read_roster
from course_lib.checking.safetext import one_line

STATE = Path(".state")
LEGACY_SETTINGS = STATE / "gradebook.json"  # one LMS only, as written before per-LMS files


def settings_path(lms: str) -> Path:
    return STATE / "lms" / f"{lms}.json"


SCALE_WORDS = {"percent": 100.0, "проценты": 100.0, "%": 100.0}


@dataclass
class ExportSettings:
    lms: str
    roster: str  # absolute path
    assignment: str = "Упражнения курса"
    assignment_id: str | None = None
    scale: float | str | None = None  # None: the LMS's default (Moodle 0…100), "raw": the points
    keep_missing: bool = False
    feedback: str = "now"  # feedback_delivery.WHICH: feedback.md, or the after-publication file


def parse_scale(text: str) -> float | str:
    """`--scale 100`, `--scale percent`, or `--scale raw` (the points as they are)."""
    if text.strip().lower() in (RAW, "баллы"):
        return RAW
    if text.strip().lower() in SCALE_WORDS:
        return SCALE_WORDS[text.strip().lower()]
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--scale: число (например 100), percent или raw, а не {text!r}")
    if not 0 < value <= 10_000:
        raise argparse.ArgumentTypeError("--scale: число больше 0")
    return value


def add_gradebook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--roster", type=Path, help="список студентов (CSV из Canvas или Moodle)")
    parser.add_argument("--lms", choices=["canvas", "moodle"], help="формат журнала для импорта")
    parser.add_argument("--assignment", default="Упражнения курса", help="название задания в журнале LMS")
    parser.add_argument("--assignment-id", help="id задания в Canvas: столбец «Название (id)»")
    parser.add_argument(
        "--scale", type=parse_scale,
        help="шкала оценок 0…N (например 100 или percent) или raw — баллы как есть; для Moodle по "
        "умолчанию 100: его импорт не принимает оценки больше 100",
    )
    parser.add_argument(
        "--keep-missing", action="store_true",
        help="Moodle: оставить в файле студентов без оценки (пустая ячейка сотрёт оценку, выставленную вручную)",
    )
    parser.add_argument(
        "--feedback", choices=sorted(WHICH), default="now",
        help="какой отзыв упаковать для LMS: now — feedback.md (скрытые тесты скрыты), after-publication — "
        "feedback_after_publication.md (с именами и подсказками скрытых тестов, после публикации)",
    )  # fmt: skip


def export(out: Path, settings: ExportSettings, roster=None) -> Gradebook:
    """Write the gradebook from out/grades.csv; SheetError / RosterError change nothing."""
    rows, _ = read_sheet(out / "grades.csv")
    if roster is None:
        roster = read_roster(Path(settings.roster))
    gradebook = write_gradebook(
        out, settings.lms, roster, rows, settings.assignment, settings.assignment_id, settings.scale,
        settings.keep_missing,
    )
    gradebook.feedback = write_package(out, settings.lms, roster, rows, gradebook.matching, settings.feedback)
    remember(out, settings)
    return gradebook


def remember(out: Path, settings: ExportSettings) -> None:
    path = out / settings_path(settings.lms)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(settings), ensure_ascii=False, indent=1), encoding="utf-8")


def _remembered(out: Path, lms: str) -> ExportSettings:
    """The settings the gradebook for `lms` was last written with (OSError/ValueError/TypeError)."""
    path = out / settings_path(lms)
    if not path.is_file() and (out / LEGACY_SETTINGS).is_file():
        path = out / LEGACY_SETTINGS
    settings = ExportSettings(**json.loads(path.read_text(encoding="utf-8")))
    if settings.lms != lms:
        raise ValueError(f"настройки журнала {lms} не сохранены")
    return settings


def refresh(out: Path, skip: str | None = None) -> tuple[list[Gradebook], list[str]]:
    """After grades.csv changed: rewrite every remembered gradebook (but `skip`, just written), or
    remove one that can no longer be rewritten. (gradebooks, messages about removals)."""
    written: list[Gradebook] = []
    removed: list[str] = []
    for book in sorted(out.glob("gradebook-*.csv")):
        lms = book.stem.removeprefix("gradebook-")
        if lms == skip:
            continue
        try:
            written.append(export(out, _remembered(out, lms)))
        except (OSError, ValueError, TypeError, SheetError, RosterError) as error:
            book.unlink(missing_ok=True)
            removed.append(
                f"Журнал {full_path(book)} удалён: оценки изменились, а пересоздать его не удалось "
                f"({one_line(str(error))[:300]}). Создайте заново: {command_name('export')} "
                f"{full_path(out)} --lms {lms} --roster …"
            )
    return written, removed


def print_gradebook(gradebook: Gradebook, lms: str) -> None:
    err = sys.stderr
    scaled = (
        f"; оценки в шкале 0…{gradebook.scale:g} (балл × {gradebook.scale:g} / {gradebook.course_total:g})"
        if gradebook.scale is not None
        else f"; максимум {gradebook.maximum:g}"
    )
    print(
        f"Журнал для импорта: {full_path(gradebook.path)} (студентов с оценкой: "
        f"{gradebook.matched}{scaled}).",
        file=err,
    )
    if lms == "moodle":
        warning = moodle_warning(gradebook)
        if warning:
            print(warning, file=err)
    elif gradebook.scale is None:
        print(f"В Canvas поставьте заданию Points Possible = {gradebook.maximum:g}.", file=err)
    _print_feedback(gradebook.feedback, lms)
    for title, items in (
        ("Работы, которых нет в списке студентов (в журнал не попали)", gradebook.unmatched_submissions),
        ("Неоднозначно: работа подходит нескольким студентам (оценка не выставлена)", gradebook.ambiguous),
        ("Несколько работ у одного студента (оценка не выставлена)", gradebook.duplicates),
        ("Студенты без работы (в файл не вошли: пустая ячейка стёрла бы в Moodle оценку, выставленную "
         "вручную; --keep-missing оставит их)", gradebook.left_out),
        ("Студенты без работы (оценка пустая)",
         [name for name in gradebook.students_without_submission if name not in gradebook.left_out]),
    ):
        if items:
            print(f"{title}: " + one_line("; ".join(items)), file=err)


def _print_feedback(package, lms: str) -> None:
    if package is None:
        return
    err = sys.stderr
    if lms == "moodle":
        if package.delivered:
            print(f"Отзывы для Moodle: {full_path(package.path)} (файлов отзыва: {package.delivered}). "
                  "В задании: View all submissions → Grading action → Upload multiple feedback files in a zip "
                  "(названия английского интерфейса; в задании должен быть включён тип отзыва Feedback files).",
                  file=err)  # fmt: skip
        if package.not_placed:
            print(f"Не в архиве отзывов Moodle — работа сдана не из папки загрузки Moodle («Имя_номер_"
                  "assignsubmission_file»), номер участника неизвестен; прикрепите их feedback.md вручную: "
                  + one_line("; ".join(package.not_placed)), file=err)  # fmt: skip
    else:
        print(f"Отзывы для Canvas: {full_path(package.path)} (файлов отзыва: {package.delivered}). Импорт "
              "журнала в Canvas не переносит комментарии: прикрепите файл студента к комментарию в SpeedGrader "
              "(в имени файла — имя и ID студента из журнала Canvas).", file=err)  # fmt: skip
        if package.not_placed:
            print("Без файла отзыва для Canvas (работа не сопоставлена со студентом из списка): "
                  + one_line("; ".join(package.not_placed)), file=err)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=command_name("export"),
        description="Журнал оценок для Canvas или Moodle из уже проверенной папки (grades.csv).",
    )
    parser.add_argument("folder", type=Path, help="папка результатов grade (--out), где лежит grades.csv")
    add_gradebook_arguments(parser)
    args = parser.parse_args(argv)
    if not args.roster or not args.lms:
        parser.error("нужны --roster и --lms")
    out = args.folder.resolve()
    if not (out / "grades.csv").is_file():
        print(f"Ошибка: нет {full_path(out / 'grades.csv')} — сначала проверьте работы (grade).",
              file=sys.stderr)  # fmt: skip
        return 2
    if not args.roster.is_file():
        print(f"Ошибка: нет файла со списком студентов: {full_path(args.roster)}", file=sys.stderr)
        return 2
    settings = ExportSettings(
        args.lms, str(args.roster.resolve()), args.assignment, args.assignment_id, args.scale, args.keep_missing,
        args.feedback,
    )
    try:
        gradebook = export(out, settings)
    except (SheetError, RosterError) as error:
        print(f"Ошибка: {error}", file=sys.stderr)
        return 2
    print_gradebook(gradebook, args.lms)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
