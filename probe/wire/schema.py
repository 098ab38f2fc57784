"""Strict validation of what an agent sends against the official A2A definitions, as the SDK packages ship them.

Which definitions judge a payload depends on the protocol version and binding it was received in:

* 1.0, every binding: the `lf.a2a.v1` proto (`a2a.types.a2a_pb2`); JSON is ProtoJSON, parsed by protobuf's
  own `json_format`, which is the parser the official clients use.
* 0.3 over JSON-RPC (and 0.2, whose JSON-RPC shapes 0.3 kept): the models generated from the 0.3 JSON schema
  (`a2a.compat.v0_3.types`), which the official 0.3 client parsed with.
* 0.3 over HTTP+JSON or gRPC: the 0.3 proto (`a2a.compat.v0_3.a2a_v0_3_pb2`, package `a2a.v1`).

Unknown fields are ignored, as both specifications require of receivers (1.0 §5.7; the 0.3 schema is open), and
are reported as notes only. Everything else fails with the field path and the offending value: wrong JSON types,
enum names the version does not define, RFC 3339 timestamps without a zone, invalid base64, a required field
that is missing (1.0: `field_behavior = REQUIRED`), and one-of groups with none or several members set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cache, lru_cache
from typing import Any

from google.api import field_behavior_pb2
from google.protobuf import json_format, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtoMessage

from probe.wire import strictjson

_MAX_PROBLEMS = 12
_MAX_VALUE = 60


class Shape(StrEnum):
    """What a payload is expected to be; the same names across versions and bindings."""

    SEND_RESULT = "send_result"  # SendMessage result: a Task or a Message
    STREAM_EVENT = "stream_event"  # one streaming event: Task, Message, status or artifact update
    TASK = "task"  # GetTask / CancelTask result
    LIST_TASKS = "list_tasks"  # ListTasks result (1.0 only)
    PUSH_CONFIG = "push_config"  # a push-notification config
    CARD = "card"  # an Agent Card (public or extended)
    MESSAGE = "message"


@dataclass(slots=True)
class Verdict:
    """The outcome of one validation: `problems` are failures; `ignored` and `snake_case` are observations."""

    definitions: str
    problems: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # unknown fields, ignored as the spec requires
    snake_case: list[str] = field(default_factory=list)  # proto field names where ProtoJSON wants lowerCamelCase
    # REQUIRED fields absent or empty and one-ofs with no member: a MUST of the text (1.0 §5.7) the official parsers
    # read past (json_format does not enforce field_behavior), so not a problem: invoke.required_fields reports them
    required: list[str] = field(default_factory=list)
    limit: str | None = None  # the probe's bound on work that kept the payload from being judged (also a problem)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        more = f" … (+{len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        return "; ".join(self.problems[:5]) + more


def show(value: Any) -> str:
    """A short, single-line rendering of an agent's value for a message (never the whole payload)."""
    text = repr(value)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


# ---- RFC 3339 timestamps and base64: stricter than the Python runtime, as strict as the C++/Java/Go parsers

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")
_B64_STD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_B64_URL = (_B64_STD - {"+", "/"}) | {"-", "_"}


def timestamp_problem(value: Any) -> str | None:
    """Why `value` is not an RFC 3339 date-time with a zone (None when it is one)."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, expected an RFC 3339 string"
    if _RFC3339.fullmatch(value):
        return None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?", value):
        return f"{show(value)} has no time zone (RFC 3339 needs 'Z' or an offset such as +00:00)"
    return f"{show(value)} is not an RFC 3339 date-time"


def base64_problem(value: Any) -> str | None:
    """Why `value` is not ProtoJSON bytes: standard or URL-safe base64, padded or not, one alphabet per value."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, expected a base64 string"
    body = value.rstrip("=")
    alphabet = _B64_URL if ("-" in body or "_" in body) else _B64_STD
    bad = next((i for i, ch in enumerate(body) if ch not in alphabet), None)
    if bad is not None:
        return f"is invalid base64: character {body[bad]!r} at offset {bad}"
    if len(value) - len(body) > 2 or (value != body and len(value) % 4):
        return "is invalid base64: bad '=' padding"
    if len(body) % 4 == 1:
        return f"is invalid base64: length {len(body)} is one more than a multiple of 4"
    return None


