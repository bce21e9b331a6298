"""Drive Django's own ASGI handler as uvicorn would, in-process: scopes without a client
(``--uds``), chunked streaming, and a client that disconnects in the middle of a body."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from django.core.handlers.asgi import ASGIHandler


@dataclass
class Answer:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    complete: bool = False  # the final, empty body message was sent

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


async def asgi_request(
    path: str,
    *,
    method: str = "GET",
    client: tuple[str, int] | None = ("127.0.0.1", 40000),
    headers: dict[str, str] | None = None,
    disconnect_after_chunks: int | None = None,
    on_chunk: Any = None,
) -> Answer:
    """One request through ``ASGIHandler``; ``client=None`` leaves the scope without a client.

    ``disconnect_after_chunks``: the client goes away once that many body
    chunks have arrived (``http.disconnect``), as a browser closing the tab.
    ``on_chunk(answer)`` is awaited after each chunk (to look at the world mid-body).
    """
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
        ],
        "server": ("testserver", 80),
    }
    if client is not None:
        scope["client"] = client
    answer = Answer()
    gone = asyncio.Event()
    sent_request = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            if message.get("body"):
                answer.chunks.append(message["body"])
                if on_chunk is not None:
                    await on_chunk(answer)
            if not message.get("more_body", False):
                answer.complete = True
            elif (
                disconnect_after_chunks is not None
                and len(answer.chunks) >= disconnect_after_chunks
            ):
                gone.set()
                await asyncio.sleep(0)  # let the handler see it

    await ASGIHandler()(scope, receive, send)
    return answer
