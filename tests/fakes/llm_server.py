"""A fake LLM server: real HTTP on 127.0.0.1 that speaks Anthropic Messages and OpenAI Chat.

It runs in a background thread, so in-process adapters and ``agent -p`` subprocesses reach it
alike (``ANTHROPIC_BASE_URL=server.anthropic_url``, ``OPENAI_BASE_URL=server.openai_url``).
Each request pops the next scripted `Reply` or `Fault` (see `tests.fakes.llm_script`); a request
with nothing left gets the answer of the responder, if one is set (`respond_with`), else a 500
whose message says the script ran out. Every request is recorded. `limit_capacity` puts a
token bucket in front of it all (see `tests.fakes.llm_capacity`).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes import llm_wire
from tests.fakes.llm_capacity import Capacity
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_wire import Protocol

__all__ = ["FakeLlmServer", "Fault", "RecordedRequest", "Reply", "Responder"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (header names lowercased)."""

    protocol: Protocol
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of an Anthropic request, oldest first."""
        return [
            block
            for message in self.body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]


def result_text(block: dict[str, Any]) -> str:
    """The text of an Anthropic tool_result block (a string, or text parts)."""
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


Responder = Callable[[RecordedRequest], Step]


class FakeLlmServer:
    """Scriptable fake of both vendors' chat endpoints. Use as a context manager or start/stop."""

    def __init__(self, port: int = 0) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str | None, deque[Step]] = {}
        self._release = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.models: list[str] = []
        """What ``GET /v1/models`` lists, as an OpenAI-compatible server does."""
        self.capacity: Capacity | None = None
        self._responder: Responder | None = None
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def anthropic_url(self) -> str:
        """Base URL for the Anthropic SDK (it appends ``/v1/messages``)."""
        return self.root_url

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK (it appends ``/chat/completions``)."""
        return self.root_url + "/v1"

    def start(self) -> FakeLlmServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *steps: Step, model: str | None = None) -> None:
        """Queue steps, in order; with ``model``, only requests for that model take them."""
        with self._lock:
            self._scripts.setdefault(model, deque()).extend(steps)

    def respond_with(self, responder: Responder) -> None:
        """Answer requests the script has nothing for with ``responder(request)``."""
        self._responder = responder

    def limit_capacity(self, rate: float, burst: int) -> Capacity:
        """Admit ``rate`` requests a second (``burst`` at once); 429 with retry-after beyond."""
        self.capacity = Capacity(rate, burst)
        return self.capacity

    def reset(self) -> None:
        """Forget the script, responder, capacity and recorded requests; release handlers."""
        with self._lock:
            self._scripts.clear()
            self._responder = None
            self.capacity = None
            self.requests = []
            self.models = []
            self._release.set()
            self._release = threading.Event()

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.model == model]

    @property
    def remaining(self) -> int:
        """Steps not yet consumed, over all models."""
        with self._lock:
            return sum(len(steps) for steps in self._scripts.values())

    def _take(self, request: RecordedRequest) -> tuple[Step | None, threading.Event]:
        with self._lock:
            self.requests.append(request)
            for key in (request.model, None):
                if self._scripts.get(key):
                    return self._scripts[key].popleft(), self._release
            responder = self._responder
        return (responder(request) if responder else None), self._release

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-reply is what many tests do on purpose (a stalled stream
        given up, a turn cancelled); anything else is a bug in the fake, printed as usual."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    rate_limit_headers: dict[str, str] = {}  # noqa: RUF012 - replaced per request, never mutated

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.close_connection = True
        fake: FakeLlmServer = self.server.fake  # type: ignore[attr-defined]
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, b'{"error": "not found"}', "application/json")
            return
        listed = {
            "object": "list",
            "data": [{"id": name, "object": "model"} for name in fake.models],
        }
        self._send(200, json.dumps(listed).encode(), "application/json")

    def do_POST(self) -> None:
        self.close_connection = True
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        protocol: Protocol = "anthropic" if self.path.endswith("/messages") else "openai"
        body = json.loads(raw or b"{}")
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = RecordedRequest(protocol, self.path, headers, body)
        fake: FakeLlmServer = self.server.fake  # type: ignore[attr-defined]
        capacity = fake.capacity
        if capacity is not None:
            admission = capacity.admit()
            self.rate_limit_headers = admission.headers
            if not admission.admitted:
                fake._record(request)
                self._throttle(protocol, admission.retry_after, capacity)
                return
        step, release = fake._take(request)
        if step is None:
            n = len(fake.requests)
            message = f"fake LLM server: the script ran out (request #{n}, model {request.model!r})"
            self._error(protocol, Fault.status(500, "api_error", message=message))
        elif isinstance(step, Reply):
            self._reply(request, step, step, sys.maxsize, None)
        else:
            self._fault(request, step, release)

    def _throttle(self, protocol: Protocol, retry_after: int, capacity: Capacity) -> None:
        message = "fake LLM server: rate limit exceeded (capacity)"
        fault = Fault.status(
            429, "rate_limit_error", message=message, headers={"retry-after": str(retry_after)}
        )
        self._error(protocol, fault)
        capacity.told(retry_after)

    def _events(self, request: RecordedRequest, reply: Reply) -> list[bytes]:
        if request.protocol == "anthropic":
            return llm_wire.anthropic_events(reply, request.model)
        options = request.body.get("stream_options") or {}
        return llm_wire.openai_events(reply, request.model, bool(options.get("include_usage")))

    def _fault(self, request: RecordedRequest, fault: Fault, release: threading.Event) -> None:
        if fault.kind == "status":
            self._error(request.protocol, fault)
        elif fault.kind == "drop":
            self._reset()
        elif fault.kind == "hang":
            release.wait(fault.seconds)
            self._reset()
        elif fault.kind == "not_json":
            data = b"this is not json" if fault.raw_body is None else fault.raw_body.encode()
            self._send(200, data, fault.content_type)
        else:
            reply = fault.partial_reply
            self._reply(request, fault, reply, fault.after_events, release)

    def _reply(
        self,
        request: RecordedRequest,
        step: Step,
        reply: Reply,
        after: int,
        release: threading.Event | None,
    ) -> None:
        """Send ``reply`` (JSON or SSE); a stream fault strikes after ``after`` events."""
        if not request.stream:
            if request.protocol == "anthropic":
                body = llm_wire.anthropic_body(reply, request.model)
            else:
                body = llm_wire.openai_body(reply, request.model)
            data = json.dumps(body).encode()
            if isinstance(step, Fault) and step.kind == "cut_stream":
                self._send_head(200, "application/json", {"content-length": str(len(data))})
                self.wfile.write(data[: len(data) // 2])
                self._reset()
                return
            self._send(200, data, "application/json")
            return
        events = self._events(request, reply)
        self._send_head(200, "text/event-stream", {"transfer-encoding": "chunked"})
        pause = reply.delta_pause
        for index, event in enumerate(events[:after]):
            if pause and index:
                time.sleep(pause)
            self._chunk(event)
        kind = step.kind if isinstance(step, Fault) else None
        if kind == "cut_stream":
            self._reset()
            return
        if kind == "stream_error" and isinstance(step, Fault):
            self._chunk(llm_wire.stream_error_event(request.protocol, step))
        if kind == "bad_event" and isinstance(step, Fault) and step.raw_body is not None:
            name = step.error_type if request.protocol == "anthropic" else None
            self._chunk(llm_wire.sse(step.raw_body, event=name))
            for event in events[after:]:
                self._chunk(event)
        if kind == "stall" and release is not None and isinstance(step, Fault):
            release.wait(step.seconds)
            for event in events[after:]:
                self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")

    def _error(self, protocol: Protocol, fault: Fault) -> None:
        if fault.raw_body is not None:
            data = fault.raw_body.encode()
        else:
            data = json.dumps(llm_wire.error_body(protocol, fault)).encode()
        self._send(fault.status_code, data, fault.content_type, fault.headers)

    def _send_head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("request-id", "req_fake_anthropic")
        self.send_header("x-request-id", "req_fake_openai")
        self.send_header("connection", "close")
        for name, value in (self.rate_limit_headers | headers).items():
            self.send_header(name, value)
        self.end_headers()

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        extra = {"content-length": str(len(data))} | (headers or {})
        self._send_head(status, content_type, extra)
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _reset(self) -> None:
        """Close with RST, as a crashed peer or a dropped network path looks to the client."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
