"""``allowed_domains`` and ``blocked_domains`` of ``web_search``: read, checked and matched.

A domain covers itself and its subdomains (``python.org`` covers ``docs.python.org``), as
Claude Code's ``WebSearch`` filters do; ``*.python.org`` is read as ``python.org``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_LABEL = r"[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?"
_DOMAIN = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}")


class DomainError(ValueError):
    """An entry that is not a domain; the message names it and says what to give."""


def read_domains(values: Sequence[str], field: str) -> tuple[str, ...]:
    """``values`` as lower-case domains, duplicates dropped.

    Raises:
        DomainError: an entry is empty, a URL, or has characters no host name has.
    """
    domains: list[str] = []
    for raw in values:
        text = raw.strip().lower().rstrip(".")
        text = text.removeprefix("*.").removeprefix(".")
        if not _DOMAIN.fullmatch(text) or len(text) > 253:
            shown = raw if len(raw) <= 80 else raw[:77] + "..."
            raise DomainError(
                f"{field}: {shown!r} is not a domain; give host names such as "
                "docs.python.org (no scheme or path; subdomains are included)"
            )
        if text not in domains:
            domains.append(text)
    return tuple(domains)


def covers(domain: str, host: str) -> bool:
    """Whether ``domain`` covers ``host``: the same host or one of its subdomains."""
    return host == domain or host.endswith("." + domain)


@dataclass(frozen=True)
class DomainFilter:
    """Which result hosts a search keeps: in ``allowed`` (when it names any), not in
    ``blocked``."""

    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()

    def keeps(self, host: str | None) -> bool:
        """Whether a result on ``host`` is kept (one without a host never is)."""
        if not host:
            return False
        if self.allowed and not any(covers(domain, host) for domain in self.allowed):
            return False
        return not any(covers(domain, host) for domain in self.blocked)

    def describe(self) -> str:
        """The filter in words, for the result: ``only python.org; not bugs.python.org``."""
        parts = []
        if self.allowed:
            parts.append("only " + ", ".join(self.allowed))
        if self.blocked:
            parts.append("not " + ", ".join(self.blocked))
        return "; ".join(parts)
