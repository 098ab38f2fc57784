"""The probe through a real nginx in front of the official a2a-sdk 1.3.0 peer: one gateway mistake per config.

Each test starts the peer (advertising the gateway's URLs, as an agent with a public base URL does) and an nginx
with one configuration a platform team really writes, then asserts the verdict and the one primary reason, and
that the reason names the gateway's fault rather than the agent's (docs/runbook.md, "Behind a gateway").
"""

from __future__ import annotations

import json

import pytest

from probe.cli import main
from probe.engine import FULL_STEPS, run_interfaces, run_probe
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import ProbeResult, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.gateway.conftest import Start

pytestmark = pytest.mark.external  # starts nginx and the SDK peer

# what a correct A2A route looks like: the prefix stripped once, HTTP/1.1 keep-alive upstream, SSE unbuffered
PROXY = """
    proxy_pass http://127.0.0.1:{up}/;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
"""
GRPC = """
server {{
  listen 127.0.0.1:{ggw} http2;
  location / {{ grpc_pass grpc://127.0.0.1:{gup}; }}
}}
"""
# the card through its own location, untouched (the faults below are in the A2A routes)
CARD = """
  location = {route}/.well-known/agent-card.json {{ proxy_pass http://127.0.0.1:{up}/.well-known/agent-card.json; }}
"""
# a gateway that rewrites the card's URLs with sub_filter (sub_filter needs the upstream body uncompressed)
REWRITE = """
  location = {{route}}/.well-known/agent-card.json {{{{
    proxy_pass http://127.0.0.1:{{up}}/.well-known/agent-card.json;
    proxy_set_header Accept-Encoding "";
    sub_filter_types application/json;
    sub_filter '{old}' '{new}';
    sub_filter_once off;
  }}}}
"""


def server(*parts: str, extra: str = "") -> str:
    return "server {{\n  listen 127.0.0.1:{gw};\n" + extra + "".join(parts) + "}}\n"


def route(directives: str = "proxy_buffering off;", proxy: str = PROXY) -> str:
    return "  location {route}/ {{" + proxy + "    " + directives + "\n  }}\n"


async def probe(url: str, *, binding: str | None = None, message: str = "hello gateway", timeout: float = 20.0,
                steps: tuple[StepName, ...] = FULL_STEPS, token: str | None = None) -> ProbeResult:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    target = Target.model_validate({"name": "behind-nginx", "url": url, "binding": binding, "message": message,
                                    "timeout": timeout, "headers": headers})
    async with HttpClient() as client:
        return await run_probe(target, client, steps=steps)


def failed_step(result: ProbeResult) -> tuple[StepName, str]:
    step = next(s for s in result.steps if s.status is Status.FAIL)
    return step.name, step.detail or ""


@pytest.mark.parametrize("kind", ["python", "js"])  # a2a-sdk and @a2a-js/sdk
async def test_a_correct_gateway_passes_every_binding(gateway: Start, kind: str) -> None:
    """The baseline every other config changes one thing of: JSON-RPC, HTTP+JSON and gRPC (grpc_pass) all pass."""
    behind = gateway(server(route()) + GRPC, kind=kind)
    target = Target(name="behind-nginx", url=behind.url, message="hello gateway", expect_text="echo: hello gateway")
    async with HttpClient() as client:
        result = await run_interfaces(target, client)
    assert result.success, (result.reason, result.steps, [(i.binding, i.reason, i.steps) for i in result.interfaces])
    assert sorted(i.binding for i in result.interfaces) == ["grpc", "http_json", "jsonrpc"]
    for i in result.interfaces:  # every call went through the gateway
        port = behind.grpc_port if i.binding == "grpc" else behind.port
        assert (i.interface_url or "").startswith(f"http://127.0.0.1:{port}"), i


async def test_the_gateway_doubles_the_route_prefix(gateway: Start) -> None:
    """The agent already advertises its public URL under the route; the gateway's card rewrite prefixes the route
    again, so the advertised URL repeats it and 404s behind the gateway."""
    doubled = REWRITE.format(old='"http://127.0.0.1:{gw}/', new='"http://127.0.0.1:{gw}{route}/')
    behind = gateway(server(doubled, route()))
    result = await probe(behind.url)
    assert result.reason is Reason.INTERFACE_PATH_DOUBLED
    assert result.interface_url == f"http://127.0.0.1:{behind.port}/api/a2a/ns/name/api/a2a/ns/name/a2a/jsonrpc"
    name, detail = failed_step(result)
    assert name is StepName.INVOKE
    assert "HTTP 404" in detail


