"""Fake search services for ``web_search`` tests: routes for `FakeWebServer` that check a
request as the real service would and answer in its documented shape.

- SearXNG: ``GET /search?q=…&format=json`` → ``{"query", "results": [{title, url, content}]}``
  (403 unless ``format=json``, as an instance whose settings.yml lacks json answers);
- Brave: ``GET /res/v1/web/search?q=…&count=…`` with ``X-Subscription-Token`` →
  ``{"web": {"results": [{title, url, description}]}}`` (401 on another token);
- Tavily: ``POST /search`` with ``Authorization: Bearer …`` and a JSON body →
  ``{"query", "results": [{title, url, content, score}]}`` (401 on another token).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tests.fakes.web_server import FakeWebServer, SeenRequest, WebPage

Route = Callable[[SeenRequest], WebPage]


@dataclass(frozen=True)
class Result:
    """One result a fake service knows."""

    title: str
    url: str
    snippet: str


RESULTS = (
    Result("httpx 0.28 changelog", "https://github.com/encode/httpx/blob/master/CHANGELOG.md",
           "Removed the deprecated proxies argument."),
    Result("HTTPX docs", "https://www.python-httpx.org/", "A next-generation HTTP client."),
    Result("Python docs: http.client", "https://docs.python.org/3/library/http.client.html",
           "Low-level HTTP protocol client."),
    Result("Stack Overflow: httpx proxies", "https://stackoverflow.com/questions/1/httpx",
           "How do I set proxies in httpx 0.28?"),
)  # fmt: skip


def _json(body: object, status: int = 200) -> WebPage:
    return WebPage(json.dumps(body).encode(), "application/json", status)


def searxng(results: tuple[Result, ...] = RESULTS) -> Route:
    def answer(request: SeenRequest) -> WebPage:
        if request.arg("format") != "json":
            return WebPage(b"<h1>403 Forbidden</h1>", "text/html", 403)
        items = [
            {"title": r.title, "url": r.url, "content": r.snippet, "engine": "fake"}
            for r in results
        ]
        return _json({"query": request.arg("q"), "number_of_results": len(items), "results": items})

    return answer


def brave(key: str, results: tuple[Result, ...] = RESULTS) -> Route:
    def answer(request: SeenRequest) -> WebPage:
        if request.headers.get("x-subscription-token") != key:
            error = {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}}
            return _json(error, 401)
        items = [
            {"title": r.title, "url": r.url, "description": f"<strong>{r.snippet}</strong>"}
            for r in results[: int(request.arg("count") or 20)]
        ]
        return _json({"type": "search", "web": {"type": "search", "results": items}})

    return answer


def tavily(key: str, results: tuple[Result, ...] = RESULTS) -> Route:
    def answer(request: SeenRequest) -> WebPage:
        if request.method != "POST":
            return WebPage(b"", "text/plain", 405)
        if request.headers.get("authorization") != f"Bearer {key}":
            return _json({"detail": {"error": "Unauthorized: missing or invalid API key."}}, 401)
        body = request.json()
        items = [
            {"title": r.title, "url": r.url, "content": r.snippet, "score": 0.9}
            for r in results[: body.get("max_results", 5)]
        ]
        return _json({"query": body["query"], "answer": None, "results": items})

    return answer


def serve(server: FakeWebServer, backend: str, key: str = "test-key") -> str:
    """Put the fake for ``backend`` on ``server``; its ``web_search.url``."""
    if backend == "searxng":
        server.routes["/search"] = searxng()
    elif backend == "brave":
        server.routes["/res/v1/web/search"] = brave(key)
    else:
        server.routes["/search"] = tavily(key)
    return server.url("")
