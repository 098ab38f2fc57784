"""URL diagnostics: compare the advertised interface URL with where the card was found.

These catch the gateway bugs that leave the card green and every real client broken: a path
prefix written twice, an in-cluster or loopback host, an http URL behind an https card.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from probe.wire.card import LEGACY_WELL_KNOWN, WELL_KNOWN

_CLUSTER_SUFFIXES = (".svc", ".svc.cluster.local", ".cluster.local")
_UNSPECIFIED = {"0.0.0.0", "::", "[::]"}

# host classes, from least to most reachable
UNSPECIFIED, LOOPBACK, CLUSTER, PRIVATE, PUBLIC = range(5)
_CLASS_NAMES = {UNSPECIFIED: "an unspecified address", LOOPBACK: "a loopback host",
                CLUSTER: "an in-cluster Kubernetes name", PRIVATE: "a private address", PUBLIC: "a public host"}


@dataclass(frozen=True, slots=True)
class Finding:
    check_id: str
    message: str
    recommendation: str


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def card_prefix(card_url: str) -> str:
    """The path the card sits under: the gateway route prefix, if any."""
    path = urlsplit(card_url).path
    for suffix in (WELL_KNOWN, LEGACY_WELL_KNOWN):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path.rsplit("/", 1)[0]


def doubled_prefix(card_url: str, interface_url: str) -> str | None:
    """The repeated path run in the advertised URL (e.g. '/api/a2a'), or None.

    Two shapes are seen in the field: a run of segments written twice in a row
    (`/api/a2a/api/a2a/ns/name`, kagent behind a gateway), and the leading segment of the card's
    prefix reappearing after it (`/a2a/tick/a2a/tock`, agentgateway #2981).
    """
    adv = _segments(urlsplit(interface_url).path)
    prefix = _segments(card_prefix(card_url))
    for k in range(len(adv) // 2, 0, -1):
        for i in range(len(adv) - 2 * k + 1):
            if adv[i:i + k] == adv[i + k:i + 2 * k]:
                return "/" + "/".join(adv[i:i + k])
    if prefix and adv[:1] == prefix[:1] and adv != prefix:
        first = prefix[0]
        if first in adv[1:] and adv[: len(prefix)] == prefix and len(adv) > len(prefix):
            return "/" + first
    return None


@lru_cache(maxsize=4096)  # a fleet has few hosts (gateways): one ipaddress parse each, not two per probe
def host_class(host: str) -> int:
    h = host.strip("[]").lower()
    if h in _UNSPECIFIED or h == "::":
        return UNSPECIFIED
    if h == "localhost" or h.endswith(".localhost"):
        return LOOPBACK
    if h.endswith(_CLUSTER_SUFFIXES):
        return CLUSTER
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return PUBLIC if "." in h else CLUSTER  # a bare name like "agent" only resolves inside a cluster
    if ip.is_unspecified:
        return UNSPECIFIED
    if ip.is_loopback:
        return LOOPBACK
    if ip.is_private or ip.is_link_local:
        return PRIVATE
    return PUBLIC


# one entry per agent (its card URL and advertised URL): a cache smaller than the fleet missed every probe (18.6 us)
@lru_cache(maxsize=65_536)
def diagnose(card_url: str, interface_url: str) -> tuple[Finding, ...]:
    """Every suspicious property of the advertised URL, relative to the card's own URL (pure, so memoised)."""
    out: list[Finding] = []
    try:
        card, adv = urlsplit(card_url), urlsplit(interface_url)
        adv.port  # noqa: B018  (raises for a malformed port, which card.interfaces reports)
    except ValueError:
        return ()
    run = doubled_prefix(card_url, interface_url)
    if run:
        out.append(Finding(
            "interface.no_path_repeat",
            f"the advertised path {adv.path!r} repeats {run!r}; the card was found under {card_prefix(card_url)!r}",
            f"The advertised URL should be {card.scheme}://{card.netloc}{card_prefix(card_url) or '/'}. "
            "The gateway's base-URL setting should hold only scheme and host; the route prefix is being added twice.",
        ))
    if adv.hostname:
        adv_cls, card_cls = host_class(adv.hostname), host_class(card.hostname or "")
        if adv_cls != card_cls and (adv_cls in (UNSPECIFIED, LOOPBACK, CLUSTER) or card_cls == PUBLIC):
            out.append(Finding(
                "interface.routable_host",
                f"the card (from {card.hostname}, {_CLASS_NAMES[card_cls]}) advertises {adv.hostname}, "
                f"{_CLASS_NAMES[adv_cls]} that clients of the card cannot reach",
                "Set the agent's public base URL (kagent: controller.a2aBaseUrl / A2A_BASE_URL; agentgateway: "
                f"the route's hostname) so the card advertises {card.scheme}://{card.netloc}.",
            ))
    if "@" in adv.netloc:
        out.append(Finding(
            "interface.no_credentials",
            "the advertised URL carries userinfo (user:password@); the probe did not send it",
            "Remove the credentials from the advertised URL; the card is public and clients authenticate with the "
            "card's security schemes.",
        ))
    if card.scheme == "https" and adv.scheme == "http":
        out.append(Finding(
            "interface.scheme",
            f"the card was served over https but advertises an http URL ({adv.scheme}://{adv.hostname})",
            "Advertise the https URL; the gateway should honour X-Forwarded-Proto when rewriting the card.",
        ))
    return tuple(out)
