"""The auth fast paths (issue #14) decide exactly what the general paths decide: `origin` memoised, `match` for a card
and config with no security at all, and `AuthFlow.credentials` for a flow with nothing to place. Each is compared
with the general path it skips, for an agent without auth, one with a bearer token and one whose interface is on
another origin."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from probe.target import ApiKeySpec, AuthSpec, BasicSpec
from probe.trust import auth as authflows
from probe.wire.http import NO_CREDENTIALS, ClientConfig, origin, with_credentials

AGENT = "http://127.0.0.1:8001"
ELSEWHERE = "http://127.0.0.1:8002"
BEARER = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}


def _doc(rpc: str, **extra: Any) -> dict[str, Any]:
    return {"name": "a", "url": f"{AGENT}/", "supportedInterfaces": [
        {"url": rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}], **extra}


DOCS = {
    "no security": _doc(f"{AGENT}/rpc"),
    "empty security fields": _doc(f"{AGENT}/rpc", securitySchemes={}, securityRequirements=[], security=[]),
    "bearer required": _doc(f"{AGENT}/rpc", securitySchemes=BEARER,
                            securityRequirements=[{"schemes": {"bearer": {"list": []}}}]),
    "schemes, no requirement": _doc(f"{AGENT}/rpc", securitySchemes=BEARER),
    "an empty requirement": _doc(f"{AGENT}/rpc", securityRequirements=[{"schemes": {}}]),
    "0.3 security": _doc(f"{AGENT}/rpc", securitySchemes={"k": {"type": "apiKey", "name": "X-Key", "in": "header"}},
                         security=[{"k": []}]),
    "interface elsewhere": _doc(f"{ELSEWHERE}/rpc", securitySchemes=BEARER,
                                securityRequirements=[{"schemes": {"bearer": {"list": []}}}]),
}
SPECS = {
    "none": AuthSpec(),
    "bearer": AuthSpec(bearer=SecretStr("Zq1fast-path-token")),
    "header": AuthSpec(headers={"X-Key": SecretStr("Zq2fast-path-header")}),
    "basic": AuthSpec(basic=BasicSpec(username="u", password=SecretStr("Zq3fast-path-pass"))),
    "api key": AuthSpec(api_key=ApiKeySpec(value=SecretStr("Zq4fast-path-key"), name="X-Key")),
    "client cert only": AuthSpec(client_cert=True),
    "allowed origin only": AuthSpec(allowed_origins=(ELSEWHERE,)),
}


def _flow(spec: AuthSpec, doc: dict[str, Any]) -> authflows.AuthFlow:
    return authflows.build(spec, doc, [f"{AGENT}/", f"{AGENT}/.well-known/agent-card.json"], ClientConfig())


@pytest.mark.parametrize("doc", DOCS, ids=str)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_match_is_the_general_path(doc: str, spec: str) -> None:
    assert authflows.match(DOCS[doc], SPECS[spec]) == authflows._match(DOCS[doc], SPECS[spec])


def test_match_fast_path_answer() -> None:
    assert authflows.match(DOCS["no security"], AuthSpec()) == (
        None, "the card declares no security and the config has no credentials")
    ok, message = authflows.match(DOCS["no security"], SPECS["bearer"])  # credentials make it the general path
    assert ok is False and "declares no security scheme" in message


@pytest.mark.parametrize("doc", DOCS, ids=str)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_credentials_are_the_general_path_and_origin_bound(doc: str, spec: str) -> None:
    flow = _flow(SPECS[spec], DOCS[doc])
    rpc = DOCS[doc]["supportedInterfaces"][0]["url"]
    for url in (f"{AGENT}/rpc", "HTTP://127.0.0.1:8001/x?q=1", rpc, f"{ELSEWHERE}/rpc", "https://127.0.0.1:8001/rpc"):
        creds = flow.credentials(url)
        if flow.allows(url):
            assert creds == flow._placed()
        else:
            assert creds is NO_CREDENTIALS  # another origin never gets anything
    assert flow.carries_credentials == (flow._placed() != NO_CREDENTIALS)


def test_no_auth_agent_sends_exactly_the_same_headers() -> None:
    flow = _flow(AuthSpec(), DOCS["no security"])
    assert not flow.carries_credentials and flow._placed() == NO_CREDENTIALS
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    assert with_credentials(f"{AGENT}/rpc", headers, flow) == (f"{AGENT}/rpc", headers)
    assert with_credentials(f"{AGENT}/rpc", headers, flow) == with_credentials(f"{AGENT}/rpc", headers, None)


def test_bearer_goes_to_its_origin_only() -> None:
    flow = _flow(SPECS["bearer"], DOCS["interface elsewhere"])
    assert flow.carries_credentials
    assert flow.credentials(f"{AGENT}/rpc").headers == {"Authorization": "Bearer Zq1fast-path-token"}
    assert flow.credentials(f"{ELSEWHERE}/rpc") is NO_CREDENTIALS
    _, sent = with_credentials(f"{ELSEWHERE}/rpc", {"A2A-Version": "1.0"}, flow)
    assert sent == {"A2A-Version": "1.0"}
    ok, message = authflows.match(DOCS["interface elsewhere"], SPECS["bearer"])
    assert ok is True and "bearer (bearer)" in message


def test_secret_headers_joining_the_spec_later_are_placed() -> None:
    """The engine replaces `flow.spec` with the target's secret headers after `build`: the fast path reads it live."""
    flow = _flow(AuthSpec(), DOCS["no security"])
    assert flow.credentials(f"{AGENT}/rpc") is NO_CREDENTIALS
    flow.spec = flow.spec.model_copy(update={"headers": {"Authorization": SecretStr("Zq5late-header")}})
    assert flow.credentials(f"{AGENT}/rpc").headers == {"Authorization": "Zq5late-header"}
    assert flow.credentials(f"{ELSEWHERE}/rpc") is NO_CREDENTIALS
    flow2 = _flow(AuthSpec(), DOCS["no security"])
    flow2._token = "Zq6oauth-token"  # an OAuth2 token obtained by `prepare`
    assert flow2.credentials(f"{AGENT}/rpc").headers == {"Authorization": "Bearer Zq6oauth-token"}


@pytest.mark.parametrize("url", ["http://Host.Example:80/a", "https://h/a", "http://[::1]:9/x", "h:5", "", "x://y"])
def test_origin_memo_is_the_function(url: str) -> None:
    first = origin(url)
    assert origin(url) == first == origin.__wrapped__(url)


@pytest.mark.parametrize("url", ["http://h:99999/", "http://h:abc/", "http://[::1/"])
def test_origin_still_raises_on_what_urllib_cannot_parse(url: str) -> None:
    for _ in range(2):  # a failure is not memoised: it raises every time
        with pytest.raises(ValueError, match=r"[Pp]ort|IPv6"):
            origin(url)
    with pytest.raises(ValueError, match=r"[Pp]ort|IPv6"):  # a flow with nothing to place refuses it too
        _flow(AuthSpec(), DOCS["no security"]).credentials(url)
