from __future__ import annotations

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
])
def test_strict_errors_name_the_problem(raw: bytes | str, fragment: str) -> None:
    with pytest.raises(StrictJSONError, match=fragment.replace("(", r"\(")):
        loads(raw)
