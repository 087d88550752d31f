"""The ``web_search`` tool (Claude Code's ``WebSearch``): numbered results with title, URL
and snippet, from the search service the configuration names, filtered by domain."""

from __future__ import annotations

import html
import re
import unicodedata
from typing import ClassVar

from pydantic import BaseModel, Field

from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput
from tools.settings import ToolSettings
from tools.web.domains import DomainError, DomainFilter, read_domains
from tools.web.fetching import url_host
from tools.web.search_backends import Backend, Found, Hit, Query, SearchError

MAX_QUERY = 400
"""Characters of a query (Brave's limit; the others take as much)."""
MAX_TITLE = 200
MAX_SNIPPET = 400
MAX_ANSWER = 2_000

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")


class WebSearchInput(BaseModel):
    """The arguments of ``web_search``."""

    query: str = Field(description="What to search for (2 to 400 characters).")
    allowed_domains: list[str] | None = Field(
        default=None,
        description="Only results from these domains and their subdomains, e.g. "
        "['docs.python.org'].",
    )
    blocked_domains: list[str] | None = Field(
        default=None,
        description="Never results from these domains or their subdomains.",
    )


class WebSearch(Tool[WebSearchInput]):
    """Searches the web with the configured service. Asks the person like ``web_fetch``
    (a ``web_search`` / ``WebSearch`` rule allows it without asking).

    Args:
        backend: The service (`tools.web.search_backends`, `tools.web.server_search`).
        service: Its name, as the result and the question show it.
        max_results: Results shown.
        seconds: How long one search may take (the executor's timeout adds a margin).
    """

    name: ClassVar[str] = "web_search"
    description: ClassVar[str] = (
        "Search the web. Returns numbered results, each with title, URL and snippet; read a "
        "result in full with web_fetch. allowed_domains keeps only results from those "
        "domains, blocked_domains drops results from them (subdomains included in both). "
        "Use it for facts newer than your training: releases, changelogs, error messages, "
        "docs. Read-only; the person may be asked first."
    )
    input_model: ClassVar[type[BaseModel]] = WebSearchInput
    idempotent: ClassVar[bool] = True
    kind = "network"

    def __init__(
        self, backend: Backend, *, service: str, max_results: int = 8, seconds: float = 20.0
    ) -> None:
        self._backend = backend
        self.service = service
        self._max_results = max_results
        self._seconds = seconds

    def summary(self, args: WebSearchInput) -> str:
        return f"web_search {_clean(args.query, 120)!r}"

    def details(self, args: WebSearchInput, ctx: ToolContext) -> str:
        lines = [f"query: {args.query}", f"through: {self.service}"]
        if args.allowed_domains:
            lines.append("only: " + ", ".join(args.allowed_domains))
        if args.blocked_domains:
            lines.append("not: " + ", ".join(args.blocked_domains))
        return "\n".join(lines)

    def timeout(self, args: WebSearchInput, settings: ToolSettings) -> float:
        return self._seconds + 10

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolOutput:
        query = _SPACE.sub(" ", args.query).strip()
        if len(query) < 2 or len(query) > MAX_QUERY:
            raise ToolError(
                f"the query has {len(query)} characters; give 2 to {MAX_QUERY}",
                hint="search for the key words, not a whole paragraph",
            )
        try:
            domains = DomainFilter(
                read_domains(args.allowed_domains or [], "allowed_domains"),
                read_domains(args.blocked_domains or [], "blocked_domains"),
            )
        except DomainError as error:
            raise ToolError(str(error)) from None
        try:
            found = await self._backend(
                Query(query, domains.allowed, domains.blocked, self._max_results)
            )
        except SearchError as error:
            category = ErrorCategory.TRANSIENT if error.transient else ErrorCategory.PERMANENT
            raise ToolError(f"web search failed: {error.message}", category=category) from None
        return ToolOutput(self._render(query, domains, found))

    def _render(self, query: str, domains: DomainFilter, found: Found) -> str:
        kept, outside = _kept(found.hits, domains)
        shown = kept[: self._max_results]
        filtered = f" ({domains.describe()})" if domains.describe() else ""
        head = f"Web search for {query!r} through {self.service}{filtered}: "
        lines = [head + (_count(len(shown)) if shown else "no results")]
        if outside:
            lines.append(f"({_count(outside)} outside the domain filter left out)")
        for number, hit in enumerate(shown, 1):
            lines += ["", f"{number}. {hit.title or '(no title)'}", f"   {hit.url}"]
            if hit.snippet:
                lines.append(f"   {hit.snippet}")
        if answer := _clean(found.answer, MAX_ANSWER):
            lines += ["", f"{self.service} also wrote: {answer}"]
        if shown:
            lines += ["", "Read a result with web_fetch; cite the URLs you use."]
        return "\n".join(lines)


def _count(n: int) -> str:
    return "1 result" if n == 1 else f"{n} results"


def _kept(hits: list[Hit], domains: DomainFilter) -> tuple[list[Hit], int]:
    """The results to show, cleaned, in the service's order (one per URL), and how many
    the domain filter left out. A result whose URL is not http(s) is dropped unseen."""
    kept: list[Hit] = []
    seen: set[str] = set()
    outside = 0
    for hit in hits:
        url = hit.url.strip()
        if not url.lower().startswith(("http://", "https://")) or _unsafe(url) or url in seen:
            continue
        seen.add(url)
        if not domains.keeps(url_host(url)):
            outside += 1
            continue
        kept.append(Hit(_clean(hit.title, MAX_TITLE), url, _clean(hit.snippet, MAX_SNIPPET)))
    return kept, outside


def _unsafe(url: str) -> bool:
    return len(url) > 2_000 or any(c.isspace() or unicodedata.category(c)[0] == "C" for c in url)


def _clean(text: str, limit: int) -> str:
    """Service text as one line: tags and entities undone, control characters dropped."""
    text = html.unescape(_TAG.sub("", text))
    text = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
