"""Every requirement of the official TCK is accounted for: a check tests it, UNCOVERED lists it with why, or
TCK_NOT_APPLICABLE says why a server probe cannot grade it.

The TCK's ids, levels and sections are a snapshot (tests/fixtures/tck_requirements.json, written by
`python -m bench.tck_snapshot` from a2aproject/a2a-tck's tck/requirements/*.py at the commit it names): a new TCK
requirement shows up here once the snapshot is regenerated.
"""

from __future__ import annotations

import json
from pathlib import Path

from probe.checks.registry import REQUIREMENTS, TCK_NOT_APPLICABLE, UNCOVERED

SNAPSHOT = Path(__file__).resolve().parent.parent / "fixtures" / "tck_requirements.json"


def _tck() -> dict[str, dict[str, str]]:
    snap = json.loads(SNAPSHOT.read_text())
    assert len(snap["source"]["commit"]) == 40
    return {r["id"]: r for r in snap["requirements"]}


def _claimed() -> dict[str, set[str]]:
    """TCK id -> where the registry accounts for it (check ids, uncovered ids, "n/a")."""
    out: dict[str, set[str]] = {}
    for check_id, req in REQUIREMENTS.items():
        for tck in req.tck:
            out.setdefault(tck, set()).add(check_id)
    for gap in UNCOVERED:
        for tck in gap.tck:
            out.setdefault(tck, set()).add(f"uncovered:{gap.id}")
    for tck in TCK_NOT_APPLICABLE:
        out.setdefault(tck, set()).add("n/a")
    return out


def test_every_tck_requirement_is_a_check_an_uncovered_entry_or_not_applicable() -> None:
    missing = sorted(set(_tck()) - set(_claimed()))
    assert not missing, f"TCK requirements neither tested, listed in UNCOVERED nor TCK_NOT_APPLICABLE: {missing}"


def test_the_registry_names_only_ids_the_tck_has() -> None:
    assert not sorted(set(_claimed()) - set(_tck()))


def test_an_id_is_tested_or_uncovered_or_not_applicable_never_two_of_them() -> None:
    for tck, where in _claimed().items():
        kinds = {"n/a" if w == "n/a" else "uncovered" if w.startswith("uncovered:") else "check" for w in where}
        assert len(kinds) == 1, (tck, sorted(where))


def test_not_applicable_is_reasoned_and_never_a_server_must_that_a_check_could_test() -> None:
    tck = _tck()
    for tck_id, why in TCK_NOT_APPLICABLE.items():
        level = tck[tck_id]["level"]
        assert why and (level == "MAY" or "client" in why), (tck_id, level, why)


def test_uncovered_tck_levels_match_the_text() -> None:
    """An UNCOVERED entry's 1.0 level is the TCK's level of each id it claims, or says why not (the SHOULDs of
    AUTH-INTASK-005/006 ride with their section's MUSTs)."""
    tck = _tck()
    for gap in UNCOVERED:
        rule = gap.rules["1.0"]
        for tck_id in gap.tck:
            assert tck[tck_id]["level"] == rule.level.value or tck[tck_id]["level"] in rule.words, (gap.id, tck_id)
            assert tck[tck_id]["section"].split(".")[0] in rule.section, (gap.id, tck_id)
