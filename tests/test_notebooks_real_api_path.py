"""Every notebook also runs on the real-API code path: a key set, `OPENAI_BASE_URL` pointing at a
loopback HTTP server. nbval checks the offline path against stored outputs; this test proves that
nothing in the notebooks depends on the offline backend (its `offline_model` handle, its labels).

The server answers with the offline model's logic over real HTTP, so the run stays deterministic
and offline; only the transport and the backend the course sees are those of a real provider.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.llm.offline import OfflineModel

# Notebook 06 compares strategies on the offline model on purpose (reproducible figures; full history
# over 200 turns costs over a million input tokens), and says so in its prose.
OFFLINE_BY_DESIGN = {"06_comparing_strategies"}
NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_against_an_openai_compatible_server(
    path: Path, compatible_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The kernel inherits this environment: a key means `auto` picks the real-API backend.
    monkeypatch.setenv("OPENAI_API_KEY", "local-compatible-server-key")
    monkeypatch.setenv("OPENAI_BASE_URL", compatible_server)
    monkeypatch.setenv("LLM_BACKEND", "auto")
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("COURSE_DOTENV", "0")
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "course-data"))  # nbval may run it right now
    notebook = nbformat.read(path, as_version=4)  # executed in memory: the file is not rewritten
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    calls_before = _CompatibleServer.model.calls
    client.execute()  # raises CellExecutionError with the failing cell and its traceback
    if path.stem not in OFFLINE_BY_DESIGN:
        assert _CompatibleServer.model.calls > calls_before, "the notebook never reached the server"
