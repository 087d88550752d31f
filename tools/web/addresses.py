"""Addresses ``web_fetch`` never connects to, whatever the permission rules say.

Cloud instances serve their credentials at a link-local metadata address: a model talked
into fetching it would hand the keys to whoever wrote the page. The check is made on every
address a name resolves to, and the connection then goes to a checked address, so a name
that resolves elsewhere the second time (DNS rebinding) does not get through.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``(host, port)`` → the IP addresses to connect to, best first."""

REFUSED_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
"""Names of cloud metadata services."""

_REFUSED_NETWORKS = (
    ipaddress.ip_network("169.254.0.0/16"),  # IPv4 link-local: AWS, GCP, Azure metadata
    ipaddress.ip_network("fe80::/10"),  # IPv6 link-local
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS metadata over IPv6
    ipaddress.ip_network("100.100.100.200/32"),  # Alibaba Cloud metadata
)


class RefusedAddress(Exception):
    """A host or address that is never fetched; the message says which and why."""


def refused_name(host: str) -> str | None:
    """Why ``host`` (a name, before resolving) is never fetched, or None."""
    name = host.lower().rstrip(".")
    if name in REFUSED_NAMES:
        return f"{host} is a cloud metadata service, which web_fetch never reaches"
    return None


def refused_ip(address: str) -> str | None:
    """Why the IP ``address`` is never connected to, or None."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for network in _REFUSED_NETWORKS:
        if ip in network:
            return (
                f"{address} is a link-local or cloud metadata address, which web_fetch "
                "never reaches"
            )
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives for ``host``."""
    loop = asyncio.get_running_loop()
    found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in found:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


async def checked_addresses(host: str, port: int, resolve: Resolver) -> list[str]:
    """The addresses to connect to for ``host``, every one of them checked.

    Raises:
        RefusedAddress: the name, or any address it resolves to, is refused (one bad
            address among good ones could be the one a retry lands on).
        OSError: the name does not resolve.
    """
    if (why := refused_name(host)) is not None:
        raise RefusedAddress(why)
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        addresses = [host]
    except ValueError:
        addresses = await resolve(host, port)
    if not addresses:
        raise OSError(f"{host} has no address")
    for address in addresses:
        if (why := refused_ip(address)) is not None:
            raise RefusedAddress(f"{host} resolves to {why}" if address != host else why)
    return addresses
