"""The cache of passed verdicts changes no verdict: on many mutated events the cached path gives exactly what the
full judgement (our walk + protobuf's ParseDict) gives, and refuses everything ParseDict refuses."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format

from probe.wire import schema

_TS = "2026-12-01T16:22:10.123456Z"
_MSG = {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "working on it"}], "taskId": "t-1",
        "contextId": "c-1"}
BASES: list[dict[str, Any]] = [
    {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": _TS},
              "history": [{**_MSG, "role": "ROLE_USER"}], "metadata": {"k": "v", "n": 1}}},
    {"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                      "status": {"state": "TASK_STATE_WORKING", "timestamp": _TS, "message": _MSG}}},
    {"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": False, "lastChunk": True,
                        "artifact": {"artifactId": "a-1", "name": "result",
                                     "parts": [{"text": "hello"}, {"raw": "aGVsbG8=", "mediaType": "text/plain"},
                                               {"url": "http://x/y", "filename": "f"}, {"data": {"a": [1, "b"]}}]}}},
    {"message": {**_MSG, "extensions": ["urn:x"], "referenceTaskIds": ["t-0"]}},
    {"status_update": {"task_id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
                       "x-unknown": {"y": [1, 2]}}},
]

# what a leaf may become: texts the parser accepts and refuses, other JSON types, bad times, enum names, base64
STRINGS = ["", "plain", "ünïcödé ✓", "\ud800", "a\udfffb", "\ud83d\ude00", "\x00", "TASK_STATE_FAILED",
           "TASK_STATE_UNSPECIFIED", "ROLE_USER", "working", "2026-12-01T16:22:10Z", "2026-12-01T16:22:10.1+02:00",
           "2026-12-01T16:22:10", "2026-13-01T16:22:10Z", "2026-02-30T00:00:00Z", "2026-12-01t16:22:10Z",
           "2026-12-01T16:22:10z", "2026-12-01T23:59:60Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
           "2026-12-01T16:22:10.1234567891Z", "2026-12-01T16:22:10-25:00", "\u0662026-12-01T16:22:10Z",
           "aGVsbG8", "a$$b", "abcde", "aGV-bG8_", "7", "-3", " 1", "1e3", "true", "null"]
OTHERS: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, 2**63, -0.0, [], ["x"], [None], {}, {"a": 1},
                     {"text": "x"}, [{"text": "x"}]]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value
    holder = doc
    for p in path[:-1]:
        holder = holder[p]
    holder[path[-1]] = value
    return doc


def _drop(doc: Any, path: tuple[Any, ...]) -> Any:
    doc = copy.deepcopy(doc)
    holder = doc
    for p in path[:-1]:
        holder = holder[p]
    del holder[path[-1]]
    return doc


def _rename(doc: Any, path: tuple[Any, ...], name: str) -> Any:
    doc = copy.deepcopy(doc)
    holder = doc
    for p in path[:-1]:
        holder = holder[p]
    holder[name] = holder.pop(path[-1])
    return doc


def mutants() -> Iterator[Any]:
    rng = random.Random(14)
    for base in BASES:
        yield base
        for path in _leaves(base):
            if not path:
                continue
            for value in STRINGS + OTHERS:
                yield _set(base, path, value)
            if isinstance(path[-1], str):
                yield _drop(base, path)
                yield _rename(base, path, rng.choice(["unknownField", "snake_case", path[-1] + "s", "text",
                                                       "url", "timestamp", "state"]))
        # two mutations at once, so a cached skeleton is met with other strings than the one it was made from
        paths = [p for p in _leaves(base) if p]
        for _ in range(300):
            doc = base
            for _ in range(2):
                live = [p for p in _leaves(doc) if p]
                doc = _set(doc, rng.choice(live or paths), rng.choice(STRINGS + OTHERS))
            yield doc


CORPUS = list(mutants())


def _full(payload: Any, root: str) -> schema.Verdict:
    cls = a2a_pb2.StreamResponse
    return schema._parse(cls, cls.DESCRIPTOR, payload, "d", root)  # type: ignore[arg-type]


def _fast(payload: Any, root: str) -> schema.Verdict:
    return schema._proto(a2a_pb2.StreamResponse, payload, "d", root)


def _same(a: schema.Verdict, b: schema.Verdict) -> tuple[Any, ...]:
    return (a.problems, a.ignored, a.snake_case) == (b.problems, b.ignored, b.snake_case), a, b


@pytest.mark.parametrize("warm", [False, True])
def test_cached_verdicts_equal_the_full_judgement_on_mutated_events(warm: bool) -> None:
    schema._PASSED.clear()
    if warm:  # every passing mutant cached first: each later lookup meets a skeleton made from another event
        for doc in CORPUS:
            _fast(doc, "warm")
    hits = 0
    for i, doc in enumerate(CORPUS):
        full = _full(doc, f"event {i}")
        before = len(schema._PASSED)
        fast = _fast(doc, f"event {i}")
        hits += full.ok and len(schema._PASSED) == before
        same, a, b = _same(fast, full)
        assert same, (doc, a, b)
    assert len(CORPUS) > 2000
    if warm:
        assert hits > 100  # the cache was used, so this test can fail when it errs


def test_whatever_parsedict_refuses_fails() -> None:
    schema._PASSED.clear()
    for doc in CORPUS:
        _fast(doc, "warm")
    for doc in CORPUS:
        try:
            json_format.ParseDict(doc, a2a_pb2.StreamResponse(), ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, ValueError, AttributeError, SystemError):
            assert not _fast(doc, "result").ok, doc


def test_strings_and_timestamps_are_erased_but_checked() -> None:
    desc = a2a_pb2.StreamResponse.DESCRIPTOR
    base = BASES[1]
    other = _set(_set(base, ("statusUpdate", "taskId"), "another id"),
                 ("statusUpdate", "status", "timestamp"), "2027-01-02T03:04:05Z")
    assert schema.skeleton(desc, base) == schema.skeleton(desc, other)  # type: ignore[arg-type]
    for path, value in [(("statusUpdate", "taskId"), "\ud800"), (("statusUpdate", "status", "state"),
                                                                   "TASK_STATE_FAILED"),
                        (("statusUpdate", "status", "timestamp"), "2026-13-01T00:00:00Z"),
                        (("statusUpdate", "taskId"), 1)]:
        assert schema.skeleton(desc, base) != schema.skeleton(desc, _set(base, path, value))  # type: ignore[arg-type]
    assert schema.skeleton(desc, _set(base, ("statusUpdate", "final"), True)) != schema.skeleton(  # type: ignore[arg-type]
        desc, _set(base, ("statusUpdate", "final"), 1))  # type: ignore[arg-type]


@pytest.mark.parametrize("payload", [{"task": "\ud800"}, {"statusUpdate": {"taskId": "t", "contextId": "c",
                                                                          "status": {"state": "\ud800"}}}])
def test_a_lone_surrogate_is_a_problem_not_a_crash(payload: Any) -> None:
    verdict = schema.validate("1.0", "JSONRPC", schema.Shape.STREAM_EVENT, payload)
    assert verdict.problems and verdict.problems[0].startswith("result")


@pytest.mark.parametrize("metadata", [{str(i): i for i in range(schema._MAX_NODES + 10)},
                                      {"k": "x" * (schema._MAX_NODES * schema._FREE_CHARS + 100)},
                                      {"x" * (schema._MAX_NODES * schema._FREE_CHARS + 100): 1}])
def test_a_payload_too_big_to_remember_is_judged_in_full(metadata: dict[str, Any]) -> None:
    schema._PASSED.clear()
    huge = {"message": {**_MSG, "metadata": metadata}}
    assert schema.skeleton(a2a_pb2.StreamResponse.DESCRIPTOR, huge) is None  # type: ignore[arg-type]
    assert _fast(huge, "r").ok
    assert not schema._PASSED
    long_text = {"message": {**_MSG, "parts": [{"text": "x" * 10**6}]}}  # erased: a proto string, not kept
    assert schema.skeleton(a2a_pb2.StreamResponse.DESCRIPTOR, long_text) is not None  # type: ignore[arg-type]


def test_the_cache_is_bounded() -> None:
    schema._PASSED.clear()
    for i in range(schema._MAX_PASSED + 50):
        _fast({"message": {**_MSG, "metadata": {"n": i}}}, "r")
    assert len(schema._PASSED) == schema._MAX_PASSED


def _stamps() -> Iterator[str]:
    """Timestamps around every field's boundaries, in the canonical form and just outside it."""
    years = ["0000", "0001", "1969", "1970", "2000", "2024", "2100", "9999"]
    days = {"01": ["00", "01", "28", "29", "30", "31", "32"], "02": ["28", "29", "30"], "04": ["30", "31"],
            "12": ["31"], "00": ["01"], "13": ["01"], "1a": ["01"]}
    times = ["00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "23:59:61", "23:59:62", "12:34:56",
             "9:00:00", "00:00:0a"]
    fractions = ["", ".", ".0", ".5", ".123456", ".999999999", ".0000000001", ".1234567890", ".99999999950"]
    zones = ["Z", "z", "+00:00", "-00:00", "+01:00", "-01:00", "+14:00", "-12:30", "+99:99", "-99:99", "+0100",
             "+01", "", "ZZ", "Z ", "+01:00Z"]
    for y in years:
        for mo, ds in days.items():
            for d in ds:
                for t in times:
                    yield f"{y}-{mo}-{d}T{t}Z"
                yield f"{y}-{mo}-{d}t00:00:00Z"
    for y in years:
        for t in ("00:00:00", "23:59:59"):
            for f in fractions:
                for z in zones:
                    yield f"{y}-12-31T{t}{f}{z}"
                    yield f"{y}-01-01T{t}{f}{z}"
    yield from ["\u0662026-12-01T16:22:10Z", "\uff12026-12-01T16:22:10Z", "2026-12-01T16:22:10.\u0661Z", "", "Z", "+",
                "2026-12-01 16:22:10Z", " 2026-12-01T16:22:10Z", "2026-12-01T16:22:10Z\n", "12026-12-01T16:22:10Z"]


def test_the_timestamp_fast_path_accepts_exactly_what_protobuf_accepts() -> None:
    seen = {True: 0, False: 0}
    canonical = 0
    for value in _stamps():
        official = schema._stamp_passes_official(value)
        assert schema._stamp_passes(value) is official, value
        seen[official] += 1
        canonical += schema._CANONICAL_STAMP.fullmatch(value) is not None
    assert seen[True] > 200 and seen[False] > 200 and canonical > 400  # both answers, mostly on the fast path


def test_remembered_timestamps_give_the_same_answer_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    schema._STAMPS.clear()
    values = list(_stamps())
    first = [schema._stamp_passes(v) for v in values]
    assert [schema._stamp_passes(v) for v in values] == first  # the second time from the memo
    assert 0 < len(schema._STAMPS) <= schema._MAX_STAMPS
    long = "2026-12-01T16:22:10." + "1" * 60 + "Z"
    assert schema._stamp_passes(long) is schema._stamp_passes_official(long) and long not in schema._STAMPS
    monkeypatch.setattr(schema, "_MAX_STAMPS", 8)
    schema._STAMPS.clear()
    for v in values[:100]:
        schema._stamp_passes(v)
    assert len(schema._STAMPS) <= 8
