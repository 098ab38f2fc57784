"""Pure per-agent caches sized for a fleet on one replica: a cache smaller than the fleet misses every probe."""

from __future__ import annotations

import pytest

from probe import redact
from probe.checks import card, urls

URLS = ["http://127.0.0.1:8000/a/agent-1/rpc", "https://gw.example.com/api/a2a/api/a2a/rpc",
        "http://user:pw@host.example/rpc?token=abc&x=1", "http://[::1]:8080/a", "http://host:99999/x", "HTTP://H/"]


@pytest.mark.parametrize("u", URLS)
def test_url_is_the_same_answer_cached_or_not(u: str) -> None:
    assert redact.url(u) == redact.url.__wrapped__(u)


def test_a_clean_url_comes_back_as_itself() -> None:
    u = "http://127.0.0.1:8000/a/agent-1/rpc"
    assert redact.url.__wrapped__(u) is u  # one string kept per entry, not two
    assert redact.url("http://user:pw@h.example/p?token=s3cr3t") == f"http://h.example/p?token={redact.REDACTED}"


@pytest.mark.parametrize(("card_url", "advertised"), [
    ("https://gw.example.com/api/a2a/.well-known/agent-card.json", "https://gw.example.com/api/a2a/api/a2a/rpc"),
    ("https://gw.example.com/.well-known/agent-card.json", "http://127.0.0.1:8000/rpc"),
    ("http://127.0.0.1:8000/a/x/.well-known/agent-card.json", "http://127.0.0.1:8000/a/x/rpc"),
])
def test_diagnose_is_the_same_answer_cached_or_not(card_url: str, advertised: str) -> None:
    assert urls.diagnose(card_url, advertised) == urls.diagnose.__wrapped__(card_url, advertised)


def test_the_caches_hold_a_fleet() -> None:
    assert urls.diagnose.cache_info().maxsize >= card.CACHE_SIZE  # one entry an agent, like the card cache
    assert (redact.url.cache_info().maxsize or 0) >= 2 * card.CACHE_SIZE  # its card's URL and its interface's


@pytest.mark.parametrize("u", [*URLS, "http://a@b/", "http://h/p@q", "http://[bad/@x", "mailto:x@y", "", "@"])
def test_strip_userinfo_fast_path_is_the_general_answer(u: str) -> None:
    assert redact.strip_userinfo(u) == redact._strip_parsed(u)