# ---- ProtoJSON against a proto descriptor

_REQUIRED = field_behavior_pb2.REQUIRED
# ProtoJSON omits default values, so for fields without presence "absent" only means "empty"; these may be
# legitimately empty although the proto marks them REQUIRED (no tasks on the page; the last page's token is "",
# 1.0 §3.1.4 — its presence is the suite's lifecycle.list_tasks rule)
_EMPTY_ALLOWED = frozenset({"lf.a2a.v1.ListTasksResponse.tasks", "lf.a2a.v1.ListTasksResponse.next_page_token"})
_FREE_FORM = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
                        "google.protobuf.Any", "google.protobuf.FieldMask", "google.protobuf.Duration"})
_WRAPPERS = re.compile(r"google\.protobuf\.\w+Value")


@dataclass(slots=True)
class _Walk:
    verdict: Verdict

    def problem(self, path: str, text: str) -> None:
        if len(self.verdict.problems) < _MAX_PROBLEMS:
            self.verdict.problems.append(f"{path}: {text}")

    def gap(self, path: str, text: str) -> None:
        if len(self.verdict.required) < _MAX_PROBLEMS:
            self.verdict.required.append(f"{path}: {text}")

    def message(self, desc: Descriptor, value: Any, path: str) -> Any:
        """A copy of `value` without unknown fields and without the values already reported, for json_format."""
        if desc.full_name == "google.protobuf.Timestamp":
            why = timestamp_problem(value)
            if why:
                self.problem(path, why)
                return None
            return value
        if desc.full_name in _FREE_FORM or _WRAPPERS.fullmatch(desc.full_name) or not isinstance(value, dict):
            return value  # json_format judges the JSON type
        by_json, by_name, _, _ = _layout(desc)
        clean: dict[str, Any] = {}
        for key, item in value.items():
            fd = by_json.get(key) or by_name.get(key)
            where = f"{path}.{key}"
            if fd is None:
                self.verdict.ignored.append(where)
                continue
            if key != fd.json_name:
                self.verdict.snake_case.append(f"{where} (ProtoJSON name {fd.json_name!r})")
            kept = self.field(fd, item, where)
            if kept is not _DROP:
                clean[fd.json_name] = kept
        self.required(desc, value, path)
        self.oneofs(desc, clean, path)
        return clean

    def field(self, fd: FieldDescriptor, item: Any, where: str) -> Any:
        if item is None:
            return None  # ProtoJSON null: the default value
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            if not isinstance(item, dict):
                return item
            vfd = fd.message_type.fields_by_name["value"]
            return {k: self.single(vfd, v, f"{where}[{k!r}]") for k, v in item.items()}
        if fd.is_repeated:
            if not isinstance(item, list):  # json_format's own words name no path ("must be in [] which is …")
                self.problem(where, f"{show(item)} is {type(item).__name__}, expected a JSON array")
                return _DROP
            kept = [self.single(fd, v, f"{where}[{i}]") for i, v in enumerate(item)]
            return [v for v in kept if v is not _DROP]
        return self.single(fd, item, where)

    def single(self, fd: FieldDescriptor, item: Any, where: str) -> Any:
        if fd.message_type is not None:
            sub = fd.message_type.full_name
            if not isinstance(item, dict) and not (sub in _FREE_FORM or _WRAPPERS.fullmatch(sub)
                                                   or sub == "google.protobuf.Timestamp"):
                # a message is a JSON object (upb's json_format reads a string's characters as field names)
                self.problem(where, f"{show(item)} is {type(item).__name__}, expected a JSON object")
                return _DROP
            cleaned = self.message(fd.message_type, item, where)
            return _DROP if cleaned is None and item is not None else cleaned
        why = _scalar_problem(fd, item)
        if why:
            self.problem(where, why)
            return _DROP
        # a surrogate is in no enum name, and upb's name lookup fails on one instead of answering; a string
        # json_format reads as a number (int(), its own test) is the enum's number, as an integer is
        if fd.enum_type is not None and isinstance(item, str) and (_SURROGATE.search(item) or (
                item not in fd.enum_type.values_by_name and not _is_int(item))):
            names = ", ".join(v.name for v in fd.enum_type.values if v.number != 0)
            self.problem(where, f"{show(item)} is not a {fd.enum_type.name} name (one of {names})")
            return _DROP
        if fd.type == FieldDescriptor.TYPE_BYTES:
            why = base64_problem(item)
            if why:
                self.problem(where, f"{show(item)} {why}" if isinstance(item, str) else why)
                return _DROP
        return item

    def required(self, desc: Descriptor, value: dict[str, Any], path: str) -> None:
        for fd in _layout(desc)[2]:
            present = value.get(fd.json_name, value.get(fd.name))
            if present is None or present == [] or present == "":  # "" is a string's unset default (§5.7: "set")
                self.gap(f"{path}.{fd.json_name}", f"required field is missing (in {desc.name})")

    def oneofs(self, desc: Descriptor, clean: dict[str, Any], path: str) -> None:
        """Exactly one member of each real one-of: the A2A texts require it of every one-of they define."""
        for members in _layout(desc)[3]:
            set_ = [f.json_name for f in members if clean.get(f.json_name) is not None]
            names = "/".join(f.json_name for f in members)
            if not set_ and desc.name in _ENVELOPES:  # a2a-sdk: 'Response has neither task nor message'
                self.problem(path, f"none of {names} is set ({desc.name} needs exactly one)")
            elif not set_:  # read as an empty member (a Part with no content): the text's MUST, not the parser's
                self.gap(path, f"none of {names} is set ({desc.name} needs exactly one)")
            elif len(set_) > 1:
                self.problem(path, f"{' and '.join(set_)} are all set ({desc.name} allows exactly one of {names})")
                for extra in set_[1:]:
                    del clean[extra]  # reported once here, not again by json_format


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


