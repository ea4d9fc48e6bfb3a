"""A local chat-completions endpoint for the adapter tests: real HTTP on 127.0.0.1, scripted answers."""

from __future__ import annotations

import base64
import functools
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
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


# -- hostile reply modes: each writes one whole HTTP reply to a chat call ------------------------------
ReplyFn = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]
GOOD_ANSWER = "Checked each step.\nCorrect: yes"
USAGE = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}


def send_raw(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict | None = None) -> None:
    """Exactly these bytes as the body, labelled application/json unless ``headers`` say otherwise."""
    handler.send_response(status)
    headers = {"Content-Type": "application/json", **(headers or {})}
    for k, v in headers.items():
        handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def good(handler: BaseHTTPRequestHandler, body: dict[str, Any], *, delay: float = 0.0) -> None:
    time.sleep(delay)
    send_json(handler, 200, completion(body["model"], GOOD_ANSWER, USAGE))


def invalid_json(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    send_raw(handler, 200, b'{"choices": [{"message": {"content": "Correct: yes"')


def choices_string(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    send_json(handler, 200, {"id": "x", "object": "chat.completion", "choices": GOOD_ANSWER})


def choices_null(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    send_json(handler, 200, {"id": "x", "object": "chat.completion", "choices": [None]})


def message_string(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    send_json(handler, 200, {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": GOOD_ANSWER}]})


def lone_surrogate(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    # A JSON escape of half a surrogate pair: valid JSON text, not valid Unicode once decoded.
    data = json.dumps(completion(body["model"], "Correct: yes @", USAGE)).replace("@", "\\ud83d")
    send_raw(handler, 200, data.encode())


def cost_overflow(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    data = json.dumps(completion(body["model"], GOOD_ANSWER, {**USAGE, "cost": "@"})).replace('"@"', "1e999")
    send_raw(handler, 200, data.encode())


def unsupported_parameter(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    send_json(handler, 400, {"error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model.",
        "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})


@functools.cache
def gzip_bomb(decoded_bytes: int = 32 << 20) -> bytes:
    """A gzip stream of ``decoded_bytes`` zeros (about 1/1000 of that on the wire), built in 1 MiB pieces."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    piece = bytes(1 << 20)
    return b"".join(packer.compress(piece) for _ in range(decoded_bytes >> 20)) + packer.flush()


def gzip_bomb_reply(status: int) -> ReplyFn:
    def reply(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        try:
            send_raw(handler, status, gzip_bomb(), {"Content-Encoding": "gzip"})
        except (BrokenPipeError, ConnectionResetError):   # the client stops reading at its cap
            pass
    return reply


def echo_key(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    """A reply quoting the Authorization header back (as a careless proxy or a hostile model might)."""
    auth = handler.headers.get("Authorization", "")
    send_json(handler, 200, completion(body["model"], f"You sent {auth!r}.\nCorrect: yes", USAGE))


def echo_key_in_error(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
    auth = handler.headers.get("Authorization", "")
    key = auth.removeprefix("Bearer ")
    send_json(handler, 401, {"error": {"message": f"Incorrect API key provided: {auth} (base64 "
                                                  f"{base64.b64encode(key.encode()).decode()})"}})


def trickle(stop: threading.Event, *, headers_too: bool = False, seconds_per_byte: float = 1.0) -> ReplyFn:
    """A reply sent one byte per ``seconds_per_byte`` (the body only, or from the first header on);
    a complete answer if anyone waited for it. Stops when ``stop`` is set or the client hangs up."""
    def reply(handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        data = json.dumps(completion(body["model"], GOOD_ANSWER, USAGE)).encode()
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                "\r\n").encode()
        slow = head + data if headers_too else data
        try:
            if not headers_too:
                handler.wfile.write(head)
            for i in range(len(slow)):
                handler.wfile.write(slow[i:i + 1])
                handler.wfile.flush()
                if stop.wait(seconds_per_byte):
                    return
        except (BrokenPipeError, ConnectionResetError):
            pass
    return reply


class Scripted:
    """Answers each chat call with the reply ``choose(call_number, request_body)`` returns; counts calls."""

    def __init__(self, choose: Callable[[int, dict[str, Any]], ReplyFn]) -> None:
        self.choose = choose
        self.lock = threading.Lock()
        self.calls = 0
        self.closing = threading.Event()   # set by serve() on the way out, so slow replies end

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        with self.lock:
            n = self.calls
            self.calls += 1
        self.choose(n, body)(handler, body)


def image_digest(body: dict[str, Any]) -> str:
    """sha256 of the page image a chat request carries (which item it is about)."""
    import hashlib

    url = next(p["image_url"]["url"] for p in body["messages"][0]["content"] if p["type"] == "image_url")
    return hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest()


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
        closing = getattr(fake, "closing", None)
        if closing is not None:
            closing.set()
        server.shutdown()
        server.server_close()
