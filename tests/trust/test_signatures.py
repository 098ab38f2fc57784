"""Card signatures: the canonical bytes, every verification outcome, the policies, and the CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from probe import cli
from probe.checks import grading
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import Status
from probe.target import Target
from probe.trust import canonical
from probe.trust.signatures import Outcome, TrustStoreError, load_keyset, verify
from probe.wire.http import HttpClient
from tests.trust.agent import base_card, trust_agent
from tests.trust.material import ec_key, forged_signature, jwks, sign

ORIGIN = "https://agent.example"
KEY, OTHER = ec_key("key-1"), ec_key("key-2")
TRUSTED = load_keyset(jwks(KEY))


def test_spec_example_canonical_form() -> None:
    """§8.4.1's own example: required "" and [] kept, explicitly set optionals kept, empty repeated dropped."""
    fragment = {"name": "Example Agent", "description": "",
                "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []}, "skills": []}
    assert canonical.payload(fragment) == (b'{"capabilities":{"pushNotifications":false,"streaming":false},'
                                           b'"description":"","name":"Example Agent","skills":[]}')


def test_projection_drops_fields_outside_the_proto_and_plain_defaults() -> None:
    card = base_card(ORIGIN, url=f"{ORIGIN}/rpc", protocolVersion="0.3.0", preferredTransport="JSONRPC",
                     provider={"url": "https://p", "organization": "o"}, documentationUrl="",
                     securitySchemes={"k": {"apiKeySecurityScheme": {"location": "header", "name": "X",
                                                                     "description": ""}}})
    card["supportedInterfaces"][0]["tenant"] = ""
    card["skills"][0]["examples"] = []
    projected = canonical.project(card)
    for hybrid in ("url", "protocolVersion", "preferredTransport"):
        assert hybrid not in projected
    assert projected["documentationUrl"] == ""  # optional, explicitly set: kept
    assert "tenant" not in projected["supportedInterfaces"][0]
    assert "examples" not in projected["skills"][0]
    assert projected["securitySchemes"]["k"] == {"apiKeySecurityScheme": {"location": "header", "name": "X"}}
    assert projected["capabilities"] == {"streaming": False, "extendedAgentCard": False}


def test_wrong_type_cannot_be_canonicalised() -> None:
    with pytest.raises(canonical.CanonicalError, match="skills is not an array"):
        canonical.project(base_card(ORIGIN, skills={"id": 1}))


def test_presence_comes_from_the_official_proto() -> None:
    card = canonical.schema(canonical.CARD)
    assert card["description"].presence == "required" and card["skills"].repeated
    assert card["documentationUrl"].presence == "optional" and card["iconUrl"].presence == "optional"
    assert card["signatures"].presence == "plain" and card["securitySchemes"].map
    assert card["supported_interfaces"] == card["supportedInterfaces"]  # proto names are accepted too
    caps = canonical.schema(card["capabilities"].message or "")
    assert caps["streaming"].presence == "optional" and caps["extensions"].presence == "plain"
    flows = canonical.schema("lf.a2a.v1.OAuthFlows")
    assert flows["clientCredentials"].presence == "optional"  # a oneof member
    scopes = canonical.schema("lf.a2a.v1.ClientCredentialsOAuthFlow")["scopes"]
    assert scopes.map and scopes.kind == "string" and scopes.presence == "required"
    assert canonical.schema("lf.a2a.v1.AgentExtension")["params"].kind == "struct"


def test_proto_field_names_are_canonicalised_as_json_names() -> None:
    card = base_card(ORIGIN)
    card["default_input_modes"] = card.pop("defaultInputModes")
    assert canonical.payload(card) == canonical.payload(base_card(ORIGIN))


def _signed(card: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return sign(card or base_card(ORIGIN), KEY, **kw)


def test_valid() -> None:
    found = verify(_signed(), "1.0", TRUSTED)
    assert found.outcome is Outcome.VALID, found.message


def test_valid_keeps_required_empties_and_ignores_hybrid_fields() -> None:
    card = base_card(ORIGIN, description="", skills=[], url=f"{ORIGIN}/rpc", protocolVersion="0.3.0")
    card["capabilities"]["extensions"] = []
    # what the signer covered, written out by hand: required "" and [] kept, 0.3 fields and empty extensions not
    signed_form = {k: v for k, v in card.items() if k not in ("url", "protocolVersion")}
    signed_form["capabilities"] = {"streaming": False, "extendedAgentCard": False}
    found = verify(sign(card, KEY, signed_form=signed_form), "1.0", TRUSTED)
    assert found.outcome is Outcome.VALID, found.message


def test_signer_that_dropped_required_empties_is_rejected_and_named() -> None:
    card = base_card(ORIGIN, description="", skills=[])
    dropped = {k: v for k, v in card.items() if k not in ("description", "skills")}
    found = verify(sign(card, KEY, signed_form=dropped), "1.0", TRUSTED)
    assert found.outcome is Outcome.INVALID
    assert "dropped empty values the proto keeps" in found.message


def test_tampered_field() -> None:
    card = _signed()
    card["supportedInterfaces"][0]["url"] = "https://evil.example/rpc"
    found = verify(card, "1.0", TRUSTED)
    assert found.outcome is Outcome.INVALID
    assert "changed after signing" in found.message


def test_signed_by_another_key_under_a_trusted_kid() -> None:
    impostor = ec_key("key-1")  # same kid, different key
    found = verify(sign(base_card(ORIGIN), impostor), "1.0", TRUSTED)
    assert found.outcome is Outcome.INVALID


def test_untrusted_key_and_jku_is_never_used() -> None:
    card = sign(base_card(ORIGIN), OTHER, header={"jku": "http://127.0.0.1:9/jwks.json"})
    found = verify(card, "1.0", TRUSTED)
    assert found.outcome is Outcome.UNTRUSTED_KEY
    assert "jku is ignored" in found.message


@pytest.mark.parametrize("alg", ["HS256", "none", "XYZ"])
def test_unsupported_algorithm(alg: str) -> None:
    found = verify(forged_signature(base_card(ORIGIN), {"alg": alg, "kid": "key-1"}), "1.0", TRUSTED)
    assert found.outcome is Outcome.UNSUPPORTED_ALGORITHM


def test_unsigned_and_malformed() -> None:
    assert verify(base_card(ORIGIN), "1.0", TRUSTED).outcome is Outcome.UNSIGNED
    bad = base_card(ORIGIN, signatures=[{"protected": "!!", "signature": "x"}])
    assert verify(bad, "1.0", TRUSTED).outcome is Outcome.INVALID
    assert verify(base_card(ORIGIN, signatures="x"), "1.0", TRUSTED).outcome is Outcome.INVALID


def test_rotation_one_good_signature_is_enough() -> None:
    card = sign(sign(base_card(ORIGIN), OTHER), KEY)
    found = verify(card, "1.0", TRUSTED)
    assert found.outcome is Outcome.VALID
    assert len(found.details) == 2


def test_03_card_is_verified_as_served() -> None:
    card = {"protocolVersion": "0.3.0", "name": "n", "description": "", "url": f"{ORIGIN}/rpc", "version": "1",
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []}
    assert verify(sign(card, KEY), "0.3", TRUSTED).outcome is Outcome.VALID


@pytest.mark.parametrize("doc", [{}, {"keys": []}, {"keys": [{"kty": "oct", "k": "AAAA"}]},
                                 {"keys": [KEY.as_dict(private=True)]}, {"keys": [{"kty": "EC"}]}])
def test_trust_store_refuses_unusable_or_private_keys(doc: dict[str, Any]) -> None:
    with pytest.raises(TrustStoreError):
        load_keyset(doc)


# ---- live: the policy decides whether the probe goes on to call the agent

def _target(origin: str, policy: str) -> Target:
    return Target(name="t", url=origin, timeout=10, trusted_jwks=jwks(KEY), signature_policy=policy)  # type: ignore[arg-type]


def _tampered(origin: str) -> dict[str, Any]:
    card = sign(base_card(origin), KEY)
    card["name"] = "someone else"
    return card


# card.signature judges a signature under a trusted kid (1.0 §8.4.1, MUST); card.signature_trusted is the operator's
# rule that the card is signed under a trusted key at all: each outcome fails one of them, never both
_JUDGED = {  # outcome -> (card.signature, card.signature_trusted)
    None: (Status.SKIP, Status.SKIP), "valid": (Status.PASS, Status.PASS), "invalid": (Status.FAIL, Status.SKIP),
    "unsigned": (Status.SKIP, Status.FAIL), "untrusted_key": (Status.SKIP, Status.FAIL),
    "unsupported_algorithm": (Status.SKIP, Status.FAIL)}


@pytest.mark.parametrize(("card", "policy", "reason", "outcome", "calls"), [
    (lambda o: sign(base_card(o), KEY), "require", None, "valid", True),
    (_tampered, "require", Reason.CARD_SIGNATURE_INVALID, "invalid", False),
    (base_card, "require", Reason.CARD_UNSIGNED, "unsigned", False),
    (lambda o: sign(base_card(o), OTHER), "require", Reason.CARD_SIGNATURE_UNTRUSTED, "untrusted_key", False),
    (lambda o: sign(base_card(o), OTHER), "verify", None, "untrusted_key", True),
    (_tampered, "verify", None, "invalid", True),
    (_tampered, "off", None, None, True),
])
async def test_policy_on_a_live_agent(client: HttpClient, card: Any, policy: str, reason: Reason | None,
                                      outcome: str | None, calls: bool) -> None:
    async with trust_agent(card) as agent:
        result = await run_probe(_target(agent.origin, policy), client)
    assert result.reason is reason
    assert result.card_signature == outcome
    judged = tuple(getattr(result.check(i), "status", None) for i in ("card.signature", "card.signature_trusted"))
    assert judged == _JUDGED[outcome], [result.check(i) for i in ("card.signature", "card.signature_trusted")]
    if reason is not None:  # the reason's root cause is the one failed check
        assert [c.id for c in result.checks if c.status is Status.FAIL] == list(grading.CARRIERS[reason])
    # require: a card that does not verify is never called (its URLs are not to be trusted)
    assert bool(agent.rpc_calls()) is calls


async def test_cli_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks(KEY)))
    async with trust_agent(_tampered) as agent:
        args = ["check", agent.origin, "--trusted-jwks", str(path), "--signature-policy", "require",
                "--no-stream", "--format", "json"]
        code = await _main(args)
    report = json.loads(capsys.readouterr().out)
    assert code == cli.EXIT_FAIL
    assert report["reason"] == "card_signature_invalid" and report["cardSignature"] == "invalid"