_DROP: Any = object()
# the results' one-of envelopes: with no member, the official clients have nothing to read (a2a-sdk's send_message
# raises "Response has neither task nor message"; a stream event with none is no event)
_ENVELOPES = frozenset({"SendMessageResponse", "StreamResponse"})
_Layout = tuple[dict[str, FieldDescriptor], dict[str, FieldDescriptor], tuple[FieldDescriptor, ...],
                tuple[tuple[FieldDescriptor, ...], ...]]
_NO_DEFAULT_CHECK = frozenset({FieldDescriptor.CPPTYPE_BOOL, FieldDescriptor.CPPTYPE_INT32,
                               FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT32,
                               FieldDescriptor.CPPTYPE_UINT64, FieldDescriptor.CPPTYPE_DOUBLE,
                               FieldDescriptor.CPPTYPE_FLOAT})


@cache
def _layout(desc: Descriptor) -> _Layout:
    """Per message type, once: fields by JSON and proto name, the required fields we can judge, the one-ofs."""
    required = tuple(
        fd for fd in desc.fields
        if _REQUIRED in fd.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        # false/0 are legitimate values that ProtoJSON omits; a map (scopes) may be empty
        and fd.cpp_type not in _NO_DEFAULT_CHECK
        and not (fd.message_type is not None and fd.message_type.GetOptions().map_entry)
        and fd.full_name not in _EMPTY_ALLOWED)
    # a proto3 `optional` field has a synthetic one-of of its own: not a choice
    oneofs = tuple(tuple(g.fields) for g in desc.oneofs if not (len(g.fields) == 1 and g.name.startswith("_")))
    return ({f.json_name: f for f in desc.fields}, {f.name: f for f in desc.fields}, required, oneofs)
_INTS = frozenset({FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT32,
                   FieldDescriptor.CPPTYPE_UINT64})
_FLOATS = frozenset({FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT})
_NUMERIC = re.compile(r"-?\d+")


