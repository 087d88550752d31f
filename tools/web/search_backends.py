"""The services ``web_search`` asks: SearXNG, Brave and Tavily over HTTP, and Anthropic's
server-side search through the session's model.

Each backend takes a `Query` and gives `Found` (hits in the service's order) or raises
`SearchError`, whose ``transient`` says whether trying again may help (a timeout, a 5xx, a
429): the tool executor's retries take it from there, as for ``web_fetch``. Nothing a
service sends is trusted: titles and snippets are cleaned in `tools.web.search`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.web.settings import WebSearchSettings

if TYPE_CHECKING:
    import httpx2

USER_AGENT = "agent-web-search/1 (terminal coding agent)"
MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""A search answer larger than this is refused: no service sends one."""


class SearchError(Exception):
    """A search that failed; the message says why and what to do."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient


@dataclass(frozen=True)
class Query:
    """One search: the words, the domain lists (already checked) and how many results."""

    text: str
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    count: int = 8


@dataclass(frozen=True)
class Hit:
    """One result as the service gave it (not yet cleaned)."""

    title: str
    url: str
    snippet: str = ""


@dataclass(frozen=True)
class Found:
    """What a service answered: its results, and a written answer if it gave one."""

    hits: list[Hit] = field(default_factory=list)
    answer: str = ""


Backend = Callable[[Query], Awaitable[Found]]


def _site_query(query: Query) -> str:
    """The words, narrowed with ``site:`` when one domain is allowed (engines understand
    that one form; the results are filtered by both lists afterwards anyway)."""
    if len(query.allowed) == 1:
        return f"{query.text} site:{query.allowed[0]}"
    return query.text


class HttpSearch:
    """A search service over HTTP: `searxng`, `brave` or `tavily`, chosen by ``settings``.

    Args:
        settings: The ``web_search`` section.
        key: The API key (from the variable ``settings.key_env()`` names); never logged.
    """

    def __init__(self, settings: WebSearchSettings, key: str | None) -> None:
        self._settings = settings
        self._key = key
        self.name = {"searxng": "SearXNG", "brave": "Brave Search", "tavily": "Tavily"}.get(
            settings.backend, settings.backend
        )

    async def __call__(self, query: Query) -> Found:
        backend = self._settings.backend
        if backend == "searxng":
            return await self._searxng(query)
        if backend == "brave":
            return await self._brave(query)
        return await self._tavily(query)

    async def _searxng(self, query: Query) -> Found:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        params = {"q": _site_query(query), "format": "json", "pageno": "1"}
        body = await self._send("GET", "/search", params=params, headers=headers)
        return Found(
            [
                Hit(_text(item.get("title")), _text(item.get("url")), _text(item.get("content")))
                for item in _items(body.get("results"))
            ],
            answer=" ".join(_text(answer) for answer in _items_any(body.get("answers"))),
        )

    async def _brave(self, query: Query) -> Found:
        params = {"q": _site_query(query), "count": str(min(query.count * 2, 20))}
        headers = {"X-Subscription-Token": self._key or ""}
        body = await self._send("GET", "/res/v1/web/search", params=params, headers=headers)
        web = body.get("web")
        results = web.get("results") if isinstance(web, dict) else None
        return Found(
            [
                Hit(
                    _text(item.get("title")),
                    _text(item.get("url")),
                    _text(item.get("description")),
                )
                for item in _items(results)
            ]
        )

    async def _tavily(self, query: Query) -> Found:
        payload: dict[str, Any] = {
            "query": query.text,
            "max_results": min(query.count * 2, 20),
            "search_depth": "basic",
        }
        if query.allowed:
            payload["include_domains"] = list(query.allowed)
        if query.blocked:
            payload["exclude_domains"] = list(query.blocked)
        headers = {"Authorization": f"Bearer {self._key or ''}"}
        body = await self._send("POST", "/search", payload=payload, headers=headers)
        return Found(
            [
                Hit(_text(item.get("title")), _text(item.get("url")), _text(item.get("content")))
                for item in _items(body.get("results"))
            ],
            answer=_text(body.get("answer")),
        )

    async def _send(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str] | None = None,
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        import httpx2  # on the first search: a session that never searches does not pay

        url = self._settings.base_url() + path
        timeout = self._settings.timeout
        try:
            async with asyncio.timeout(timeout):
                async with httpx2.AsyncClient(
                    timeout=httpx2.Timeout(timeout), follow_redirects=False
                ) as client:
                    request = client.build_request(
                        method,
                        url,
                        params=params,
                        json=payload,
                        headers={"User-Agent": USER_AGENT, "Accept": "application/json"}
                        | dict(headers),
                    )
                    response = await client.send(request, stream=True)
                    try:
                        data = await _read(response)
                    finally:
                        await response.aclose()
        except (TimeoutError, httpx2.TimeoutException):
            raise SearchError(
                f"{self.name} at {self._settings.base_url()} did not answer within {timeout:g}s",
                transient=True,
            ) from None
        except httpx2.HTTPError as error:
            raise SearchError(
                f"cannot reach {self.name} at {self._settings.base_url()}: "
                f"{error or type(error).__name__}; check web_search.url",
                transient=isinstance(error, httpx2.TransportError),
            ) from None
        return self._answer(response, data)

    def _answer(self, response: httpx2.Response, data: bytes) -> dict[str, Any]:
        status = response.status_code
        if status >= 400 or 300 <= status < 400:
            raise self._refusal(status, response.reason_phrase, data)
        try:
            body = json.loads(data)
        except ValueError:
            raise SearchError(
                f"{self.name} answered with something other than JSON "
                f"({response.headers.get('content-type', 'no content type')}); "
                "check web_search.url"
            ) from None
        if not isinstance(body, dict):
            raise SearchError(f"{self.name} answered JSON of another shape than a search's")
        return body

    def _refusal(self, status: int, reason: str, data: bytes) -> SearchError:
        said = _text(data[:300].decode("utf-8", "replace"))
        detail = f"{self.name} answered {status} {reason}".rstrip() + (f": {said}" if said else "")
        if status in (401, 403) and self._settings.backend == "searxng":
            return SearchError(
                f"{detail}. SearXNG refuses JSON unless its settings.yml lists json under "
                "search.formats; or the instance needs a token (web_search.api_key_env)"
            )
        if status in (401, 403):
            return SearchError(
                f"{detail}. Check the key in {self._settings.key_env()}: it was refused"
            )
        if 300 <= status < 400:
            return SearchError(f"{detail}. Check web_search.url: it redirects elsewhere")
        return SearchError(detail, transient=status in (408, 429) or status >= 500)


async def _read(response: httpx2.Response) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > MAX_ANSWER_BYTES:
            raise SearchError(f"the search answer is over {MAX_ANSWER_BYTES // 1_048_576} MB")
    return bytes(data)


def _items(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _items_any(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
