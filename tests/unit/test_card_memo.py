"""The card URLs tried and the interface URLs' parse are remembered: the same answers, never shared lists, bounded."""

from __future__ import annotations

import pytest

from probe.wire import card


def test_candidate_urls_are_the_same_every_time_and_a_fresh_list() -> None:
    for base, explicit in (("http://a/x", None), ("http://a/x/", None), ("http://a/card.json", None),
                           ("http://a/.well-known/agent-card.json", None), ("http://a/x", "http://b/c.json")):
        first = card.candidate_urls(base, explicit)
        assert first == card._candidate_urls(base, explicit)
        first.append("mutated by a caller")
        assert card.candidate_urls(base, explicit) == card._candidate_urls(base, explicit)


def test_a_huge_url_is_answered_but_not_kept() -> None:
    huge = "http://a/" + "p" * 5000
    before = len(card._CANDIDATES)
    assert card.candidate_urls(huge, None)[0] == huge + card.WELL_KNOWN
    assert len(card._CANDIDATES) == before
    assert card._parsable(huge) and huge not in card._PARSABLE


def test_parsable_remembers_both_answers() -> None:
    assert card._parsable("http://a:1/x") is True and card._parsable("http://a:1/x") is True
    assert card._parsable("http://a:99999999/x") is False and card._parsable("http://a:99999999/x") is False
    assert card._parsable("http://[::1/x") is False
    assert card._parsable(7) is False


def test_the_memos_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(card, "_MEMO_MAX", 4)
    for i in range(20):
        card.candidate_urls(f"http://a/{i}", None)
        card._parsable(f"http://a/{i}")
    assert len(card._CANDIDATES) <= 4 and len(card._PARSABLE) <= 4