def _scalar_problem(fd: FieldDescriptor, item: Any) -> str | None:
    """The JSON type a ProtoJSON scalar must have, said with the field's own value (json_format drops the path)."""
    cpp = fd.cpp_type
    if cpp == FieldDescriptor.CPPTYPE_STRING and not isinstance(item, str):
        return f"{show(item)} is {type(item).__name__}, expected a string"
    if cpp == FieldDescriptor.CPPTYPE_BOOL and not isinstance(item, bool):
        return f"{show(item)} is {type(item).__name__}, expected true or false"
    if cpp in _INTS and not ((isinstance(item, int) and not isinstance(item, bool))
                             or (isinstance(item, float) and item.is_integer())
                             or (isinstance(item, str) and _NUMERIC.fullmatch(item))):
        return f"{show(item)} is not an integer"
    if cpp in _FLOATS and (isinstance(item, bool) or not isinstance(item, int | float | str)):
        return f"{show(item)} is not a number"
    if cpp == FieldDescriptor.CPPTYPE_ENUM and (isinstance(item, bool) or not isinstance(item, str | int)):
        return f"{show(item)} is {type(item).__name__}, expected an enum name"
    return None


def _proto(cls: type[ProtoMessage], payload: Any, definitions: str, root: str) -> Verdict:
    if not isinstance(payload, dict):
        verdict = Verdict(definitions)
        verdict.problems.append(f"{root}: is {type(payload).__name__}, expected a JSON object ({cls.__name__})")
        return verdict
    desc: Descriptor = cls.DESCRIPTOR  # type: ignore[assignment]  # the upb runtime's own Descriptor type
    key = skeleton(desc, payload)
    if key is not None:
        seen = _PASSED.get((desc.full_name, key))
        if seen is not None:
            return Verdict(definitions, [], [root + p for p in seen[0]] if seen[0] else [],
                           [root + p for p in seen[1]] if seen[1] else [])
    elif strictjson.exceeds(payload, MAX_VALUES):
        limit = (f"{root} holds more than {MAX_VALUES} JSON values, more than the probe judges in one message "
                 "(its bound on the work an answer may cost)")
        return Verdict(definitions, [limit], limit=limit)
    verdict = _parse(cls, desc, payload, definitions, root)
    if key is not None and verdict.ok and not verdict.required:
        _remember(desc.full_name, key, verdict, len(root))
    return verdict