async def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await _main(["check", "http://127.0.0.1:9", "--signature-policy", "require"]) == cli.EXIT_USAGE
    assert "needs trusted_jwks" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"keys": [KEY.as_dict(private=True)]}))
    assert await _main(["check", "http://127.0.0.1:9", "--trusted-jwks", str(bad)]) == cli.EXIT_USAGE
    assert "public keys only" in capsys.readouterr().err


async def _main(args: list[str]) -> int:
    import asyncio

    return await asyncio.to_thread(cli.main, args)


def test_canonical_bytes_are_rfc8785() -> None:
    card = base_card(ORIGIN, name="é ☃ \u2028", version="1e3")
    assert canonical.payload(card) == rfc8785.dumps(canonical.project(copy.deepcopy(card)))


@pytest.mark.external
async def test_official_sdk_signer_verifies(tmp_path: Path, client: HttpClient) -> None:
    """The official Python SDK server, its card signed by the SDK's own signer (a2a-sdk[signing]), served
    as the SDK serves it (hybrid 0.3 fields merged in): the probe must verify it, and reject it under
    another key."""
    import asyncio

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from joserfc.jwk import ECKey

    from tests.peers.harness import start_peer

    private = ec.generate_private_key(ec.SECP256R1())
    pem = tmp_path / "sdk.pem"
    pem.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public = ECKey.import_key(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode(), {"kid": "sdk-key"})
    peer = await asyncio.to_thread(start_peer, "python", True, 20.0, ("--signing-key", str(pem)))
    try:
        target = Target(name="sdk", url=peer.base_url, timeout=20, trusted_jwks=jwks(public),
                        signature_policy="require")
        result = await run_probe(target, client)
        assert result.card_signature == "valid", result.check("card.signature")
        assert result.success, result.reason
        stranger = Target(name="sdk", url=peer.base_url, timeout=20, trusted_jwks=jwks(ec_key("sdk-key")),
                          signature_policy="require")
        rejected = await run_probe(stranger, client)
        assert rejected.reason is Reason.CARD_SIGNATURE_INVALID and rejected.card_signature == "invalid"
    finally:
        await asyncio.to_thread(peer.stop)


