"""A fetched page as text the model reads: decoded, and HTML turned into Markdown.

markdownify (MIT) over Beautiful Soup (MIT) with the standard library's HTML parser: it
keeps headings, lists, links, tables and code blocks (with their language), and it lets
whole elements be dropped before converting (scripts, styles, navigation). html2text is
GPL; trafilatura (Apache) guesses the main text and may drop the code and links a coding
agent came for, and pulls in lxml.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from tools.web.fetching import Page

_DROPPED = (
    "script", "style", "noscript", "template", "nav", "aside", "footer", "iframe", "svg",
    "canvas", "form", "button", "select", "input", "dialog", "link", "meta",
)  # fmt: skip
"""Elements that are never the page's content."""
_DROPPED_ROLES = ("navigation", "banner", "contentinfo", "search", "menu", "menubar")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.I)
_BLANK_LINES = re.compile(r"\n{3,}")
_LANGUAGE = re.compile(r"(?:language|lang|highlight)-([A-Za-z0-9_+#-]+)")


def page_text(page: Page) -> tuple[str, list[str]]:
    """The page as Markdown (HTML) or as it is (other text), and notes on how it was read."""
    html = page.media_type in ("text/html", "application/xhtml+xml") or (
        page.media_type == ""
        and page.body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))
    )
    charset = page.charset
    if charset is None and html and (found := _META_CHARSET.search(page.body[:4096])):
        charset = found.group(1).decode("ascii")
    text, notes = decode(page.body, charset)
    if page.truncated:
        notes.append(
            f"the page is larger than {len(page.body) // (1024 * 1024)} MB: only its start was read"
        )
    return (html_to_markdown(text) if html else text), notes


def decode(body: bytes, charset: str | None) -> tuple[str, list[str]]:
    """``body`` as text in ``charset`` (UTF-8 when none is named), and what went wrong."""
    notes: list[str] = []
    name = charset or "utf-8"
    try:
        name = codecs.lookup(name).name
    except LookupError:
        notes.append(f"the page names an unknown encoding {charset!r}: it was read as UTF-8")
        name = "utf-8"
    try:
        return body.decode(name), notes
    except UnicodeDecodeError:
        pass
    if charset is None:
        notes.append("the page names no encoding and is not UTF-8: it was read as Windows-1252")
        name = "cp1252"
    else:
        notes.append(f"some bytes are not valid {name}: they are shown as \ufffd")
    return body.decode(name, errors="replace"), notes


def html_to_markdown(html: str) -> str:
    """``html`` as Markdown: headings, lists, links, tables and code kept; scripts, styles,
    navigation and forms dropped."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    for tag in soup.find_all(True, attrs={"role": list(_DROPPED_ROLES)}):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    converter = MarkdownConverter(
        heading_style="ATX", bullets="-", code_language_callback=_language, escape_misc=False
    )
    text = _BLANK_LINES.sub("\n\n", converter.convert_soup(root)).strip()
    if title and not text.startswith("# "):
        text = f"# {title}\n\n{text}"
    return text


def _language(tag: Any) -> str | None:
    """A code block's language, from its ``class`` (``language-python``) or its code's."""
    for element in (tag, tag.find("code")):
        if element is None:
            continue
        for name in element.get("class") or ():
            if found := _LANGUAGE.fullmatch(name):
                return found.group(1)
    return None
