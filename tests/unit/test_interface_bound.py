"""The bound on interfaces judged per card (probe.wire.card.MAX_INTERFACES): N judged in full, N+1 says the bound
and is judged on its first N, never failed for advertising many."""

from __future__ import annotations

from typing import Any

import pytest

from probe.checks import card as checks
from probe.results import Status
from probe.wire import card as wire
from tests.agents.cards import valid_card

N = wire.MAX_INTERFACES


def _card(n: int, version: str, *, bad_last: bool = False) -> wire.Card:
    urls = [f"https://h{i}.example/a2a" for i in range(n)]
    if bad_last:
        urls[-1] = "not a url"
    doc: dict[str, Any] = valid_card(*urls, version=version) if version == "1.0" else valid_card(urls[0], version="0.3")
    if version == "0.3":
        doc["additionalInterfaces"] = [{"url": u, "transport": "JSONRPC"} for u in urls[1:]]
        if bad_last:
            doc["additionalInterfaces"][-1] = {"url": 1}
    return wire.build(url="https://agent.example/.well-known/agent-card.json", doc=doc)


@pytest.mark.parametrize(("version", "listed", "extra"), [("1.0", "supportedInterfaces", 0),
                                                        ("0.3", "additionalInterfaces", 1)])
def test_n_interfaces_are_judged_in_full(version: str, listed: str, extra: int) -> None:
    card = _card(N + extra, version)  # 0.3: the card's url plus N additional interfaces
    assert len(card.interfaces) == N + extra
    check = checks.interfaces(card)
    assert check.status is Status.PASS and "judged the first" not in check.message, check.message
    assert checks.interfaces(_card(N + extra, version, bad_last=True)).status is Status.FAIL  # the Nth is judged


@pytest.mark.parametrize(("version", "listed", "extra"), [("1.0", "supportedInterfaces", 0),
                                                        ("0.3", "additionalInterfaces", 1)])
def test_n_plus_one_names_the_bound_and_judges_the_first_n(version: str, listed: str, extra: int) -> None:
    card = _card(N + 1 + extra, version)
    assert len(card.interfaces) == N + extra  # the N+1st is neither checked nor offered for selection
    check = checks.interfaces(card)
    assert check.status is Status.PASS, check.message  # advertising many breaks no MUST
    assert (f"{listed} has {N + 1} entries: the probe judged the first {N} (its bound on the interfaces judged "
            "per card)") in check.message
    # a broken entry past the bound is not judged; the bound is still named when the first N hold a problem
    assert checks.interfaces(_card(N + 1 + extra, version, bad_last=True)).status is Status.PASS
    doc = dict(card.doc)
    doc[listed] = [{"url": 1}, *doc[listed][1:]]
    broken = checks.interfaces(wire.build(url=card.url, doc=doc))
    assert broken.status is Status.FAIL and f"the probe judged the first {N}" in broken.message, broken.message
