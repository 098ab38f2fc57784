"""Strict JSON: duplicate keys and NaN/Infinity are errors, with a message that names them.

Python's json module silently keeps the last duplicate key and accepts NaN; a peer that emits
either is non-conformant, and a probe that repairs it would hide the deviation.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from json import encoder as _json_encoder
from typing import Any


class StrictJSONError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # in C; a duplicate key leaves fewer entries than pairs
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:  # the first key seen twice, as a member-by-member check would name it
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} in a JSON object")
            seen.add(key)
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
    except ValueError:  # int() of more digits than sys.get_int_max_str_digits(): a bare ValueError from the scanner
        raise _long_number(text) from None


_LONG_INT = re.compile(r"-?\d+")


def _long_number(text: str) -> StrictJSONError:
    """The error for an integer literal past Python's conversion limit, where json.loads (and so the a2a-sdk)
    fails too; RFC 7493 §2.2: interoperable numbers are IEEE 754 doubles."""
    limit = sys.get_int_max_str_digits()
    match = next((m for m in _LONG_INT.finditer(text) if len(m.group().lstrip("-")) > limit), None)
    if match is None:  # not the digits limit after all: say what the parser said
        return StrictJSONError("invalid JSON: a value the parser cannot convert")
    where = json.JSONDecodeError("", text, match.start())
    return StrictJSONError(f"invalid JSON: a number of {len(match.group().lstrip('-'))} digits at line {where.lineno} "
                           f"column {where.colno} (more than the {limit} Python's JSON converts)")


def exceeds(doc: Any, limit: int) -> bool:
    """Whether decoded JSON holds more than `limit` values (an object member counts as one, with its key);
    counted only up to the limit, so a huge document costs no more than a document at the limit."""
    left = limit - 1  # the document itself
    if left < 0:
        return True
    stack = [doc]
    while stack:
        value = stack.pop()
        cls = value.__class__
        if cls is dict:
            left -= len(value)
            if left < 0:
                return True
            stack.extend(value.values())
        elif cls is list:
            left -= len(value)
            if left < 0:
                return True
            stack.extend(value)
    return False


def _not_serializable(o: Any) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")  # json.dumps' own words


def _compact_encoder() -> Callable[[Any], str]:
    """`json.dumps(obj, separators=(",", ":"))`, character for character, without the JSONEncoder and C encoder
    dumps builds on every call (half its cost for a request body). What it encodes is the probe's own request
    bodies: no cycles to look for."""
    make = getattr(_json_encoder, "c_make_encoder", None)  # the C accelerator (typeshed does not declare it)
    if make is None:  # no C accelerator: json.dumps itself
        return lambda obj: json.dumps(obj, separators=(",", ":"))
    encode = make(None, _not_serializable, _json_encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda obj: "".join(encode(obj, 0))


compact: Callable[[Any], str] = _compact_encoder()
