"""The bytes an A2A 1.0 card signature covers (spec §8.4.1): the card projected onto the proto's field
presence, `signatures` dropped, then RFC 8785 (JCS, by `rfc8785`).

The presence of each field comes from the official `lf.a2a.v1` descriptor (`a2a.types.a2a_pb2`, the same
definitions `probe.wire.schema` validates against): REQUIRED (`field_behavior`) is always kept, even "" or [];
`optional` scalars, one-of members and singular messages track presence and are kept when set, even at the
default; every other field is dropped at its default. Fields outside the proto (the 0.3 fields of a hybrid
card) are not part of the signed card: a proto client parsing the card drops them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import rfc8785
from a2a.types import a2a_pb2
from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

Presence = Literal["required", "optional", "plain"]
Kind = Literal["string", "bool", "int", "message", "struct"]
MAX_DEPTH = 64
_STRUCT = "google.protobuf.Struct"


@dataclass(frozen=True, slots=True)
class Field:
    kind: Kind
    presence: Presence = "plain"
    message: str | None = None  # the message's full name, for kind="message"
    repeated: bool = False
    map: bool = False  # map<string, V>: V is `message` or, when message is None, `kind`


def _message_name(fd: FieldDescriptor) -> str | None:
    return fd.message_type.full_name if fd.message_type is not None else None


def _kind(fd: FieldDescriptor) -> Kind:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        return "struct" if _message_name(fd) == _STRUCT else "message"
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return "bool"
    return "string" if fd.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES) else "int"


def _field(fd: FieldDescriptor) -> Field:
    behaviours = fd.GetOptions().Extensions[field_behavior_pb2.field_behavior]
    presence: Presence = ("required" if field_behavior_pb2.REQUIRED in behaviours
                          else "optional" if fd.containing_oneof is not None else "plain")
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        value = fd.message_type.fields_by_name["value"]
        return Field(_kind(value), presence, _message_name(value) if _kind(value) == "message" else None, map=True)
    sub = _message_name(fd) if _kind(fd) == "message" else None
    return Field(_kind(fd), presence, sub, repeated=bool(fd.is_repeated))


@cache
def schema(full_name: str) -> dict[str, Field]:
    """ProtoJSON name -> Field for one message of the card's tree."""
    descriptor: Descriptor = a2a_pb2.DESCRIPTOR.pool.FindMessageTypeByName(full_name)
    out = {fd.json_name: _field(fd) for fd in descriptor.fields}
    # ProtoJSON parsers accept the proto field name too; the signed form uses the lowerCamel one
    out |= {fd.name: out[fd.json_name] for fd in descriptor.fields if fd.name != fd.json_name}
    return out


def json_name(full_name: str, key: str) -> str:
    descriptor: Descriptor = a2a_pb2.DESCRIPTOR.pool.FindMessageTypeByName(full_name)
    fd = descriptor.fields_by_name.get(key)
    return fd.json_name if fd is not None else key


CARD = a2a_pb2.AgentCard.DESCRIPTOR.full_name


class CanonicalError(ValueError):
    """The card cannot be projected onto the proto (a wrong JSON type, or nesting too deep)."""


def project(doc: dict[str, Any], message: str = CARD) -> dict[str, Any]:
    """The card as the proto sees it."""
    return _message(doc, message, 1, message.rsplit(".", 1)[-1])


def _is_default(value: Any) -> bool:
    return value in ("", [], {}) or value is False or (type(value) is int and value == 0)


def drop_empty(value: Any) -> Any:
    """Every "", [] and {} removed, recursively, required or not: what some signers do (the official
    Python SDK's among them). Used only to explain a failed verification, never to pass one."""
    if isinstance(value, dict):
        kept = {k: drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ("", [], {})}
    if isinstance(value, list):
        kept_list = [drop_empty(v) for v in value]
        return [v for v in kept_list if v not in ("", [], {})]
    return value


def _message(doc: Any, message: str, depth: int, where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise CanonicalError(f"{where} is a JSON {type(doc).__name__}, not an object")
    if depth > MAX_DEPTH:
        raise CanonicalError(f"nesting deeper than {MAX_DEPTH}")
    fields = schema(message)
    out: dict[str, Any] = {}
    for raw_key, value in doc.items():
        spec = fields.get(raw_key)
        key = json_name(message, raw_key)
        if spec is None or value is None:
            continue  # not part of the proto message (or JSON null = unset)
        projected = _value(value, spec, depth + 1, f"{where}.{key}")
        singular_message = spec.kind in ("message", "struct") and not (spec.repeated or spec.map)
        # REQUIRED: always kept; `optional` and singular messages track presence: set means included
        if spec.presence != "plain" or singular_message or not _is_default(projected):
            out[key] = projected
    return out


def _value(value: Any, spec: Field, depth: int, where: str) -> Any:
    if spec.repeated:
        if not isinstance(value, list):
            raise CanonicalError(f"{where} is not an array")
        return [_scalar_or_message(v, spec, depth, f"{where}[{i}]") for i, v in enumerate(value)]
    if spec.map:
        if not isinstance(value, dict):
            raise CanonicalError(f"{where} is not an object")
        return {k: _scalar_or_message(v, spec, depth, f"{where}.{k}") for k, v in value.items()}
    return _scalar_or_message(value, spec, depth, where)


def _scalar_or_message(value: Any, spec: Field, depth: int, where: str) -> Any:
    if spec.kind == "message":
        assert spec.message is not None
        return _message(value, spec.message, depth, where)
    if spec.kind == "struct":
        return value
    want = {"string": str, "bool": bool, "int": int}[spec.kind]
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise CanonicalError(f"{where} is a JSON {type(value).__name__}, not a {spec.kind}")
    return value


def jcs(body: dict[str, Any]) -> bytes:
    """RFC 8785 bytes of a JSON object, `signatures` excluded."""
    body = {k: v for k, v in body.items() if k != "signatures"}
    try:
        return rfc8785.dumps(body)
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise CanonicalError(f"not canonicalisable under RFC 8785: {exc}") from None


def payload(doc: dict[str, Any]) -> bytes:
    """The bytes a 1.0 card signature covers."""
    return jcs(project(doc))
