"""A turn whose web_fetch has a model answer over a long page: the side request that moves
``small_model`` along its chain, scripted on the fake LLM server."""

from __future__ import annotations

from tests.fakes.llm_script import Reply, Step
from tests.fakes.llm_server import RecordedRequest, Responder
from tests.fakes.subagents import answered, text_of
from tests.fakes.web_server import FakeWebServer, WebPage
from tools.web.tool import ANSWER_SYSTEM

LONG_PAGE = "".join(f"<li>change number {n}</li>" for n in range(3000)).encode()
"""A page long enough that web_fetch has a model answer its prompt over it."""


def serve_long_page(web_server: FakeWebServer, prompt: str) -> dict[str, str]:
    """Serve `LONG_PAGE`; web_fetch's input that asks ``prompt`` over it."""
    web_server.pages["/long"] = WebPage(LONG_PAGE)
    return {"url": web_server.url("/long"), "prompt": prompt}


def is_side(request: RecordedRequest) -> bool:
    """Whether ``request`` is web_fetch's, asking a model to answer over a page."""
    return ANSWER_SYSTEM in text_of(request)


def fetching(fetch: dict[str, str], side: Responder, then: Step) -> Responder:
    """The turn's model calls web_fetch with ``fetch`` and, once its result is in, answers
    ``then``; web_fetch's own requests over the page are answered by ``side``."""

    def respond(request: RecordedRequest) -> Step:
        if is_side(request):
            return side(request)
        if answered(request):
            return then
        return Reply.tool_call("web_fetch", fetch)

    return respond
