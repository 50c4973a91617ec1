"""`OfflineTransport`: the HTTP layer between the openai SDK and the `OfflineModel`.

The SDK builds a real HTTP request and hands it to its httpx2 client; this transport answers it in
the process instead of opening a socket. Only `POST /v1/chat/completions` exists; any other route is
a 404 with a JSON error, as on a real server. The model's network faults become httpx2's own
exceptions, which the SDK turns into `openai.APITimeoutError` / `openai.APIConnectionError`.
"""

from __future__ import annotations

import json

import httpx2

from course_lib.llm.offline.faults import SimulatedConnectionError, SimulatedTimeout
from course_lib.llm.offline.model import OfflineModel, OfflineResponse

OFFLINE_BASE_URL = "http://offline-teaching-model.invalid/v1"
"""The base URL the SDK is given. `.invalid` can never resolve, so nothing can leave the machine."""
CHAT_COMPLETIONS_PATH = "/v1/chat/completions"


class OfflineTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Serves the SDK's requests from an `OfflineModel` (sync and async clients alike)."""

    def __init__(self, model: OfflineModel) -> None:
        self.model = model

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, request.read())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._respond(request, await request.aread())

    def _respond(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        if request.method != "POST" or request.url.path != CHAT_COMPLETIONS_PATH:
            result = OfflineResponse(
                404,
                {
                    "error": {
                        "message": f"Маршрут {request.method} {request.url.path} не найден: офлайн-модель "
                        f"отвечает только на POST {CHAT_COMPLETIONS_PATH}.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "not_found",
                    }
                },
            )
        else:
            try:
                result = self.model.complete(body)
            except SimulatedTimeout as fault:
                raise httpx2.ReadTimeout(str(fault), request=request) from None
            except SimulatedConnectionError as fault:
                raise httpx2.ConnectError(str(fault), request=request) from None
        return httpx2.Response(
            result.status_code,
            headers={"content-type": "application/json"},
            content=json.dumps(result.body, ensure_ascii=False).encode("utf-8"),
            request=request,
        )
