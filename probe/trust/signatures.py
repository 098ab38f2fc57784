"""Agent Card signature verification (1.0 §8.4; 0.3 added the field) against a locally trusted JWKS.

Keys come only from the configured trust store: a `jku` in a signature header is never fetched, since
the card (the thing being verified) would then choose the key that verifies it. JOSE is joserfc's;
the canonical bytes are `probe.trust.canonical`'s (RFC 8785 via `rfc8785`).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.registry import HeaderParameter

from probe.trust import canonical

# asymmetric algorithms only: a trust store of public keys must never verify an HMAC keyed by itself
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519")
MAX_SIGNATURES = 16

def _optional_url(value: object) -> None:
    # the official Python SDK's signer writes "jku": null when no JWKS URL is given; the key never comes from
    # a jku anyway, so a null one is harmless
    if value is not None and not isinstance(value, str):
        raise ValueError("'jku' in header must be a str")


# unknown (private) header parameters are allowed, as RFC 7515 allows them; `crit` is still enforced
_REGISTRY = jws.JWSRegistry(
    header_registry={"jku": HeaderParameter("JWK Set URL (never fetched)", _optional_url)},
    algorithms=list(ALGORITHMS), strict_check_header=False)


class Policy(StrEnum):
    REQUIRE = "require"  # unsigned or not verified fails the probe
    VERIFY = "verify"  # findings only
    OFF = "off"


class Outcome(StrEnum):
    VALID = "valid"
    INVALID = "invalid"  # tampered, or signed by another key under a trusted kid
    UNSIGNED = "unsigned"
    UNTRUSTED_KEY = "untrusted_key"  # no trusted key has the signature's kid
    UNSUPPORTED_ALGORITHM = "unsupported_algorithm"


@dataclass(slots=True)
class Verification:
    outcome: Outcome
    message: str
    details: list[str] = field(default_factory=list)  # one line per signature


class TrustStoreError(ValueError):
    """The configured JWKS is not a usable JWK Set."""


def load_keyset(doc: Any) -> KeySet:
    """A JWK Set of public keys; private members are refused (a config must never hold them)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list) or not doc["keys"]:
        raise TrustStoreError('a JWKS is an object with a non-empty "keys" array')
    for i, key in enumerate(doc["keys"]):
        if not isinstance(key, dict):
            raise TrustStoreError(f"keys[{i}] is not an object")
        if key.get("kty") == "oct" or "d" in key:
            raise TrustStoreError(f"keys[{i}] is a private or symmetric key: a trust store holds public keys only")
    try:
        return KeySet.import_key_set(doc)  # type: ignore[arg-type]  # shape checked above
    except (JoseError, ValueError, TypeError) as exc:
        raise TrustStoreError(f"not a valid JWK Set: {exc}") from None


def _b64json(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        doc = json.loads(raw)
    except (binascii.Error, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _keys_for(keyset: KeySet, kid: Any) -> list[Any]:
    return [k for k in keyset.keys if kid is None or k.kid == kid]


def _check(compact: str, keys: list[Any], alg: str) -> bool:
    for key in keys:
        try:
            jws.deserialize_compact(compact, key, algorithms=[alg], registry=_REGISTRY)
            return True
        except (JoseError, ValueError, TypeError):
            continue
    return False


def verify(doc: dict[str, Any], family: str, keyset: KeySet) -> Verification:
    """Verify the card's signatures; valid when at least one verifies under a trusted key."""
    sigs = doc.get("signatures")
    if not sigs:
        return Verification(Outcome.UNSIGNED, "the card carries no signatures")
    if not isinstance(sigs, list):
        return Verification(Outcome.INVALID, "signatures is not an array")
    try:
        # 1.0: the proto's view of the card; 0.x: the card as served (0.3 defines no field presence rules)
        body = canonical.project(doc) if family == "1.0" else dict(doc)
        signed = canonical.jcs(body)
    except canonical.CanonicalError as exc:
        return Verification(Outcome.INVALID, f"the card cannot be canonicalised: {exc}")
    outcomes: list[Outcome] = []
    details: list[str] = []
    for i, sig in enumerate(sigs[:MAX_SIGNATURES]):
        outcome, detail = _one(i, sig, signed, body, doc, keyset)
        outcomes.append(outcome)
        details.append(detail)
    if len(sigs) > MAX_SIGNATURES:
        details.append(f"{len(sigs) - MAX_SIGNATURES} more signature(s) not examined")
    for winner in (Outcome.VALID, Outcome.INVALID, Outcome.UNSUPPORTED_ALGORITHM, Outcome.UNTRUSTED_KEY):
        if winner in outcomes:
            return Verification(winner, details[outcomes.index(winner)], details)
    return Verification(Outcome.INVALID, details[0], details)


def _one(i: int, sig: Any, signed: bytes, body: dict[str, Any], doc: dict[str, Any],
         keyset: KeySet) -> tuple[Outcome, str]:
    where = f"signatures[{i}]"
    if not isinstance(sig, dict) or not isinstance(sig.get("protected"), str) or not isinstance(
            sig.get("signature"), str):
        return Outcome.INVALID, f"{where} needs protected and signature strings"
    header = _b64json(sig["protected"])
    if header is None:
        return Outcome.INVALID, f"{where}.protected is not a base64url JSON object"
    alg, kid = header.get("alg"), header.get("kid")
    label = f"{where} (alg {alg}, kid {kid!r})"
    if alg not in ALGORITHMS:
        return Outcome.UNSUPPORTED_ALGORITHM, (f"{label}: algorithm {alg!r} is not accepted; use one of "
                                               f"{', '.join(ALGORITHMS)}")
    note = " (its jku is ignored: keys come only from the trusted JWKS)" if "jku" in header else ""
    keys = _keys_for(keyset, kid)
    if not keys:
        return Outcome.UNTRUSTED_KEY, f"{label}: no trusted key has this kid{note}"
    compact = f"{sig['protected']}.{_b64(signed)}.{sig['signature']}"
    if _check(compact, keys, alg):
        return Outcome.VALID, f"{label}: valid{note}"
    return Outcome.INVALID, f"{label}: {_explain(sig, keys, alg, body, doc)}{note}"


def _explain(sig: dict[str, Any], keys: list[Any], alg: str, body: dict[str, Any], doc: dict[str, Any]) -> str:
    """Name the likely cause when a trusted key does not verify: a signer's canonicalisation bug, or tampering."""
    alternatives: list[tuple[str, dict[str, Any]]] = [
        ("the signer dropped empty values the proto keeps (REQUIRED fields such as \"\" or []); "
         "a signature must cover them, so it is rejected", canonical.drop_empty(body)),
    ]
    if body is not doc:
        alternatives.append(("the signer signed the card as served, including fields outside the 1.0 proto "
                             "(hybrid 0.3 fields); a signature covers only the proto's fields, so it is rejected",
                             dict(doc)))
    for why, variant in alternatives:
        try:
            compact = f"{sig['protected']}.{_b64(canonical.jcs(variant))}.{sig['signature']}"
        except canonical.CanonicalError:
            continue
        if _check(compact, keys, alg):
            return why
    return "does not verify: the card was changed after signing, or it was signed by another key"
