from __future__ import annotations

import sys

import pytest

from probe.wire.strictjson import StrictJSONError, exceeds, loads


def test_plain_json_parses() -> None:
    assert loads(b'{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}


@pytest.mark.parametrize(("raw", "fragment"), [
    (b'{"name": "a", "name": "b"}', "duplicate key 'name'"),
    (b'{"outer": {"k": 1, "k": 2}}', "duplicate key 'k'"),
    (b'{"x": NaN}', "NaN is not valid JSON"),
    (b'{"x": -Infinity}', "-Infinity is not valid JSON"),
    (b'{"x": ', "invalid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[" * 100000 + b"]" * 100000, "invalid JSON"),
    ("\ufeff{}", "invalid JSON: Unexpected UTF-8 BOM"),
    (b"\xef\xbb\xbf{}", "invalid JSON: Unexpected UTF-8 BOM"),
    # past Python's int conversion limit (4300 digits by default) the C scanner raises a bare ValueError
    (b'{"n": ' + b"9" * 100_000 + b"}", "invalid JSON: a number of 100000 digits at line 1 column 7"),
    (b'[1,\n -' + b"1" * 5000 + b"]", "a number of 5000 digits at line 2 column 2"),
])
def test_strict_errors_name_the_problem(raw: bytes | str, fragment: str) -> None:
    with pytest.raises(StrictJSONError, match=fragment.replace("(", r"\(")):
        loads(raw)


def test_a_long_number_error_is_a_strict_error_and_says_the_limit() -> None:
    """The error is the module's own (callers catch StrictJSONError), says the limit, and the limit stands."""
    with pytest.raises(StrictJSONError, match=f"more than the {sys.get_int_max_str_digits()} "):
        loads("[" + "7" * 4301 + "]")
    assert loads("[" + "7" * 4300 + "]") == [int("7" * 4300)]


@pytest.mark.parametrize(("doc", "values"), [
    (1, 1), ([], 1), ({}, 1), ([1, 2, 3], 4), ({"a": 1, "b": [2, {"c": None}]}, 6), ([[[[]]]], 4)])
def test_exceeds_counts_every_value(doc: object, values: int) -> None:
    assert not exceeds(doc, values) and exceeds(doc, values - 1)


def test_the_value_bound_stops_judging_a_message_and_says_it_is_the_probes() -> None:
    """Past schema.MAX_VALUES the (pure-Python) protobuf parser is not run; the verdict names the probe's bound."""
    from probe.wire import schema

    def task(n: int) -> dict[str, object]:
        return {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                         "metadata": {"a": [[]] * n}}}

    size = len(str(task(0)).split(",")) + 6  # the values around the metadata list, generously
    at_limit = schema.validate("1.0", "JSONRPC", schema.Shape.SEND_RESULT, task(schema.MAX_VALUES - size))
    assert at_limit.ok and at_limit.limit is None
    over = schema.validate("1.0", "HTTP+JSON", schema.Shape.SEND_RESULT, task(schema.MAX_VALUES))
    assert not over.ok and over.limit is not None and f"more than {schema.MAX_VALUES} JSON values" in over.limit
    assert "the probe" in over.limit


def test_the_reason_says_the_value_bound() -> None:
    from probe.reasons import Reason, describe
    from probe.wire.schema import MAX_VALUES

    assert f"({MAX_VALUES:,})" in describe(Reason.WORK_LIMIT_EXCEEDED)


def test_the_first_key_seen_twice_is_named() -> None:
    with pytest.raises(StrictJSONError, match="duplicate key 'b'"):
        loads('{"a": 1, "b": 2, "b": 3, "a": 4}')
    assert loads('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}  # the same key in another object


_BODIES = [
    {"jsonrpc": "2.0", "id": "7f0c", "method": "SendStreamingMessage",
     "params": {"message": {"role": "ROLE_USER", "messageId": "m",
                            "parts": [{"text": "héllo ✓ \u2028 \"q\" \\ \x01"}]}}},
    {"a": [1, -2, 2.5, 1e300, 10 ** 30, None, True, False, "", [], {}], "b": (1, "t"), "nested": {"x": {"y": [{}]}}},
    {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "ints": {1: "int key", 2.5: "float key"}},
    ["top-level list", "\ud83d\ude00"], "a string", 3, None,
]


@pytest.mark.parametrize("body", _BODIES)
def test_compact_is_json_dumps_compact(body: object) -> None:
    import json
    from json import encoder

    from probe.wire import strictjson

    assert encoder.c_make_encoder is not None  # the C path: the one the probe takes here
    assert strictjson.compact(body) == json.dumps(body, separators=(",", ":"))


def test_compact_without_the_c_accelerator_and_on_what_json_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    from json import encoder

    from probe.wire import strictjson

    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        strictjson.compact({"a": {1}})
    monkeypatch.setattr(encoder, "c_make_encoder", None)
    plain = strictjson._compact_encoder()
    for body in _BODIES:
        assert plain(body) == json.dumps(body, separators=(",", ":"))
