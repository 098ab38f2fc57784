from __future__ import annotations

import sys

import pytest

from probe.wire.strictjson import StrictJSONError, loads


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