async def test_the_base_url_setting_holds_the_route_prefix(gateway: Start) -> None:
    """kagent's a2aBaseUrl set to https://gw/api/a2a instead of https://gw: the agent advertises
    /api/a2a/api/a2a/ns/name/…, which no gateway location routes (nginx's own 404 page)."""
    behind = gateway(server(route()), public_url="http://127.0.0.1:{gw}/api/a2a{route}")
    result = await probe(behind.url)
    assert result.reason is Reason.INTERFACE_PATH_DOUBLED, (result.reason, result.steps)
    assert result.interface_url == f"http://127.0.0.1:{behind.port}/api/a2a/api/a2a/ns/name/a2a/jsonrpc"
    name, detail = failed_step(result)
    assert name is StepName.INVOKE and "HTTP 404" in detail and "nginx" in detail, detail


async def test_the_gateway_does_not_strip_the_route_prefix(gateway: Start) -> None:
    """`proxy_pass http://up;` (no URI) passes /api/a2a/ns/name/a2a/jsonrpc on as it is: the agent has no such
    route. The card's own location strips it, so discovery works; the advertised URL is right, the route is not."""
    behind = gateway(server(CARD, "  location {route}/ {{ proxy_pass http://127.0.0.1:{up}; }}\n"))
    result = await probe(behind.url)
    assert result.reason is Reason.INVOKE_ROUTE_NOT_FOUND
    name, detail = failed_step(result)
    assert name is StepName.INVOKE
    assert "HTTP 404" in detail


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_http_1_0_to_the_upstream_still_works(gateway: Start, binding: str) -> None:
    """`proxy_http_version 1.0` (nginx's default): no chunking upstream, the agent closes to end its stream; nginx
    re-frames it for the client. Nothing is wrong for a client, and the probe says so."""
    behind = gateway(server(route(proxy="\n    proxy_pass http://127.0.0.1:{up}/;\n    proxy_http_version 1.0;\n")))
    result = await probe(behind.url, binding=binding)
    assert result.success, (result.reason, result.steps)


@pytest.mark.parametrize("directives", [
    # buffered SSE (nginx's default; the SDK's X-Accel-Buffering: no ignored): nginx still writes out what it has
    # whenever the upstream pauses, so the events come as they are made (a slow task's Task and WORKING included)
    "proxy_buffering on; proxy_ignore_headers X-Accel-Buffering;",
    # gzip on text/event-stream, unbuffered: compressed and flushed per upstream read
    "proxy_buffering off; gzip on; gzip_types text/event-stream application/json; gzip_min_length 1;",
    # both: nginx holds the headers and every event until the upstream ends (see the slow case below)
    "proxy_buffering on; proxy_ignore_headers X-Accel-Buffering; gzip on; gzip_types text/event-stream; "
    "gzip_min_length 1;",
])
async def test_a_buffered_or_compressed_stream_of_a_quick_task_passes(gateway: Start, directives: str) -> None:
    """A quick task's stream ends before any buffering shows: clients get every event (at worst all at the end,
    decompressed by the HTTP client), so a verdict cannot (and does not) fail it."""
    behind = gateway(server(route(directives)))
    result = await probe(behind.url)
    assert result.success, (result.reason, result.steps)


def gateway_failure(result: ProbeResult, status: str, words: str) -> None:
    """The gateway's fault, said once and never as the agent's: the one reason, the gateway's status and what it
    means in the failed step, and no check of the agent's own A2A behaviour failed beside the one carrying it."""
    assert result.reason is Reason.INVOKE_GATEWAY_ERROR, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert status in detail, detail
    assert words in detail, detail
    assert [c.id for c in result.failed_checks() if c.reason is not None] in (["invoke.transport"],
                                                                                ["stream.content_type"])
    assert not any(c.id.startswith(("invoke.version", "invoke.no_error", "invoke.framing", "stream.no_error"))
                   for c in result.failed_checks())
    assert level(result) is Level.UNKNOWN  # not non-conformant: the agent was never judged


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_upstream_is_down(gateway: Start, binding: str) -> None:
    """The route points at a port nothing listens on (a wrong Service port, pods gone): nginx's 502 page."""
    behind = gateway(server(CARD, route(proxy="\n    proxy_pass http://127.0.0.1:9/;\n")))
    gateway_failure(await probe(behind.url, binding=binding), "HTTP 502", "could not get an answer from it")


