"""The web: ``web_fetch`` reads a page as Markdown, safely (`WebFetch`); ``web_search``
searches with the configured service (`WebSearch`).

`addresses` says which hosts are never reached, `fetching` talks HTTP to the checked
address, `markdown` turns a page into text the model reads, `tool` is ``web_fetch``;
`settings` is the ``web_search:`` section, `domains` its domain filter, `search_backends`
and `server_search` the services it asks, `search` the tool.
"""

from tools.web.fetching import FetchLimits
from tools.web.search import WebSearch
from tools.web.search_backends import HttpSearch, SearchError
from tools.web.server_search import ServerSearch
from tools.web.settings import WebSearchSettings
from tools.web.tool import PageCache, WebFetch

__all__ = [
    "FetchLimits",
    "HttpSearch",
    "PageCache",
    "SearchError",
    "ServerSearch",
    "WebFetch",
    "WebSearch",
    "WebSearchSettings",
]