def _parse(cls: type[ProtoMessage], desc: Descriptor, payload: dict[str, Any], definitions: str,
           root: str) -> Verdict:
    """The full judgement: our walk for paths and named values, then protobuf's own ProtoJSON parser."""
    verdict = Verdict(definitions)
    walk = _Walk(verdict)
    clean = walk.message(desc, payload, root)
    try:
        json_format.ParseDict(clean, cls(), ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        walk.problem(*_tidy(root, str(exc)))
    # the runtime raises these for some shapes (upb: SystemError for a lone surrogate where an object belongs)
    except (TypeError, ValueError, AttributeError, SystemError) as exc:
        walk.problem(*_tidy(root, f"{type(exc).__name__}: {exc}"))
    return verdict


# ---- passed verdicts, cached by skeleton (equivalence-preserving)
#
# A verdict without problems is remembered under the payload's *skeleton*: the payload with every leaf kept
# exactly (its JSON type included: true, 1 and 1.0 differ), except two kinds of leaf the verdict cannot depend
# on, read from the descriptor: a str in a proto `string` field with no surrogate code point (protobuf checks
# nothing else in a string: unpaired surrogates by pattern, paired ones when encoding; our walk checks only that
# it is a str), and a Timestamp that both `timestamp_problem` and protobuf's own `Timestamp.FromJsonString` (what
# json_format calls) accept. Enum names, bytes, numbers, int64 strings, map and free-form (Struct, Value, Any)
# contents, unknown fields and every key stay in the skeleton. Payloads that hold a failure are never cached:
# they go through the full judgement every time. The paths in `ignored` / `snake_case` are stored relative to
# the root, since the root names the event.

_ERASED: Any = object()  # a proto string the parser accepts whatever its characters
_STAMP: Any = object()  # a Timestamp the parser accepts
_TRUE: Any = object()
_FALSE: Any = object()
_OBJ: Any = object()
_ARR: Any = object()
_FLOAT: Any = object()
# bounded memory: at most _MAX_PASSED skeletons (insertion-ordered, the oldest dropped), each of at most
# _MAX_NODES units (a member of an object or array, or _FREE_CHARS characters of a string kept verbatim): about
# 32 KiB of kept text and 16 KiB of tuples at worst, so a few tens of MiB for the whole cache. A bigger payload
# is judged in full every time.
_MAX_PASSED = 1024
_MAX_NODES = 2000
# The most JSON values one message is judged with: protobuf's json_format.ParseDict is pure Python, ~10-15 us a
# value, so a 4 MiB answer of 1.4 million tiny values held the loop (every probe of the daemon) for ~20 s, far past
# any deadline; 50,000 values is ~0.7 s at worst and far above a health-check answer. Counted only for payloads the
# skeleton already found big (more than _MAX_NODES units), so an ordinary message pays nothing.
MAX_VALUES = 50_000
_FREE_CHARS = 16
_K_STRING, _K_STAMP, _K_MESSAGE, _K_EXACT = range(4)
_PASSED: dict[tuple[str, Any], tuple[tuple[str, ...], tuple[str, ...]]] = {}
# protobuf refuses a string with an unpaired surrogate (json_format's own pattern) and, when upb encodes it, one
# with a paired surrogate: only strings with no surrogate code point at all are erased (those always encode)
_SURROGATE = re.compile("[\ud800-\udfff]")
_Plan = dict[str, tuple[int, Any, bool]]


class _Uncacheable(Exception):
    pass


_PLANS: dict[Descriptor, _Plan] = {}  # _plan's answers, read with a plain dict lookup on the skeleton's path


def _plan(desc: Descriptor) -> _Plan:
    """Per message type, once: for each JSON and proto field name, how its value enters the skeleton."""
    known = _PLANS.get(desc)
    if known is not None:
        return known
    plan: _Plan = {}
    for fd in desc.fields:
        sub = fd.message_type
        if sub is not None and sub.GetOptions().map_entry:
            kind, sub = _K_EXACT, None
        elif sub is not None and sub.full_name == "google.protobuf.Timestamp":
            kind, sub = _K_STAMP, None
        elif sub is not None and not (sub.full_name in _FREE_FORM or _WRAPPERS.fullmatch(sub.full_name)):
            kind = _K_MESSAGE
        elif sub is None and fd.type == FieldDescriptor.TYPE_STRING:
            kind = _K_STRING
        else:
            kind, sub = _K_EXACT, None
        plan.setdefault(fd.name, (kind, sub, fd.is_repeated))
        plan[fd.json_name] = (kind, sub, fd.is_repeated)  # the JSON name wins, as in the walk
    _PLANS[desc] = plan  # the message types are the definitions' own: a bounded set
    return plan


def skeleton(desc: Descriptor, payload: Any) -> Any:
    """The key under which a passed verdict for `payload` (as message `desc`) is remembered; None when the
    payload is too big to remember or holds a value that is not plain JSON."""
    budget = [_MAX_NODES]
    try:
        return _skel_message(desc, payload, budget)
    except _Uncacheable:
        return None


def _skel_message(desc: Descriptor, value: Any, budget: list[int]) -> Any:
    """A message's skeleton; `budget` counts down the units (see _MAX_NODES) on the way. The common leaves (a
    plain string, a nested message, a passing Timestamp) are handled in the loop, without a call each."""
    if value.__class__ is not dict:
        return _exact(value, budget)
    plan = _PLANS.get(desc) or _plan(desc)
    budget[0] -= len(value)
    if budget[0] < 0:
        raise _Uncacheable
    out: list[Any] = [_OBJ]
    add = out.append
    for key, item in value.items():
        how = plan.get(key)
        if how is None:  # an unknown field: its name and value kept verbatim
            add(_exact(key, budget))
            add(_exact(item, budget))
            continue
        kind, sub, repeated = how
        add(key)
        if repeated:
            if item.__class__ is list:
                budget[0] -= len(item)
                if kind == _K_MESSAGE:
                    add((_ARR, *[_skel_message(sub, v, budget) for v in item]))
                else:
                    add((_ARR, *[_skel_single(kind, sub, v, budget) for v in item]))
            else:
                add(_exact(item, budget))
        elif kind == _K_STRING:
            # "" stays in the key: a REQUIRED string that is empty is a gap (Verdict.required), another string none
            add(_ERASED if item.__class__ is str and item and (item.isascii() or _SURROGATE.search(item) is None)
                else _exact(item, budget))
        elif kind == _K_MESSAGE:
            add(_skel_message(sub, item, budget))
        elif kind == _K_STAMP and item.__class__ is str and _stamp_passes(item):
            add(_STAMP)
        else:
            add(_exact(item, budget))
    return tuple(out)


def _skel_single(kind: int, sub: Any, value: Any, budget: list[int]) -> Any:
    """One leaf of a repeated field (see _skel_message, which handles a single field's leaves itself)."""
    if kind == _K_STRING:
        if value.__class__ is str and value and (value.isascii() or _SURROGATE.search(value) is None):
            return _ERASED
    elif kind == _K_MESSAGE:
        return _skel_message(sub, value, budget)
    elif kind == _K_STAMP and value.__class__ is str and _stamp_passes(value):
        return _STAMP
    return _exact(value, budget)


def _stamp_passes(value: str) -> bool:
    """Both `timestamp_problem` and protobuf's `Timestamp.FromJsonString` accept `value` (a pure function of the
    string: remembered, since an agent's events carry few distinct timestamps, often one a second)."""
    known = _STAMPS.get(value)
    if known is not None:
        return known
    m = _CANONICAL_STAMP.fullmatch(value)
    ok = _canonical_stamp_passes(m) if m is not None else _stamp_passes_official(value)
    if len(value) <= _STAMP_KEY_CHARS:  # bounded: at most _MAX_STAMPS short strings (~0.5 MiB)
        if len(_STAMPS) >= _MAX_STAMPS:
            _STAMPS.clear()
        _STAMPS[value] = ok
    return ok


def _stamp_passes_official(value: str) -> bool:
    if timestamp_problem(value) is not None:
        return False
    try:
        timestamp_pb2.Timestamp().FromJsonString(value)
    except Exception:  # whatever it raises, the full judgement decides
        return False
    return True


# The form agents send (ASCII digits, upper-case T, Z or a ±hh:mm offset): judged by what FromJsonString computes
# for it, without its strptime (two thirds of a stream event's validation). FromJsonString on such a string: the
# zone starts at the Z, the +, or the last -; strptime('%Y-%m-%dT%H:%M:%S') takes fixed two-digit fields exactly
# when `datetime` does (month 1-12, a day of that month, hour < 24, minute and second < 60, year >= 1); the nanos
# are round(float('0.' + fraction) * 1e9); the offset's hours and minutes are not range-checked; the result must
# lie in [0001-01-01T00:00:00Z, 9999-12-31T23:59:59Z]. Everything else goes to protobuf itself;
# tests/unit/test_schema_cache.py compares both on every field's boundaries.
_CANONICAL_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:Z|([+-])(\d\d):(\d\d))",
                              re.ASCII)