async def test_the_grpc_upstream_is_down(gateway: Start) -> None:
    """grpc_pass to a dead upstream: nginx answers the HTTP/2 call with a 502 page, which gRPC core turns into
    UNAVAILABLE "Received http2 header with status: 502": the gateway answered, not the agent (nor a closed port)."""
    behind = gateway(server(CARD) + GRPC.replace("{gup}", "9"))
    gateway_failure(await probe(behind.url, binding="GRPC"), "status: 502", "could not get an answer from it")


@pytest.mark.parametrize("kind", ["python", "js"])  # a2a-sdk and @a2a-js/sdk
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_agent_is_slower_than_proxy_read_timeout(gateway: Start, binding: str, kind: str) -> None:
    """A blocking SendMessage of a 30 s task behind `proxy_read_timeout 2s`: nginx's 504 page after 2 s."""
    behind = gateway(server(route("proxy_buffering off; proxy_read_timeout 2s;")), kind=kind)
    result = await probe(behind.url, binding=binding, message="slow please", steps=(StepName.INVOKE,))
    gateway_failure(result, "HTTP 504", "read timeout")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_client_max_body_size_too_small(gateway: Start, binding: str) -> None:
    behind = gateway(server(route("proxy_buffering off; client_max_body_size 64;")))
    gateway_failure(await probe(behind.url, binding=binding), "HTTP 413", "client_max_body_size")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_large_client_header_buffers_too_small_for_the_token(gateway: Start, binding: str) -> None:
    """A 2 KB bearer token (an OIDC JWT with groups) over 1 KB header buffers: nginx's 400 'Request Header Or
    Cookie Too Large'. Discovery sends no credentials, so the card still comes."""
    behind = gateway(server(route(), extra="  client_header_buffer_size 1k;\n  large_client_header_buffers 2 1k;\n"))
    result = await probe(behind.url, binding=binding, token="x" * 2048)
    gateway_failure(result, "HTTP 400", "large_client_header_buffers")


@pytest.mark.parametrize("kind", ["python", "js"])  # a2a-sdk and @a2a-js/sdk
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("directive", ['proxy_set_header A2A-Version "";', "proxy_pass_request_headers off;"])
async def test_the_gateway_clears_the_a2a_version_header(gateway: Start, binding: str, directive: str,
                                                         kind: str) -> None:
    """`proxy_set_header A2A-Version "";` (a header allow-list, a copied snippet), or no client header passed on
    at all: the agent reads the absent header as 0.3 and refuses; it does accept 1.0, the header never reached it."""
    behind = gateway(server(route("proxy_buffering off; " + directive)), kind=kind)
    result = await probe(behind.url, binding=binding)
    assert result.reason is Reason.INVOKE_GATEWAY_ERROR, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert "received A2A-Version 0.3, the probe sent 1.0" in detail
    assert not any(c.id == "invoke.version_accepted" for c in result.failed_checks())
    assert level(result) is Level.UNKNOWN


@pytest.mark.parametrize("kind", ["python", "js"])  # a2a-sdk and @a2a-js/sdk
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_proxy_read_timeout_cuts_the_stream_mid_way(gateway: Start, binding: str, kind: str) -> None:
    """A 30 s task streamed behind `proxy_read_timeout 2s`: the Task and WORKING arrive, then the agent is silent
    (a2a-sdk's SSE pings come every 15 s, @a2a-js/sdk sends none) and nginx closes the response without its last
    chunk. stream_reset, and the detail says how long the stream had been silent, the figure to hold against the
    proxy's timeout."""
    behind = gateway(server(route("proxy_buffering off; proxy_read_timeout 2s;")), kind=kind)
    result = await probe(behind.url, binding=binding, message="slow please", steps=(StepName.STREAM,))
    assert result.reason is Reason.STREAM_RESET, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert "after 2 event(s) (last state WORKING)" in detail, detail
    quiet = float(detail.split(" s after the last event")[0].rsplit(", ", 1)[1])
    assert quiet >= 1.0, detail  # nginx cannot cut before 2 s of silence; the probe's clock starts a little later
    assert "proxy_read_timeout" in detail


