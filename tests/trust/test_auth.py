"""Auth flows against loopback agents and a loopback identity provider: each asserts the exact reason, and
that no credential reached another origin."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pydantic import SecretStr

from probe import report
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.target import ApiKeySpec, AuthSpec, BasicSpec, OAuth2Spec, Target
from probe.trust import auth as authflows
from probe.wire.http import HttpClient
from tests.trust.agent import Gate, base_card, trust_agent
from tests.trust.idp import CLIENT_ID, CLIENT_SECRET, Idp, idp

BEARER = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}


def _requires(**schemes: Any) -> Any:
    def card(origin: str) -> dict[str, Any]:
        return base_card(origin, securitySchemes=schemes,
                         securityRequirements=[{"schemes": {name: {"list": []}}} for name in schemes])
    return card


def bearer_gate(token: Any) -> Gate:
    """401 unless `Authorization: Bearer <token()>`."""
    def gate(request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {token()}":
            return web.Response(status=401, headers={"WWW-Authenticate": "Bearer"})
        return None
    return gate


def oauth(idp_: Idp, **kw: Any) -> AuthSpec:
    return AuthSpec(oauth2=OAuth2Spec(client_id=CLIENT_ID, client_secret=SecretStr(CLIENT_SECRET), **kw))


async def _probe(client: HttpClient, origin: str, auth: AuthSpec, **kw: Any) -> ProbeResult:
    steps = kw.pop("steps", (StepName.INVOKE,))
    return await run_probe(Target(name="a", url=origin, timeout=10, auth=auth, **kw), client, steps=steps)


@pytest.fixture(autouse=True)
def _fresh_token_cache() -> None:
    authflows._TOKENS.clear()
    authflows._DISCOVERY.clear()


async def test_oauth2_client_credentials_cached_and_refreshed_once_on_401(client: HttpClient) -> None:
    async with idp() as provider:
        card = _requires(oauth={"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": "https://idp.elsewhere.example/token", "scopes": {"a2a": "call"}}}}})
        async with trust_agent(card, gate=bearer_gate(lambda: provider.current)) as agent:
            spec = oauth(provider, token_url=provider.token_url)
            first = await _probe(client, agent.origin, spec)
            assert first.success, first.steps
            step = first.step(StepName.AUTH)
            assert step is not None and step.status is Status.PASS and step.http_status == 200
            assert [e.url for e in step.exchanges] == [provider.token_url]
            assert provider.requests[0]["form"]["scope"] == "a2a"  # scopes from the card's declared flow
            assert first.check("security.credentials_match").status is Status.PASS  # type: ignore[union-attr]
            second = await _probe(client, agent.origin, spec)
            assert second.success and len(provider.issued) == 1  # cached until shortly before it expires
            provider.issued.append("Zq3rotated-by-idp")  # the agent now accepts only a newer token
            third = await _probe(client, agent.origin, spec)
            assert third.success, third.steps
            assert len(provider.issued) == 3  # exactly one refresh after the 401
            first_token = [s for s in agent.rpc_calls() if s.headers.get("Authorization") == "Bearer ZqDtok1-abcdefgh"]
            assert len(first_token) >= 2
    assert CLIENT_SECRET not in agent.all_text()  # the client secret went to the token endpoint only


async def test_expired_token_is_fetched_again(client: HttpClient) -> None:
    async with idp() as provider, trust_agent(_requires(**BEARER), gate=bearer_gate(lambda: provider.current)) as a:
        provider.expires_in = 10  # inside the refresh margin: never reused
        spec = oauth(provider, token_url=provider.token_url)
        assert (await _probe(client, a.origin, spec)).success
        assert (await _probe(client, a.origin, spec)).success
        assert len(provider.issued) == 2


async def test_token_endpoint_failure_is_its_own_reason(client: HttpClient) -> None:
    async with idp() as provider, trust_agent(_requires(**BEARER), gate=bearer_gate(lambda: "x")) as agent:
        provider.fail_with = 401
        result = await _probe(client, agent.origin, oauth(provider, token_url=provider.token_url))
    assert result.reason is Reason.AUTH_TOKEN_FAILED
    step = result.step(StepName.AUTH)
    assert step is not None and step.http_status == 401 and "invalid_client" in step.detail
    assert agent.rpc_calls() == []  # the agent was never called, never blamed


async def test_oidc_discovery_finds_the_token_endpoint(client: HttpClient) -> None:
    async with idp() as provider:
        card = _requires(oidc={"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://x.example/.well-known/o"}})
        async with trust_agent(card, gate=bearer_gate(lambda: provider.current)) as agent:
            spec = oauth(provider, discovery_url=provider.discovery_url, oidc=True)
            result = await _probe(client, agent.origin, spec)
    assert result.success, result.steps
    step = result.step(StepName.AUTH)
    assert step is not None and [e.url for e in step.exchanges] == [provider.discovery_url, provider.token_url]


async def test_card_declared_token_url_on_another_origin_gets_no_secret(client: HttpClient) -> None:
    async with idp() as provider:
        card = _requires(oauth={"oauth2SecurityScheme": {"flows": {"clientCredentials": {
            "tokenUrl": provider.token_url, "scopes": {}}}}})
        async with trust_agent(card, gate=bearer_gate(lambda: provider.current)) as agent:
            result = await _probe(client, agent.origin, oauth(provider))
            assert result.reason is Reason.AUTH_TOKEN_FAILED
            assert "another origin" in (result.step(StepName.AUTH).detail)  # type: ignore[union-attr]
            assert provider.requests == []
            allowed = oauth(provider).model_copy(update={"allowed_origins": (provider.origin,)})
            assert (await _probe(client, agent.origin, allowed)).success


@pytest.mark.parametrize("location", ["query", "cookie", "header"])
async def test_api_key_where_the_card_declares_it(client: HttpClient, location: str) -> None:
    key = "Zq4k3y-value"

    def gate(request: web.Request) -> web.Response | None:
        got = {"query": request.query, "cookie": request.cookies, "header": request.headers}[location].get("api_key")
        return None if got == key else web.Response(status=403)

    card = _requires(k={"apiKeySecurityScheme": {"location": location, "name": "api_key"}})
    async with trust_agent(card, gate=gate) as agent:
        result = await _probe(client, agent.origin, AuthSpec(api_key=ApiKeySpec(value=SecretStr(key))))
        wrong = await _probe(client, agent.origin, AuthSpec(api_key=ApiKeySpec(value=SecretStr("Zq5nope-nope"))))
    assert result.success, result.steps
    assert wrong.reason is Reason.INVOKE_AUTH  # a 403 is auth, never "path broken"
    exchange = result.steps[-1].exchanges[0]
    assert key not in exchange.url  # recorded URLs never carry the key


async def test_basic(client: HttpClient) -> None:
    expected = "Basic " + base64.b64encode(b"probe:Zq6pa55word").decode()
    card = _requires(basic={"httpAuthSecurityScheme": {"scheme": "Basic"}})
    gate: Gate = lambda r: None if r.headers.get("Authorization") == expected else web.Response(status=401)  # noqa: E731
    async with trust_agent(card, gate=gate) as agent:
        result = await _probe(client, agent.origin, AuthSpec(basic=BasicSpec(username="probe",
                                                                             password=SecretStr("Zq6pa55word"))))
    assert result.success


async def test_card_declares_schemes_the_config_lacks(client: HttpClient) -> None:
    card = _requires(oauth={"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://i/t",
                                                                                      "scopes": {}}}}})
    async with trust_agent(card, gate=bearer_gate(lambda: "never")) as agent:
        result = await _probe(client, agent.origin, AuthSpec())
    assert result.reason is Reason.INVOKE_AUTH
    match = result.check("security.credentials_match")
    assert match is not None and match.status is Status.FAIL and "auth.oauth2" in match.message
    # and the other way round: credentials the card does not declare
    async with trust_agent() as agent:
        extra = await _probe(client, agent.origin, AuthSpec(bearer=SecretStr("Zq7unneeded")))
    check = extra.check("security.credentials_match")
    assert extra.success and check is not None and check.status is Status.FAIL
    assert "declares no security" in check.message


async def test_credentials_only_to_their_origin(client: HttpClient) -> None:
    secret = "Zq8only-for-agent"
    async with trust_agent() as elsewhere:
        card = lambda o: base_card(o, supportedInterfaces=[{"url": f"{elsewhere.origin}/rpc",  # noqa: E731
                                                             "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                                   securitySchemes=BEARER, securityRequirements=[{"schemes": {"bearer": {"list": []}}}])
        async with trust_agent(card) as agent:
            spec = AuthSpec(bearer=SecretStr(secret), headers={"X-Api-Key": SecretStr("Zq9header-secret")})
            result = await _probe(client, agent.origin, spec, headers={"X-Api-Key": SecretStr("Zq9header-secret")})
            assert result.success  # the other origin does not require auth
            assert secret not in elsewhere.all_text() and "Zq9header-secret" not in elsewhere.all_text()
            assert secret not in agent.all_text()  # and discovery is public: no credentials on the card fetch
            check = result.check("security.credentials_match")
            assert check is not None and check.status is Status.FAIL and "allowed_origins" in check.message
            allowed = spec.model_copy(update={"allowed_origins": (elsewhere.origin,)})
            await _probe(client, agent.origin, allowed)
            assert f"Bearer {secret}" in elsewhere.all_text()


async def test_bearer_file_is_reread_when_it_changes(client: HttpClient, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("Zq1first-tok")
    current = {"token": "Zq1first-tok"}
    async with trust_agent(_requires(**BEARER), gate=bearer_gate(lambda: current["token"])) as agent:
        spec = AuthSpec(bearer=SecretStr("Zq1first-tok"), bearer_file=str(path))
        target = Target(name="a", url=agent.origin, timeout=10, auth=spec)
        current["token"] = "Zq2second-tok"  # rotated at the agent and on disk after the run resolved its target
        path.write_text("Zq2second-tok")
        os.utime(path, ns=(1, 1))
        result = await run_probe(target, client, steps=(StepName.INVOKE,))
    assert result.success, result.steps


async def test_extended_card_with_credentials(client: HttpClient) -> None:
    def card(origin: str) -> dict[str, Any]:
        doc = _requires(**BEARER)(origin)
        doc["capabilities"]["extendedAgentCard"] = True
        return doc

    def extended(origin: str) -> dict[str, Any]:
        doc = card(origin)
        doc["skills"] = [*doc["skills"], {"id": "admin", "name": "Admin", "description": "d", "tags": ["t"]}]
        return {**doc, "documentationUrl": "https://docs.example"}

    async with trust_agent(card, gate=bearer_gate(lambda: "ZqAtok-ext"), extended=extended) as agent:
        result = await _probe(client, agent.origin, AuthSpec(bearer=SecretStr("ZqAtok-ext")))
        anonymous = await _probe(client, agent.origin, AuthSpec())
    assert result.success
    assert result.extended_card == {"fields": ["documentationUrl"], "skills": ["admin"], "changed": []}
    assert "extended   card adds fields: documentationUrl; skills: admin" in report.to_text(result)
    assert result.check("card.extended").status is Status.PASS  # type: ignore[union-attr]
    assert anonymous.check("card.extended").status is Status.SKIP  # type: ignore[union-attr]


async def test_extended_card_02_is_an_http_get(client: HttpClient) -> None:
    def card(origin: str) -> dict[str, Any]:
        return {"name": "old", "description": "0.2 agent", "url": f"{origin}/rpc", "version": "1",
                "protocolVersion": "0.2.5", "capabilities": {}, "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"], "supportsAuthenticatedExtendedCard": True,
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "security": [{"bearer": []}],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]}

    async def extended(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer ZqEtok-02":
            return web.Response(status=401)
        return web.json_response({**card("x"), "skills": [{"id": "s"}, {"id": "hidden"}]})

    async with trust_agent(card, extra_routes=[web.get("/agent/authenticatedExtendedCard", extended)]) as agent:
        result = await _probe(client, agent.origin, AuthSpec(bearer=SecretStr("ZqEtok-02")), steps=(StepName.PING,))
    step = result.step(StepName.EXTENDED_CARD)
    assert step is not None and step.http_status == 200, result.steps
    assert result.extended_card is not None and result.extended_card["skills"] == ["hidden"]


async def test_no_credential_in_any_output_when_the_agent_echoes_them(client: HttpClient) -> None:
    """An agent that echoes every header and the query string back in its 401 body: reports carry none of it."""
    def echo(request: web.Request) -> web.Response:
        return web.Response(status=401, text=f"{dict(request.headers)} {request.query_string} {request.cookies}")

    card = _requires(k={"apiKeySecurityScheme": {"location": "query", "name": "api_key"}},
                     b={"httpAuthSecurityScheme": {"scheme": "Basic"}})
    spec = AuthSpec(api_key=ApiKeySpec(value=SecretStr("ZqGquery-key")),
                    basic=BasicSpec(username="probe", password=SecretStr("ZqHbasic-pw")))
    async with trust_agent(card, gate=echo) as agent:
        result = await _probe(client, agent.origin, spec)
    assert result.reason is Reason.INVOKE_AUTH
    basic = base64.b64encode(b"probe:ZqHbasic-pw").decode()
    for text in (report.render(result, "json"), report.to_text(result, verbose=True), report.render(result, "junit")):
        for secret in ("ZqGquery-key", "ZqHbasic-pw", basic):
            assert secret not in text
