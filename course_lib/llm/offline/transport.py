"""`OfflineTransport`: the HTTP layer between the openai SDK and the `OfflineModel`.

The SDK builds a real HTTP request and hands it to its httpx2 client; this transport answers it in
the process instead of opening a socket. Only `POST /v1/chat/completions` exists; any other route is
a 404 with a JSON error, as on a real server. The model's network faults become httpx2's own
exceptions, which the SDK turns into `openai.APITimeoutError` / `openai.APIConnectionError`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx2

from course_lib.llm.offline.faults import SimulatedConnectionError, SimulatedTimeout
from course_lib.llm.offline.model import OfflineModel, OfflineResponse, OfflineStream

OFFLINE_BASE_URL = "http://offline-teaching-model.invalid/v1"
"""The base URL the SDK is given. `.invalid` can never resolve, so nothing can leave the machine."""
CHAT_COMPLETIONS_PATH = "/v1/chat/completions"


class OfflineTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Serves the SDK's requests from an `OfflineModel` (sync and async clients alike)."""

    def __init__(
        self,
        model: OfflineModel,
        *,
        chars_per_second: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`chars_per_second` paces a streamed reply like a real model's (0: as fast as possible),
        so the streaming lesson is visible; `sleep` is injectable for tests."""
        if not chars_per_second >= 0:
            raise ValueError("chars_per_second не может быть отрицательным.")
        self.model = model
        self.chars_per_second = chars_per_second
        self._sleep = sleep

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
        if isinstance(result, OfflineStream):
            return httpx2.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=_ServerSentEvents(result, self.chars_per_second, self._sleep),
                request=request,
            )
        return httpx2.Response(
            result.status_code,
            headers={"content-type": "application/json"},
            content=json.dumps(result.body, ensure_ascii=False).encode("utf-8"),
            request=request,
        )


class _ServerSentEvents(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """An `OfflineStream` as the bytes a provider sends: `data: {...}` events, then `[DONE]`."""

    def __init__(
        self, stream: OfflineStream, chars_per_second: float = 0.0, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._stream = stream
        self._chars_per_second = chars_per_second
        self._sleep = sleep

    def _events(self):
        """(seconds to wait first, bytes) for each event."""
        for index, chunk in enumerate(self._stream.chunks):
            if self._stream.cut_after is not None and index >= self._stream.cut_after:
                raise httpx2.RemoteProtocolError(
                    "Офлайн-модель оборвала поток ответа (учебный сбой stream_cut)."
                )
            yield self._delay(chunk), b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"
        yield 0.0, b"data: [DONE]\n\n"

    def _delay(self, chunk: dict[str, Any]) -> float:
        if not self._chars_per_second:
            return 0.0
        choices = chunk.get("choices") or [{}]
        text = (choices[0].get("delta") or {}).get("content") or ""
        return len(text) / self._chars_per_second

    def __iter__(self):
        for delay, part in self._events():
            if delay:
                self._sleep(delay)
            yield part

    async def __aiter__(self):
        for delay, part in self._events():
            if delay:
                await asyncio.sleep(delay)
            yield part
