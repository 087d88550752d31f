"""A real HTTP server on 127.0.0.1 serving scripted pages, for ``web_fetch`` and
``web_search`` tests.

Each route is a `WebPage`: a status, headers and a body, which may be a generator (sent
chunked, as slowly as it likes). The server counts the requests per path. A search API is
a function in ``routes`` (by path, query string left off) answering each `SeenRequest`,
GET or POST; every request is kept in ``requests``.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class WebPage:
    """One response. ``body`` as bytes, or a function giving chunks (sent chunked)."""

    body: bytes | Callable[[], Iterable[bytes]] = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a slow server)."""


@dataclass(frozen=True)
class SeenRequest:
    """One request as the server got it (header names lower case)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def arg(self, name: str) -> str:
        """The query string's first value for ``name`` ("" when absent)."""
        return self.query.get(name, [""])[0]

    def json(self) -> Any:
        return json.loads(self.body)


def endless(chunk: bytes = b"x" * 65536) -> Callable[[], Iterator[bytes]]:
    """A body that never ends, until the client stops reading."""

    def chunks() -> Iterator[bytes]:
        while True:
            yield chunk

    return chunks


class FakeWebServer:
    """Serves ``pages`` (path → `WebPage`) and ``routes`` (path → a function of the
    request) on 127.0.0.1; a missing path is a 404."""

    def __init__(self) -> None:
        self.pages: dict[str, WebPage] = {}
        self.routes: dict[str, Callable[[SeenRequest], WebPage]] = {}
        self.requests: list[SeenRequest] = []
        self.hits: Counter[str] = Counter()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.hits[self.path] += 1
                page = server.pages.get(self.path) or self._routed(b"")
                if page.delay and server._stop.wait(page.delay):
                    return
                # The client may stop reading, as it should past its cap.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(page)

            def do_POST(self) -> None:
                server.hits[self.path] += 1
                page = self._routed(self.rfile.read(int(self.headers.get("content-length", 0))))
                if page.delay and server._stop.wait(page.delay):
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(page)

            def _routed(self, body: bytes) -> WebPage:
                parts = urlsplit(self.path)
                seen = SeenRequest(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {name.lower(): value for name, value in self.headers.items()},
                    body,
                )
                server.requests.append(seen)
                route = server.routes.get(parts.path)
                return route(seen) if route else WebPage(b"not here", "text/plain", 404)

            def _answer(self, page: WebPage) -> None:
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                if isinstance(page.body, bytes):
                    self.send_header("Content-Length", str(len(page.body)))
                    self.end_headers()
                    self.wfile.write(page.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in page.body():
                    if server._stop.is_set():
                        return
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The URL of ``path`` here, through ``host`` (``localhost`` is another host)."""
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> FakeWebServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
