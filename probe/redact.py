"""One place that decides what is secret, so logs, metrics, reports and /config never leak it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
                            "api-key", "x-auth-token"})
REDACTED = "<redacted>"


def is_secret_header(name: str, extra: frozenset[str] = frozenset()) -> bool:
    low = name.lower()
    return low in SECRET_HEADERS or low in extra or "token" in low or "secret" in low or "key" in low


def headers(h: Mapping[str, str], extra: frozenset[str] = frozenset()) -> dict[str, str]:
    return {k: (REDACTED if is_secret_header(k, extra) else v) for k, v in h.items()}


@lru_cache(maxsize=4096)
def url(u: str) -> str:
    """Drop userinfo and the query string's values: either may carry a credential."""
    try:
        parts = urlsplit(u)
    except ValueError:
        return "<unparsable url>"
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.hostname and ":" in parts.hostname:
        netloc = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port else "")
    query = "&".join(p.split("=", 1)[0] + "=" + REDACTED for p in parts.query.split("&") if p) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
