"""``web_fetch``: read a web page as Markdown, safely (`WebFetch`).

`addresses` says which hosts are never reached, `fetching` talks HTTP to the checked
address, `markdown` turns a page into text the model reads, `tool` is the tool itself.
"""

from tools.web.fetching import FetchLimits
from tools.web.tool import PageCache, WebFetch

__all__ = ["FetchLimits", "PageCache", "WebFetch"]