GZIP_BUFFERED = ("proxy_buffering on; proxy_ignore_headers X-Accel-Buffering; "
                 "gzip on; gzip_types text/event-stream application/json; gzip_min_length 1;")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_gzip_on_a_buffered_stream_holds_it_back(gateway: Start, binding: str) -> None:
    """gzip on text/event-stream with proxy_buffering on (the SDK's X-Accel-Buffering: no ignored): nginx sends
    neither the headers nor the Task until the upstream ends, so a slow task's client sees nothing at all. The
    probe's deadline passes with no response; the detail says what holds a stream back."""
    behind = gateway(server(route(GZIP_BUFFERED)))
    result = await probe(behind.url, binding=binding, message="slow please", timeout=3,
                         steps=(StepName.STREAM,))
    assert result.reason is Reason.INVOKE_TIMEOUT, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert "the stream never started" in detail and "gzip" in detail, detail


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_card_rewritten_to_https_on_a_plain_listener(gateway: Start, binding: str) -> None:
    """sub_filter turns the card's http:// into https:// (TLS is terminated elsewhere for other routes, or the
    agent trusts X-Forwarded-Proto), but this listener speaks plain HTTP: nginx answers the ClientHello with a
    400 in plain text. No certificate was ever offered, so no certificate is blamed: the URL's scheme is wrong."""
    https = REWRITE.format(old='"http://', new='"https://')
    behind = gateway(server(https, route()))
    result = await probe(behind.url, binding=binding)
    assert result.interface_url is not None and result.interface_url.startswith("https://127.0.0.1:")
    assert result.reason is Reason.INVOKE_UNREACHABLE, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert "does not speak TLS" in detail and "https:// for a plain-HTTP listener" in detail, detail
    assert not any(c.id.startswith("tls.") for c in result.failed_checks()), result.failed_checks()


async def test_a_301_to_https_on_the_a2a_endpoint(gateway: Start) -> None:
    """`return 301 https://$host$request_uri;` on the A2A route (an http-to-https policy) while the card says
    http: clients POST and stop at the redirect. The detail names where it points and what to advertise."""
    behind = gateway(server(CARD, "  location {route}/ {{ return 301 https://$host$request_uri; }}\n"))
    result = await probe(behind.url)
    assert result.reason is Reason.INVOKE_UNEXPECTED_STATUS, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert "HTTP 301" in detail and "redirecting to https://127.0.0.1/api/a2a/ns/name/a2a/jsonrpc" in detail, detail
    assert "advertise the https URL" in detail


async def test_nginx_adds_a_trailing_slash_to_the_a2a_endpoint(gateway: Start) -> None:
    """The route is written `location {route}/a2a/jsonrpc/` with proxy_pass: nginx answers the advertised URL,
    which has no slash, with its own 301 to the slashed one."""
    slashed = "  location {route}/a2a/jsonrpc/ {{" + PROXY.replace("{up}/", "{up}/a2a/jsonrpc") + "  }}\n"
    behind = gateway(server(CARD, slashed))
    result = await probe(behind.url)
    assert result.reason is Reason.INVOKE_UNEXPECTED_STATUS, (result.reason, result.steps)
    _, detail = failed_step(result)
    assert f"redirecting to http://127.0.0.1:{behind.port}/api/a2a/ns/name/a2a/jsonrpc/" in detail, detail
    assert "trailing-slash redirect" in detail


async def test_the_card_rewritten_to_the_upstream_address(gateway: Start) -> None:
    """sub_filter writes the upstream's address (the proxy_pass target) into the card instead of the gateway's:
    clients call the agent's server directly with the gateway's route path, which it does not serve."""
    upstream = REWRITE.format(old='"http://127.0.0.1:{gw}/', new='"http://127.0.0.1:{up}/')
    behind = gateway(server(upstream, route()))
    result = await probe(behind.url)
    assert result.interface_url == f"http://127.0.0.1:{behind.peer.port}/api/a2a/ns/name/a2a/jsonrpc"
    assert result.reason is Reason.INVOKE_ROUTE_NOT_FOUND, (result.reason, result.steps)


async def test_grpc_advertised_on_an_http_1_1_listener(gateway: Start) -> None:
    """The card advertises gRPC on the gateway's HTTP/1.1 port (no `listen … http2`): nginx answers the HTTP/2
    preface as a bad HTTP/1.1 request and gRPC never connects."""
    behind = gateway(server(route(), extra="  location / {{ grpc_pass grpc://127.0.0.1:{gup}; }}\n"),
                     public_grpc="http://127.0.0.1:{gw}")
    result = await probe(behind.url, binding="GRPC")
    assert result.reason is Reason.INVOKE_UNREACHABLE, (result.reason, result.steps)


