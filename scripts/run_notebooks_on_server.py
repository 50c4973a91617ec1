"""Execute the course notebooks against a running OpenAI-compatible server and tabulate the errors.

Opt-in, not CI (`bash scripts/real_server.sh notebooks` starts a llama-cpp-python server and calls
this). Each notebook runs top to bottom in a fresh kernel with the settings a student would use for
a local server (LLM_BACKEND=openai, LLM_INSTRUCTION_ROLE=system, no `.env`), continuing after a
failed cell, so one table shows every notebook: code cells, cells run, error cells split into the
course's short Russian message, a later error explained as a consequence of the first one, and a bare
traceback (should be none), and the first error — where JupyterLab's Run All would stop. The details below the table
list every error cell (its index, first source line, exception and message).

The executed copies go to a temporary folder (or --out), never into notebooks/. By default the
notebooks run on a snapshot of the course tree in that folder, so helpers editing the tree, or
another run's `.course-data/`, cannot change a run halfway.

    .venv/bin/python scripts/run_notebooks_on_server.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-0.5b-instruct
    ... --notebooks 04 05        # only these (with their bonus notebooks in notebooks/bonus/)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.russian import plural

ROOT = Path(__file__).resolve().parent.parent
# What a snapshot leaves out: environments, history, tests, outputs of other runs.
SNAPSHOT_IGNORE = shutil.ignore_patterns(
    ".venv", ".venv-llama", ".git", "tests", "artifacts", ".course-data", "node_modules",
    "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "*.egg-info", "grading-output",
)
SHORT_ERROR_MARK = "✘ "  # first line of course_lib.notebook_errors' short form
CONSEQUENCE_MARK = "следствие ошибки"  # notebook_errors.consequence(): explained by the first stop


@dataclass
class CellError:
    index: int  # position among all cells, as Jupyter's "cell N" (0-based)
    execution_count: int | None
    first_line: str
    ename: str
    evalue: str
    short: str | None  # the course's Russian short message, when it was shown

    def summary(self) -> str:
        message = (self.evalue.strip().splitlines() or [""])[0]
        return f"{self.ename}: {message}" if message else self.ename


@dataclass
class NotebookResult:
    name: str
    code_cells: int = 0
    cells_run: int = 0
    errors: list[CellError] = field(default_factory=list)
    seconds: float = 0.0
    aborted: str | None = None  # the kernel died or the run could not go on

    @property
    def short_errors(self) -> int:
        return sum(1 for error in self.errors if error.short)

    @property
    def consequences(self) -> int:
        return sum(1 for error in self.errors if error.short and CONSEQUENCE_MARK in error.short)

    @property
    def raw_errors(self) -> int:
        """Error cells with a bare traceback: neither the course's message nor an explained consequence."""
        return sum(1 for error in self.errors if not error.short)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"),
                        help="the server's OpenAI-compatible URL, with /v1 (default: $OPENAI_BASE_URL)")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL"),
                        help="the model name the server serves (default: $OPENAI_MODEL)")
    parser.add_argument("--notebooks", nargs="*", default=[],
                        help="prefixes or names to run (default: every NN_*.ipynb and bonus/NN_*.ipynb)")
    parser.add_argument("--cell-timeout", type=int, default=600,
                        help="seconds one cell may run before it is interrupted (default 600)")
    parser.add_argument("--out", type=Path, help="folder for the executed copies (default: a new temporary one)")
    parser.add_argument("--no-snapshot", action="store_true",
                        help="run the working tree's course_lib and notebooks instead of a snapshot")
    args = parser.parse_args(argv)
    if not args.base_url:
        parser.error("нужен --base-url (или OPENAI_BASE_URL), например http://127.0.0.1:8080/v1")
    if not args.model:
        parser.error("нужен --model (или OPENAI_MODEL): имя модели на сервере")
    if args.cell_timeout <= 0:
        parser.error("--cell-timeout: нужно положительное число секунд")
    return args


def select_notebooks(folder: Path, wanted: list[str]) -> list[Path]:
    """Every NN_*.ipynb, then the bonus ones (bonus/NN_*.ipynb); a prefix such as 04 takes both."""
    paths = sorted(folder.glob("[0-9][0-9]_*.ipynb")) + sorted(folder.glob("bonus/[0-9][0-9]_*.ipynb"))
    if wanted:
        paths = [p for p in paths if any(p.name == w or p.stem == w or p.name.startswith(w) for w in wanted)]
    return paths


def server_models(base_url: str) -> list[str]:
    """The ids /models lists; raises SystemExit with a Russian message when the server is not there."""
    import httpx

    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=10)
        response.raise_for_status()
        return [item.get("id", "?") for item in response.json().get("data", [])]
    except (httpx.HTTPError, ValueError, AttributeError) as error:
        raise SystemExit(f"Сервер {base_url} не отвечает на /models ({type(error).__name__}: {error}). "
                         "Запустите его: bash scripts/real_server.sh serve") from None


def student_environment(base_url: str, model: str, course_root: Path | None) -> dict[str, str]:
    """What a student sets for a local server; the kernel inherits it."""
    env = dict(os.environ)
    for name in list(env):
        # A developer's own settings must not leak into the run (only the ones set below count).
        if name.startswith(("OPENAI_", "CHAT_", "SUMMARY_", "LLM_", "MEMORY_")) or name in {"MAX_OUTPUT_TOKENS", "MODEL_PRICES"}:
            env.pop(name)
    env.update({
        "LLM_BACKEND": "openai",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "local",
        "OPENAI_MODEL": model,
        "LLM_INSTRUCTION_ROLE": "system",
        # A 0.5B model on two CPU cores writes ~15 tokens/s: a 500-token reply takes longer than the
        # default 30 s. The course's timeout message tells a student to raise it; so does the README.
        "OPENAI_TIMEOUT_SECONDS": "120",
        "COURSE_DOTENV": "0",
    })
    if course_root is not None:
        # Ahead of the editable install's finder, so the kernel imports the snapshot's course_lib.
        env["PYTHONPATH"] = os.pathsep.join([str(course_root), *filter(None, [env.get("PYTHONPATH")])])
    return env


