"""A minimal OpenAI-compatible /chat/completions on 127.0.0.1 for connection checks in tests.

It answers «готово» and records each call (path, Authorization header, body). `mode` scripts the
failures a settings check must explain: "auth" (401), "no-model" (404), "system-only" (500 for a
`developer` first message, as llama-cpp-python does). For a server with llama.cpp's other quirks
(token counts, streams without usage, faults) use `llamacpp_standin`.

    with FakeOpenAI() as server:
        url = server.base_url          # http://127.0.0.1:PORT/v1
        server.mode = "auth"
        server.calls                   # [{"path": …, "auth": …, "body": {…}}, …]
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

_MODES = ("ok", "auth", "no-model", "system-only")


class FakeOpenAI:
    def __init__(self) -> None:
        self.mode = "ok"
        self.calls: list[dict[str, Any]] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.calls.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                status, reply = fake._answer(body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.mode not in _MODES:
            raise ValueError(f"unknown mode {self.mode!r}")
        if self.mode == "auth":
            return 401, {"error": {"message": "bad key", "type": "invalid_request_error"}}
        if self.mode == "no-model":
            return 404, {"error": {"message": "model not found"}}
        messages = body.get("messages") or [{}]
        if self.mode == "system-only" and messages[0].get("role") == "developer":
            return 500, {"error": {"message": "Input should be 'system' for role developer"}}
        return 200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "?"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "готово"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        }

    def __enter__(self) -> FakeOpenAI:
        # shutdown() waits for one poll of serve_forever: 20 ms, not the default half second.
        serve = {"poll_interval": 0.02}
        threading.Thread(target=self._server.serve_forever, kwargs=serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
