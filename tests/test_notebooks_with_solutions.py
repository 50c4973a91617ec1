"""With every exercise solved, the notebooks run on the student's code, and on the real-API path.

The course folder is copied, the reference solutions are put into its exercises/ (as a student who
solved everything would have them), and every notebook is executed top to bottom in a fresh kernel.
Each must run without an error, and every exercise it takes through `your_code(...)` must be
announced as the student's ("✔ <name>: работает ваш…"), never as the course's fallback ("↪ <name>:").
The fill-in cells stay as shipped (`raise NotImplementedError`): their fallback is the course's lines,
which must still compose the student's exercises (02's `save_validated_turn` commits with the
student's `commit_turn`). A line is not proof that code ran, so after the notebook one more cell asks
the kernel how many calls each stand-in made per implementation (`calls_so_far()`): every exercise
the notebook announces must have run the student's code at least once, and the course's never.
The stub configuration (the stored outputs) is checked by nbval over notebooks/.

The same pass runs with a key set and `OPENAI_BASE_URL` pointing at a loopback HTTP server: nothing in
the notebooks may depend on the offline backend (its `offline_model` handle, its labels). The server
answers with the offline model's logic over real HTTP, so the run stays deterministic and offline;
only the transport and the backend the course sees are those of a real provider. (One pass, not two:
each notebook pass costs about 25 s of CPU, and neither check depends on the other's configuration.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.checking.catalog import EXERCISES, get_exercise
from course_lib.llm.offline import OfflineModel
from notebook_text import ALL_NOTEBOOKS, BONUS_NOTEBOOKS, notebook_name

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ALL_NOTEBOOKS  # the bonus notebooks run on the student's code too
# 00 runs no exercise (01's first is check_reply, issue 29); notebook 06 compares strategies on the offline model on purpose
# (reproducible figures; full history over 200 turns costs over a million input tokens), and its
# prose says so, as do its bonus notebooks; 01's bonus builds the library's app on the offline model
# to schedule a fault. A bonus notebook need not take an exercise through your_code (most import the
# main notebook's classes from course_lib.steps), but every one it takes must run the student's code.
NO_EXERCISES = {"00"}
OFFLINE_BY_DESIGN = {"06_comparing_strategies", "06_strategy_code", "06_cost_and_cache", "01_course_lib_service",
                     "10_measuring_memory"}  # 10: the benchmark's runs are offline; the real model's run is stored
USES = re.compile(r"""your_code\(\s*["'](\w+)["']""")
CALLS_MARK = "calls so far: "
# Appended to the notebook for this run only: what each stand-in ran, counted in the kernel itself.
ASK_THE_KERNEL = f"""
import json
from course_lib.your_code import calls_so_far
print({CALLS_MARK!r} + json.dumps(calls_so_far()))
"""
IGNORED = {".git", ".venv", ".pytest_cache", "artifacts", "__pycache__", ".course-data", "node_modules"}


class _CompatibleServer(BaseHTTPRequestHandler):
    model = OfflineModel()

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        response = self.model.complete(body)
        self._send(response.status_code, response.body)

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:  # keep pytest's output clean
        pass


@pytest.fixture(scope="module")
def compatible_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CompatibleServer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def solved_course(tmp_path_factory):
    course = tmp_path_factory.mktemp("solved") / "course"
    shutil.copytree(ROOT, course, ignore=lambda folder, names: [n for n in names if n in IGNORED])
    for exercise in EXERCISES:
        shutil.copy(ROOT / "solutions" / f"{exercise.name}.py", course / "exercises" / f"{exercise.name}.py")
    # Notebook 10's challenge has no reference: a student's strategy that keeps the contract stands in.
    shutil.copy(ROOT / "tests" / "support" / "my_strategy_pinned.py", course / "exercises" / "my_strategy.py")
    return course


def _text_outputs(cells) -> str:
    """The streams and text/plain results of these cells."""
    parts = []
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(str(output["data"].get("text/plain", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_name)
def test_the_notebook_runs_on_the_students_code(solved_course, compatible_server, path, tmp_path):
    copy = solved_course / path.relative_to(ROOT)
    notebook = nbformat.read(copy, as_version=4)
    used = {get_exercise(name, challenges=True).name for cell in notebook.cells if cell.cell_type == "code"
            for name in USES.findall(cell.source)}
    if path not in BONUS_NOTEBOOKS:
        assert bool(used) != (path.name[:2] in NO_EXERCISES), f"{path.name}: exercises run through your_code(): {used}"
    fill_ins = [cell.source for cell in notebook.cells if cell.cell_type == "code" and "try_fill_in(" in cell.source]
    notebook.cells.append(nbformat.v4.new_code_cell(ASK_THE_KERNEL))
    # The kernel inherits this environment: a key means `auto` picks the real-API backend.
    env = {**os.environ, "LLM_BACKEND": "auto", "OPENAI_API_KEY": "local-compatible-server-key",
           "OPENAI_BASE_URL": compatible_server, "OPENAI_MAX_RETRIES": "0",
           "COURSE_DOTENV": "0", "OFFLINE_STREAM_CHARS_PER_SECOND": "0",
           "COURSE_DATA_DIR": str(tmp_path / "course-data")}  # nbval may run this notebook right now
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(copy.parent)}})
    old_env = dict(os.environ)
    os.environ.update(env)
    calls_before = _CompatibleServer.model.calls
    try:
        client.execute()  # raises CellExecutionError on the first error, with the cell and traceback
    finally:
        os.environ.clear()
        os.environ.update(old_env)
    if path.stem not in OFFLINE_BY_DESIGN:
        assert _CompatibleServer.model.calls > calls_before, "the notebook never reached the server"
    asked = _text_outputs([notebook.cells.pop()])
    calls = json.loads(asked[asked.index(CALLS_MARK) + len(CALLS_MARK):])
    text = _text_outputs(notebook.cells)
    for name in sorted(used):
        assert re.search(rf"✔ {name}: работает ваш", text), f"{path.name}: no line says {name} ran the student's code"
        assert f"↪ {name}:" not in text, f"{path.name}: {name} fell back to the course's version"
        ran = calls.get(name, {})
        assert ran.get("yours", 0) > 0, f"{path.name}: the student's {name} never ran ({ran or 'no calls'})"
        assert ran.get("course", 0) == 0, f"{path.name}: the course's {name} ran too ({ran})"
    # The fill-ins were left empty: each announced the course's lines, and the checks above passed anyway.
    assert text.count("ячейка ещё не заполнена") == len(fill_ins), f"{path.name}: a fill-in was not left empty"