def short_message(cell) -> str | None:
    for output in cell.get("outputs", []):
        text = output.get("data", {}).get("text/plain", "") if output.get("output_type") == "display_data" else ""
        text = "".join(text) if isinstance(text, list) else text
        if text.startswith(SHORT_ERROR_MARK):
            return text
    return None


def run_notebook(path: Path, out_dir: Path, cell_timeout: int) -> NotebookResult:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    result = NotebookResult(path.name, code_cells=sum(1 for c in notebook.cells if c.cell_type == "code"))
    replies: dict[int, dict] = {}

    def on_executed(cell, cell_index, execute_reply):  # noqa: ANN001 - nbclient's hook signature
        replies[cell_index] = execute_reply.get("content", {}) if execute_reply else {}

    client = NotebookClient(
        notebook, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
        interrupt_on_timeout=True, resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False, on_cell_executed=on_executed,
    )
    started = time.perf_counter()
    try:
        client.execute()
    except DeadKernelError as error:
        result.aborted = f"ядро умерло: {error}"
    except Exception as error:  # noqa: BLE001 - report and go on to the next notebook
        result.aborted = f"{type(error).__name__}: {error}"
    result.seconds = time.perf_counter() - started

    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or index not in replies:
            continue
        result.cells_run += 1
        reply = replies[index]
        if reply.get("status") != "error":
            continue
        source = cell.source.strip().splitlines()
        first = next((line for line in source if line.strip() and not line.lstrip().startswith("#")),
                     source[0] if source else "")
        result.errors.append(CellError(index, cell.get("execution_count"), first.strip()[:100],
                                       reply.get("ename", "?"), reply.get("evalue", ""), short_message(cell)))
    nbformat.write(notebook, out_dir / path.name)
    return result


def print_table(results: list[NotebookResult]) -> None:
    header = ("notebook", "code", "run", "errors", "course", "consequence", "raw", "seconds", "first error")
    rows = []
    for r in results:
        first = r.errors[0] if r.errors else None
        first_text = f"[{first.index}] {first.summary()}"[:110] if first else ("—" if not r.aborted else "")
        if r.aborted:
            first_text = (first_text + "; " if first_text else "") + r.aborted[:80]
        rows.append((r.name, str(r.code_cells), str(r.cells_run), str(len(r.errors)),
                     str(r.short_errors - r.consequences), str(r.consequences), str(r.raw_errors),
                     f"{r.seconds:.0f}", first_text))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    line = " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " | " + header[-1]
    print(line)
    print("-" * len(line))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)) + " | " + row[-1])
    print(f"Всего ячеек с ошибкой: {sum(len(r.errors) for r in results)}: сообщение курса "
          f"{sum(r.short_errors - r.consequences for r in results)}, объяснённое следствие первой ошибки "
          f"{sum(r.consequences for r in results)}, голая трассировка {sum(r.raw_errors for r in results)}.\n"
          "Run All в JupyterLab останавливается на первой ошибке (first error); ячейки после неё выполнены "
          "здесь, чтобы проверить, что каждая следующая ошибка объяснена.\n"
          "[N] — номер ячейки в ноутбуке с нуля, текстовые ячейки тоже считаются.")


def print_details(results: list[NotebookResult]) -> None:
    for r in results:
        for error in r.errors:
            print(f"\n{r.name} cell [{error.index}] (In [{error.execution_count}]): {error.first_line}")
            print(f"    {error.ename}: {' '.join(error.evalue.split())[:600]}")
            if error.short:
                for text in error.short.splitlines()[:4]:
                    print(f"    | {text[:300]}")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    models = server_models(args.base_url)
    if args.model not in models:
        print(f"Внимание: сервер отдаёт модели {models}, а не «{args.model}» (llama.cpp отвечает любой из них).")
    work = Path(tempfile.mkdtemp(prefix="notebooks-on-server-"))
    out_dir = args.out or work / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.no_snapshot:
        course_root, notebooks_dir = None, ROOT / "notebooks"
    else:
        course_root = work / "course"
        shutil.copytree(ROOT, course_root, ignore=SNAPSHOT_IGNORE, symlinks=True)
        notebooks_dir = course_root / "notebooks"
    paths = select_notebooks(notebooks_dir, args.notebooks)
    if not paths:
        print(f"Ноутбуки не найдены: {' '.join(args.notebooks) or notebooks_dir}", file=sys.stderr)
        return 1
    os.environ.clear()
    os.environ.update(student_environment(args.base_url, args.model, course_root))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print(f"{stamp}: {plural(len(paths), ('ноутбук', 'ноутбука', 'ноутбуков'))}, сервер {args.base_url}, модель {args.model}, "
          f"{'снимок дерева ' + str(course_root) if course_root else 'рабочее дерево'}", flush=True)
    results = []
    for path in paths:
        result = run_notebook(path, out_dir, args.cell_timeout)
        results.append(result)
        print(f"  {result.name}: {result.cells_run}/{result.code_cells} ячеек, ошибок {len(result.errors)}, "
              f"{result.seconds:.0f} с", flush=True)
    print()
    print_table(results)
    print_details(results)
    print(f"\nВыполненные копии: {out_dir}")
    return 0 if all(not r.errors and not r.aborted for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