_EPOCH = datetime(1970, 1, 1)
_STAMPS: dict[str, bool] = {}  # _stamp_passes' answers
_MAX_STAMPS = 4096
_STAMP_KEY_CHARS = 40  # an RFC 3339 stamp with nanos and an offset has 35
_STAMP_MIN, _STAMP_MAX = -62135596800, 253402300799


def _canonical_stamp_passes(m: re.Match[str]) -> bool:
    year, month, day, hour, minute, second, fraction, sign, off_h, off_m = m.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
    except ValueError:
        return False
    delta = moment - _EPOCH
    seconds = delta.seconds + delta.days * 86400
    if sign is not None:
        offset = (int(off_h) * 60 + int(off_m)) * 60
        seconds += -offset if sign == "+" else offset
    nanos = round(float("0." + fraction) * 1e9) if fraction else 0
    return _STAMP_MIN <= seconds <= _STAMP_MAX and 0 <= nanos < 1_000_000_000


def _exact(value: Any, budget: list[int]) -> Any:
    """A JSON value as a hashable key that tells apart everything JSON tells apart (types included)."""
    kind = value.__class__
    if kind is str:
        if len(value) > _FREE_CHARS:  # a long text kept verbatim costs its length: memory stays bounded
            _charge(budget, len(value) // _FREE_CHARS)
        return value
    if kind is int or value is None:
        return value
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is float:
        return (_FLOAT, value.hex())
    if kind is dict or kind is list:
        budget[0] -= len(value) + 1
        if budget[0] < 0:
            raise _Uncacheable
        if kind is dict:
            return (_OBJ, *[part for k, v in value.items() for part in (_exact(k, budget), _exact(v, budget))])
        return (_ARR, *[_exact(v, budget) for v in value])
    raise _Uncacheable


def _charge(budget: list[int], units: int) -> None:
    budget[0] -= units
    if budget[0] < 0:
        raise _Uncacheable


def _remember(full_name: str, key: Any, verdict: Verdict, cut: int) -> None:
    if len(_PASSED) >= _MAX_PASSED:
        _PASSED.pop(next(iter(_PASSED)), None)  # the oldest; no KeyError if it is already gone
    _PASSED[(full_name, key)] = (tuple(p[cut:] for p in verdict.ignored), tuple(p[cut:] for p in verdict.snake_case))


_AT = re.compile(r"\s+at \"?[A-Za-z]\w*((?:\.\w+|\[\d+\])*)\"?\.*$")


def _tidy(root: str, text: str) -> tuple[str, str]:
    """(path, text) of a json_format error: its trailing "at Type.a.b" becomes our path, minus nested prefixes."""
    text = re.sub(r"(Failed to parse \w+ field: )+", "", text).rstrip(".")
    where = _AT.search(text)
    if where:
        return root + where.group(1), text[: where.start()][:300]
    return root, text[:300]


# ---- 0.3 JSON-RPC against the models generated from the 0.3 JSON schema

_KINDS_03 = {"task": "Task", "message": "Message", "status-update": "TaskStatusUpdateEvent",
             "artifact-update": "TaskArtifactUpdateEvent"}
_SHAPE_KINDS_03: dict[Shape, tuple[str, ...]] = {
    Shape.SEND_RESULT: ("task", "message"),
    Shape.STREAM_EVENT: ("task", "message", "status-update", "artifact-update"),
    Shape.TASK: ("task",),
    Shape.MESSAGE: ("message",),
}


def _pydantic_03(shape: Shape, payload: Any, root: str) -> Verdict:
    import pydantic
    from a2a.compat.v0_3 import types as t03

    definitions = "A2A 0.3 JSON schema (a2a.compat.v0_3.types)"
    verdict = Verdict(definitions)
    model: type[pydantic.BaseModel]
    if shape is Shape.CARD:
        model = t03.AgentCard
    elif shape is Shape.PUSH_CONFIG:
        model = t03.TaskPushNotificationConfig
    elif shape in _SHAPE_KINDS_03:
        kinds = _SHAPE_KINDS_03[shape]
        kind = payload.get("kind") if isinstance(payload, dict) else None
        if isinstance(payload, dict) and "kind" not in payload:
            # the models default kind: a2a-sdk's client reads the object as the first member of its result union
            # whose fields it has (invoke.dialect names the missing discriminator)
            kind = next((k for k in kinds if _validates(getattr(t03, _KINDS_03[k]), payload)), None)
        if kind not in kinds:
            what = f"kind {show(kind)}" if isinstance(payload, dict) else type(payload).__name__
            verdict.problems.append(f"{root}: {what} is not one of {', '.join(kinds)}")
            return verdict
        model = getattr(t03, _KINDS_03[str(kind)])
    else:
        verdict.problems.append(f"{root}: 0.3 defines no {shape.value}")
        return verdict
    try:
        model.model_validate(payload)
    except pydantic.ValidationError as exc:
        verdict.problems += _pydantic_problems(exc.errors(include_url=False), root)[:_MAX_PROBLEMS]
    return verdict


def _validates(model: Any, payload: dict[str, Any]) -> bool:
    import pydantic

    try:
        model.model_validate(payload)
    except pydantic.ValidationError:
        return False
    return True


def _pydantic_problems(errors: list[Any], root: str) -> list[str]:
    """One message per problem; for a union (a Part), only the member the object's `kind` names."""
    branches: dict[tuple[Any, ...], dict[str, list[Any]]] = {}
    plain: list[tuple[tuple[Any, ...], Any]] = []
    for err in errors:
        loc = tuple(err["loc"])
        i = next((n for n, p in enumerate(loc) if isinstance(p, str) and p[:1].isupper()), None)
        if i is None:
            plain.append((loc, err))
        else:
            branches.setdefault(loc[:i], {}).setdefault(loc[i], []).append(err)
    for prefix, members in branches.items():
        kind_ok = {m: errs for m, errs in members.items()
                   if not any(e["loc"][-1] == "kind" and e["type"] == "literal_error" for e in errs)}
        if len(kind_ok) == 1:
            (_, errs), = kind_ok.items()
            plain += [(prefix + tuple(e["loc"][len(prefix) + 1:]), e) for e in errs]
        else:
            first = next(iter(members.values()))[0]
            kinds = "/".join(m.removesuffix("Part").lower() or m for m in members)
            got = first.get("input") if first["loc"][-1] == "kind" else None
            plain.append(((*prefix, "kind"), {"msg": f"matches none of {kinds}", "type": "union", "input": got}))
    out = []
    for loc, err in plain:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        value = "" if err["type"] == "missing" else f" (got {show(err.get('input'))})"
        out.append(f"{root}{where}: {err['msg']}{value}")
    return out


# ---- the table: (version family, binding kind) -> how a shape is judged

_V1_MESSAGES = {Shape.SEND_RESULT: "SendMessageResponse", Shape.STREAM_EVENT: "StreamResponse", Shape.TASK: "Task",
                Shape.LIST_TASKS: "ListTasksResponse", Shape.PUSH_CONFIG: "TaskPushNotificationConfig",
                Shape.CARD: "AgentCard", Shape.MESSAGE: "Message"}
_V03_PROTO_MESSAGES = {Shape.SEND_RESULT: "SendMessageResponse", Shape.STREAM_EVENT: "StreamResponse",
                       Shape.TASK: "Task", Shape.PUSH_CONFIG: "TaskPushNotificationConfig", Shape.CARD: "AgentCard",
                       Shape.MESSAGE: "Message"}


@cache
def _v1_module() -> Any:
    from a2a.types import a2a_pb2

    return a2a_pb2


@cache
def _v03_proto_module() -> Any:
    from a2a.compat.v0_3 import a2a_v0_3_pb2

    return a2a_v0_3_pb2


def definitions_for(version: str, binding: str = "JSONRPC") -> str:
    """A human name for the definitions that judge this version and binding."""
    family = _family(version)
    if family == "1.0":
        return f"A2A 1.0 proto ({_v1_module().DESCRIPTOR.package})"
    if family == "0.3" and binding.upper() != "JSONRPC":
        return "A2A 0.3 proto (a2a.v1)"
    if family == "0.3":
        return "A2A 0.3 JSON schema (a2a.compat.v0_3.types)"
    return f"no official definitions for protocol {version}"


def _family(version: str) -> str:
    major_minor = ".".join(version.strip().split(".")[:2])
    if major_minor.startswith("1."):
        return "1.0"
    return "0.3" if major_minor in ("0.3", "0.2") else major_minor


def validate(version: str, binding: str, shape: Shape, payload: Any, *, root: str = "result") -> Verdict:
    """Judge `payload` (already strict-JSON decoded) as `shape` of the given protocol version and binding."""
    cls, definitions = _route(version, binding, shape)
    if cls is not None:
        return _proto(cls, payload, definitions, root)
    family = _family(version)
    if family == "0.3" and binding.upper() != "JSONRPC":
        return Verdict(definitions, [f"{root}: 0.3 defines no {shape.value}"])
    if family == "0.3":
        return _pydantic_03(shape, payload, root)
    return Verdict(definitions)  # nothing official to judge 0.1 by


@lru_cache(maxsize=256)  # agents' version strings are few; bounded all the same
def _route(version: str, binding: str, shape: Shape) -> tuple[type[ProtoMessage] | None, str]:
    """The proto message that judges `shape` for this version and binding (None: not a proto), and its name."""
    family = _family(version)
    definitions = definitions_for(version, binding)
    if family == "1.0":
        return getattr(_v1_module(), _V1_MESSAGES[shape]), definitions
    name = _V03_PROTO_MESSAGES.get(shape)
    if family == "0.3" and binding.upper() != "JSONRPC" and name is not None:
        return getattr(_v03_proto_module(), name), definitions
    return None, definitions
