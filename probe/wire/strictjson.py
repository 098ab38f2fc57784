"""Strict JSON: duplicate keys and NaN/Infinity are errors, with a message that names them.

Python's json module silently keeps the last duplicate key and accepts NaN; a peer that emits
either is non-conformant, and a probe that repairs it would hide the deviation.
"""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r} in a JSON object")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise StrictJSONError(f"{name} is not valid JSON (only finite numbers are allowed)")


# What json.loads(text, object_pairs_hook=..., parse_constant=...) builds on every call (a decoder and its C
# scanner), built once: a third of the cost of decoding an SSE event. The scanner keeps no state between calls.
_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


def loads(data: bytes | str) -> Any:
    """Parse strict JSON or raise StrictJSONError with a human-readable reason."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"body is not UTF-8: {exc.reason} at byte {exc.start}") from None
    try:
        if text.startswith("\ufeff"):  # what json.loads refuses before decoding
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return _DECODER.decode(text)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise StrictJSONError("invalid JSON: nested too deeply") from None
