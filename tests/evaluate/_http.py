"""A local chat-completions endpoint for the adapter tests: real HTTP on 127.0.0.1, scripted answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import pytest


class Fake(Protocol):
    def handle(self, handler: BaseHTTPRequestHandler) -> None: ...


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def completion(model: str, content: str, usage: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion response body with one assistant message."""
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": usage}


@contextmanager
def serve(fake: Fake, monkeypatch: pytest.MonkeyPatch, api_key: str) -> Iterator[str]:
    """Run ``fake`` behind a threaded HTTP server; yield its /v1 base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            fake.handle(self)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
