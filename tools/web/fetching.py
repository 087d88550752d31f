"""One page over HTTP(S): to a checked address, within timeouts and a size cap.

Redirects on the same host are followed (each hop's address checked again); one to
another host is returned as a `Redirect`, so the model asks for it in a new call and the
permission rules see the new host. Proxies from the environment are not used: the checked
address must be the one connected to.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.web.addresses import RefusedAddress, Resolver, checked_addresses, refused_ip

if TYPE_CHECKING:
    import httpx2

USER_AGENT = "agent-web-fetch/1 (terminal coding agent)"

_TEXT_TYPES = frozenset(
    {
        "application/xhtml+xml", "application/json", "application/xml", "application/javascript",
        "application/x-javascript", "application/ecmascript", "application/yaml",
        "application/x-yaml", "application/toml", "application/x-sh", "application/sql",
    }
)  # fmt: skip


class FetchError(Exception):
    """A fetch that failed; the message says why and what to do. ``transient``: may work
    if tried again later (a timeout, a refused connection)."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class FetchLimits:
    """How long and how much one fetch may take."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    """Seconds without a byte from the server."""
    total_timeout: float = 60.0
    """Seconds for the whole fetch, redirects included (a server sending a byte a second
    never trips the read timeout)."""
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5


@dataclass(frozen=True)
class Page:
    """What the server sent: the final URL, the media type, the body (cut at the cap)."""

    url: str
    media_type: str
    charset: str | None
    body: bytes
    truncated: bool


@dataclass(frozen=True)
class Redirect:
    """A redirect to another host, not followed."""

    url: str
    location: str
    status: int


@dataclass(frozen=True)
class _Hop:
    location: str
    status: int


def is_text(media_type: str) -> bool:
    """Whether a page of ``media_type`` can be read as text ("" when the server sent none)."""
    return (
        media_type in ("", *_TEXT_TYPES)
        or media_type.startswith("text/")
        or media_type.endswith(("+json", "+xml"))
    )


async def fetch(url: str, limits: FetchLimits, resolve: Resolver) -> Page | Redirect:
    """GET ``url`` (http or https).

    Raises:
        FetchError: a bad URL, a refused address, a timeout, an HTTP error status, or a
            body that is not text.
    """
    import httpx2  # on the first fetch: ~40 ms a session that never fetches does not pay

    current = _parse(url)
    timeout = httpx2.Timeout(limits.read_timeout, connect=limits.connect_timeout)
    try:
        async with asyncio.timeout(limits.total_timeout):
            async with httpx2.AsyncClient(
                trust_env=False, follow_redirects=False, timeout=timeout
            ) as client:
                for _ in range(limits.max_redirects + 1):
                    got = await _get(client, current, limits, resolve)
                    if not isinstance(got, _Hop):
                        return got
                    target = _parse(str(current.join(got.location)))
                    if target.host.lower() != current.host.lower():
                        return Redirect(str(current), str(target), got.status)
                    current = target
    except RefusedAddress as refused:
        raise FetchError(f"refused: {refused}; do not try to reach it another way") from None
    except TimeoutError:
        raise FetchError(
            f"{current} took longer than {limits.total_timeout:g}s", transient=True
        ) from None
    except httpx2.TimeoutException:
        raise FetchError(f"{current} did not answer in time", transient=True) from None
    except httpx2.HTTPError as error:
        raise FetchError(f"cannot fetch {current}: {error or type(error).__name__}") from None
    except OSError as error:
        raise FetchError(f"cannot reach {current.host}: {error.strerror or error}") from None
    raise FetchError(f"{url} redirects more than {limits.max_redirects} times")


def url_host(url: str) -> str | None:
    """The host ``url`` names, lower case, as `fetch` reads it (one parser for the rules
    and the connection); None when it names none."""
    import httpx2

    try:
        host = httpx2.URL(url.strip()).host
    except httpx2.InvalidURL:
        return None
    return host.lower().rstrip(".") or None


def _parse(url: str) -> httpx2.URL:
    import httpx2

    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL as error:
        raise FetchError(f"{url!r} is not a valid URL ({error})") from None
    if parsed.scheme not in ("http", "https"):
        raise FetchError(f"{url!r}: only http and https URLs can be fetched")
    if not parsed.host:
        raise FetchError(f"{url!r} names no host")
    return parsed


async def _get(
    client: httpx2.AsyncClient, url: httpx2.URL, limits: FetchLimits, resolve: Resolver
) -> Page | _Hop | Redirect:
    import httpx2

    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await checked_addresses(url.host, port, resolve)
    last: httpx2.ConnectError | None = None
    for address in addresses:
        request = client.build_request(
            "GET",
            url.copy_with(host=address),
            headers={
                "Host": url.netloc.decode("ascii"),
                "User-Agent": USER_AGENT,
                "Accept": "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.1",
            },
            extensions={"sni_hostname": url.raw_host.decode("ascii")}
            if url.scheme == "https"
            else {},
        )
        try:
            response = await client.send(request, stream=True)
        except httpx2.ConnectError as error:
            last = error
            continue
        try:
            return await _read(url, response, limits)
        finally:
            await response.aclose()
    raise last if last is not None else FetchError(f"{url.host} has no address")


async def _read(url: httpx2.URL, response: httpx2.Response, limits: FetchLimits) -> Page | _Hop:
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if peer and (why := refused_ip(str(peer[0]))) is not None:
        raise RefusedAddress(why)  # the socket's peer, whatever the name said
    if response.is_redirect:
        return _Hop(response.headers["location"], response.status_code)
    if response.status_code >= 400:
        raise FetchError(
            f"{url} answered {response.status_code} {response.reason_phrase}".rstrip(),
            transient=response.status_code in (408, 429) or response.status_code >= 500,
        )
    raw_type = response.headers.get("content-type", "")
    media_type = raw_type.split(";", 1)[0].strip().lower()
    if not is_text(media_type):
        raise FetchError(
            f"{url} is {media_type}, not a page web_fetch can read (it reads HTML and text)"
        )
    body = bytearray()
    truncated = False
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limits.max_bytes:
            del body[limits.max_bytes :]
            truncated = True
            break
    return Page(str(url), media_type, _charset(raw_type), bytes(body), truncated)


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None
