"""The bytes an A2A 1.0 card signature covers (spec §8.4.1): the card projected onto the proto's field
presence, `signatures` dropped, then RFC 8785 (JCS).

The projection is data: for each message of the AgentCard tree, each ProtoJSON field with its presence
(REQUIRED: always kept, even "" or []; OPTIONAL: kept when present, even at its default; PLAIN: dropped
at its default), transcribed from `specification/a2a.proto` at v1.0.1 and tested against the official
SDK's descriptor. Fields outside the proto (the 0.3 fields of a hybrid card) are not part of the signed
card: a proto client parsing the card drops them too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import rfc8785

Presence = Literal["required", "optional", "plain"]
Kind = Literal["string", "bool", "int", "message", "struct"]
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Field:
    kind: Kind
    presence: Presence = "plain"
    message: str | None = None  # the message type, for kind="message"
    repeated: bool = False
    map: bool = False  # map<string, V>: V is `message` or, when message is None, `kind`


def _f(kind: Kind, presence: Presence = "plain", message: str | None = None, *, repeated: bool = False,
       map_: bool = False) -> Field:
    return Field(kind, presence, message, repeated, map_)


_S: Kind = "string"
_REQ: Presence = "required"
_OPT: Presence = "optional"

SCHEMA: dict[str, dict[str, Field]] = {
    "AgentCard": {
        "name": _f(_S, _REQ), "description": _f(_S, _REQ),
        "supportedInterfaces": _f("message", _REQ, "AgentInterface", repeated=True),
        "provider": _f("message", message="AgentProvider"), "version": _f(_S, _REQ),
        "documentationUrl": _f(_S, _OPT), "capabilities": _f("message", _REQ, "AgentCapabilities"),
        "securitySchemes": _f("message", message="SecurityScheme", map_=True),
        "securityRequirements": _f("message", message="SecurityRequirement", repeated=True),
        "defaultInputModes": _f(_S, _REQ, repeated=True), "defaultOutputModes": _f(_S, _REQ, repeated=True),
        "skills": _f("message", _REQ, "AgentSkill", repeated=True),
        "signatures": _f("message", message="AgentCardSignature", repeated=True),
        "iconUrl": _f(_S, _OPT),
    },
    "AgentInterface": {"url": _f(_S, _REQ), "protocolBinding": _f(_S, _REQ), "tenant": _f(_S),
                       "protocolVersion": _f(_S, _REQ)},
    "AgentProvider": {"url": _f(_S, _REQ), "organization": _f(_S, _REQ)},
    "AgentCapabilities": {"streaming": _f("bool", _OPT), "pushNotifications": _f("bool", _OPT),
                          "extensions": _f("message", message="AgentExtension", repeated=True),
                          "extendedAgentCard": _f("bool", _OPT)},
    "AgentExtension": {"uri": _f(_S), "description": _f(_S), "required": _f("bool"), "params": _f("struct")},
    "AgentSkill": {"id": _f(_S, _REQ), "name": _f(_S, _REQ), "description": _f(_S, _REQ),
                   "tags": _f(_S, _REQ, repeated=True), "examples": _f(_S, repeated=True),
                   "inputModes": _f(_S, repeated=True), "outputModes": _f(_S, repeated=True),
                   "securityRequirements": _f("message", message="SecurityRequirement", repeated=True)},
    "AgentCardSignature": {"protected": _f(_S, _REQ), "signature": _f(_S, _REQ), "header": _f("struct")},
    "StringList": {"list": _f(_S, repeated=True)},
    "SecurityRequirement": {"schemes": _f("message", message="StringList", map_=True)},
    # oneof members have presence: kept when set, even when empty
    "SecurityScheme": {
        "apiKeySecurityScheme": _f("message", _OPT, "APIKeySecurityScheme"),
        "httpAuthSecurityScheme": _f("message", _OPT, "HTTPAuthSecurityScheme"),
        "oauth2SecurityScheme": _f("message", _OPT, "OAuth2SecurityScheme"),
        "openIdConnectSecurityScheme": _f("message", _OPT, "OpenIdConnectSecurityScheme"),
        "mtlsSecurityScheme": _f("message", _OPT, "MutualTlsSecurityScheme"),
    },
    "APIKeySecurityScheme": {"description": _f(_S), "location": _f(_S, _REQ), "name": _f(_S, _REQ)},
    "HTTPAuthSecurityScheme": {"description": _f(_S), "scheme": _f(_S, _REQ), "bearerFormat": _f(_S)},
    "OAuth2SecurityScheme": {"description": _f(_S), "flows": _f("message", _REQ, "OAuthFlows"),
                             "oauth2MetadataUrl": _f(_S)},
    "OpenIdConnectSecurityScheme": {"description": _f(_S), "openIdConnectUrl": _f(_S, _REQ)},
    "MutualTlsSecurityScheme": {"description": _f(_S)},
    "OAuthFlows": {
        "authorizationCode": _f("message", _OPT, "AuthorizationCodeOAuthFlow"),
        "clientCredentials": _f("message", _OPT, "ClientCredentialsOAuthFlow"),
        "implicit": _f("message", _OPT, "ImplicitOAuthFlow"),
        "password": _f("message", _OPT, "PasswordOAuthFlow"),
        "deviceCode": _f("message", _OPT, "DeviceCodeOAuthFlow"),
    },
    "AuthorizationCodeOAuthFlow": {"authorizationUrl": _f(_S, _REQ), "tokenUrl": _f(_S, _REQ),
                                   "refreshUrl": _f(_S), "scopes": _f(_S, _REQ, map_=True),
                                   "pkceRequired": _f("bool")},
    "ClientCredentialsOAuthFlow": {"tokenUrl": _f(_S, _REQ), "refreshUrl": _f(_S),
                                   "scopes": _f(_S, _REQ, map_=True)},
    "ImplicitOAuthFlow": {"authorizationUrl": _f(_S), "refreshUrl": _f(_S), "scopes": _f(_S, map_=True)},
    "PasswordOAuthFlow": {"tokenUrl": _f(_S), "refreshUrl": _f(_S), "scopes": _f(_S, map_=True)},
    "DeviceCodeOAuthFlow": {"deviceAuthorizationUrl": _f(_S, _REQ), "tokenUrl": _f(_S, _REQ),
                            "refreshUrl": _f(_S), "scopes": _f(_S, _REQ, map_=True)},
}
_DEFAULTS: dict[str, Any] = {"string": "", "bool": False, "int": 0}


class CanonicalError(ValueError):
    """The card cannot be projected onto the proto (a wrong JSON type, or nesting too deep)."""


def _camel(name: str) -> str:
    # ProtoJSON parsers accept the proto field name too; signers canonicalise the lowerCamel form
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def project(doc: dict[str, Any], message: str = "AgentCard") -> dict[str, Any]:
    """The card as the proto sees it."""
    return _message(doc, message, 1, message)


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
    fields = SCHEMA[message]
    out: dict[str, Any] = {}
    for raw_key, value in doc.items():
        key = _camel(raw_key)
        spec = fields.get(key)
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