def test_config_card_signatures(tmp_path: Path) -> None:
    from probe.config import ConfigError, parse

    def agent(sig: dict[str, Any]) -> bytes:
        return json.dumps({"agents": [{"name": "a", "url": "http://127.0.0.1:1", "card_signatures": sig}]}).encode()

    with pytest.raises(ConfigError, match="needs trusted_jwks_file or trusted_jwks"):
        parse(agent({"policy": "require"}), "c.yaml")
    with pytest.raises(ConfigError, match="public keys only"):
        parse(agent({"trusted_jwks": {"keys": [KEY.as_dict(private=True)]}}), "c.yaml")
    inline = parse(agent({"trusted_jwks": jwks(KEY)}), "c.yaml").agents[0]
    assert inline.target(5).signature_policy == "verify"  # the default once a JWKS is configured
    path = tmp_path / "jwks.json"
    on_file = parse(agent({"trusted_jwks_file": str(path), "policy": "require"}), "c.yaml").agents[0]
    with pytest.raises(ConfigError, match="cannot read trusted JWKS"):
        on_file.target(5)  # a missing file is the probe's own config problem (probe_config_error), every run
    path.write_text(json.dumps(jwks(KEY)))
    assert on_file.target(5).trusted_jwks == jwks(KEY)
    assert parse(agent({}), "c.yaml").agents[0].target(5).signature_policy == "off"