async def test_limit_req_sheds_the_stream(gateway: Start) -> None:
    """`limit_req` at 1 request a minute on the A2A route: SendMessage passes, SendStreamingMessage right after it
    gets nginx's 503 page. The stream step says the gateway refused it, not that the agent cannot stream."""
    limited = route("proxy_buffering off; limit_req zone=a2a;")
    behind = gateway("limit_req_zone $binary_remote_addr zone=a2a:1m rate=1r/m;\n" + server(CARD, limited))
    result = await probe(behind.url)
    gateway_failure(result, "HTTP 503", "no available upstream for this route (or sheds load)")
    name, _ = failed_step(result)
    assert name is StepName.STREAM


async def test_the_card_through_a_dead_upstream(gateway: Start) -> None:
    """The whole route's upstream is down: the card itself is nginx's 502 page. card_http_status (clients cannot
    discover the agent), and the detail says the gateway could not reach it."""
    behind = gateway(server(route(proxy=PROXY.replace("{up}", "9"))))
    result = await probe(behind.url)
    assert result.reason is Reason.CARD_HTTP_STATUS, (result.reason, result.steps)
    name, detail = failed_step(result)
    assert name is StepName.DISCOVER
    assert "answered HTTP 502: a gateway in front of the agent could not get an answer from it" in detail, detail


def test_the_cli_names_the_gateway(gateway: Start, capsys: pytest.CaptureFixture[str]) -> None:
    """What a person running `a2a-probe check` against the gateway sees: exit 1, the reason and its fix."""
    behind = gateway(server(CARD, route(proxy="\n    proxy_pass http://127.0.0.1:9/;\n")))
    assert main(["check", behind.url, "--no-stream"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL"), out
    assert "invoke_gateway_error" in out and "HTTP 502" in out, out
    assert "Fix the gateway's route, not the agent" in out, out
    assert "conformance: unknown" in out, out


def test_the_full_suite_through_a_rate_limiting_gateway(gateway: Start, capsys: pytest.CaptureFixture[str]) -> None:
    """`limit_req` lets the basic send and stream through, then answers the suite's calls with its 503 page. No
    check of the agent fails for what the gateway answered: each such check is 'not judged', and the 503s are not
    the agent's server errors."""
    limited = route("proxy_buffering off; limit_req zone=a2a burst=2 nodelay;")
    behind = gateway("limit_req_zone $binary_remote_addr zone=a2a:1m rate=1r/m;\n" + server(CARD, limited))
    main(["check", behind.url, "--suite", "full", "--format", "json"])
    rep = json.loads(capsys.readouterr().out)
    failed = [(r["test"], r["message"]) for r in rep["results"] if r["status"] == "fail"]
    assert failed == [("card.cache_headers", "missing Cache-Control max-age")], failed  # the SDK's own SHOULD
    not_judged = [r for r in rep["results"] if r["message"].startswith("not judged: ")]
    assert len(not_judged) >= 10 and all("HTTP 503" in r["message"] for r in not_judged), not_judged
    crash = next(r for r in rep["results"] if r["test"] == "errors.no_server_errors")
    aside = "the agent never gave (a gateway's own, a rate limit's) set aside"
    assert crash["status"] == "pass" and aside in crash["message"], crash


@pytest.mark.parametrize("directive", ['proxy_set_header A2A-Version "";', "limit_req zone=a2a;"])
async def test_the_daemons_ping_through_the_gateway(gateway: Start, directive: str) -> None:
    """The daemon's default module, `ping` (GetTask of an unknown id), sees the same gateway faults: the header
    cleared, and a rate limit's 503 (the first call passes, so the ping is the second)."""
    zone = "limit_req_zone $binary_remote_addr zone=a2a:1m rate=1r/m;\n"
    behind = gateway(zone + server(CARD, route("proxy_buffering off; " + directive)))
    if "limit_req" in directive:
        assert (await probe(behind.url, steps=(StepName.PING,))).success
    result = await probe(behind.url, steps=(StepName.PING,))
    assert result.reason is Reason.INVOKE_GATEWAY_ERROR, (result.reason, result.steps)
    assert level(result) is Level.UNKNOWN
