"""Where a caller-chosen probe may send requests: the SSRF guard of `/probe?target=`.

A probe of a URL an HTTP caller chose must not turn the daemon into a proxy or a port scanner.
Every request of such a probe - the card, each redirect and the advertised interface - must match
the URL pattern, and every address its host resolves to (checked at connect time, so DNS rebinding
gains nothing) must lie in an allowed network. Link-local, cloud-metadata and loopback addresses
are refused even inside a broad range such as 0.0.0.0/0, unless a listed network lies inside them.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# refused unless listed explicitly: a network in probe_target_networks that lies inside one of these
SENSITIVE: tuple[tuple[Network, str], ...] = (
    (ipaddress.ip_network("169.254.0.0/16"), "link-local (cloud metadata: 169.254.169.254)"),
    (ipaddress.ip_network("fe80::/10"), "link-local"),
    (ipaddress.ip_network("fd00:ec2::254/128"), "AWS instance metadata"),
    (ipaddress.ip_network("100.100.100.200/32"), "Alibaba Cloud metadata"),
    (ipaddress.ip_network("168.63.129.16/32"), "Azure host services"),
    (ipaddress.ip_network("127.0.0.0/8"), "loopback (the daemon's own endpoints)"),
    (ipaddress.ip_network("::1/128"), "loopback (the daemon's own endpoints)"),
    (ipaddress.ip_network("0.0.0.0/8"), "unspecified"),
    (ipaddress.ip_network("::/128"), "unspecified"),
)
DEFAULT_NETWORKS = ("0.0.0.0/0", "::/0")


class EgressRefused(OSError):
    """Raised inside the connector: aiohttp wraps it, the HTTP client turns it back into a refusal."""


@dataclass(frozen=True, slots=True)
class Egress:
    pattern: re.Pattern[str]
    networks: tuple[Network, ...]

    @classmethod
    def build(cls, pattern: str, networks: list[str] | tuple[str, ...]) -> Egress:
        return cls(re.compile(pattern), tuple(ipaddress.ip_network(n, strict=False) for n in networks))

    def url_problem(self, url: str) -> str | None:
        if self.pattern.fullmatch(url):
            return None
        return "the URL does not match probe_target_pattern"

    def address_problem(self, host: str) -> str | None:
        """Why a connection to this IP address is refused, or None."""
        try:
            addr = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return None  # not an address: the resolver checks what it resolves to
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        listed = [n for n in self.networks if n.version == addr.version and addr in n]
        if not listed:
            return f"address {addr} is not in probe_target_networks"
        for sensitive, what in SENSITIVE:
            if sensitive.version == addr.version and addr in sensitive and not any(
                    n.subnet_of(sensitive) for n in listed if n.version == sensitive.version):  # type: ignore[arg-type]
                return f"address {addr} is {what}; list it in probe_target_networks to allow it"
        return None


class EgressResolver(AbstractResolver):
    """The default resolver, with every address the egress policy refuses dropped (none left: refused)."""

    def __init__(self, egress: Egress, inner: AbstractResolver) -> None:
        self._egress = egress
        self._inner = inner

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET,
                      ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        allowed = [h for h in found if self._egress.address_problem(str(h["host"])) is None]
        if not allowed:
            why = self._egress.address_problem(str(found[0]["host"])) if found else "no address"
            raise EgressRefused(f"{host} refused: {why}")
        return allowed

    async def close(self) -> None:
        await self._inner.close()


def describe(exc: Any) -> str | None:
    """The refusal inside an aiohttp connector error, if that is what it is."""
    os_error = getattr(exc, "os_error", None)
    return str(os_error) if isinstance(os_error, EgressRefused) else None
