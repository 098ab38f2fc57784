"""The interface's tenant in the request message of each binding (1.0.1 §8.3.2; tests/interop/test_tenant.py runs
it against the real a2a-sdk peer): gRPC's `tenant` field, HTTP+JSON's /{tenant} path and body; 0.3 has none."""

from __future__ import annotations

from probe.wire.bindings import Op
from probe.wire.bindings.grpc_binding import GrpcBinding
from probe.wire.bindings.http_json import HttpJsonBinding
from probe.wire.dialects import V03, V1
from probe.wire.http import HttpClient

MESSAGE = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}


def test_grpc_requests_carry_the_tenant() -> None:
    assert GrpcBinding("127.0.0.1:1", V1, {}, tenant="acme")._request(Op.SEND, MESSAGE).tenant == "acme"
    assert GrpcBinding("127.0.0.1:1", V1, {}, tenant="acme")._request(Op.GET, {"id": "t1"}).tenant == "acme"
    assert GrpcBinding("127.0.0.1:1", V1, {})._request(Op.SEND, MESSAGE).tenant == ""  # omitted when not declared


def test_rest_paths_and_bodies_carry_the_tenant() -> None:
    rest = HttpJsonBinding(HttpClient(), "http://127.0.0.1:1/a2a/rest/", V1, {}, tenant="a b")
    verb, url, body = rest._target(Op.SEND, MESSAGE)
    assert (verb, url) == ("POST", "http://127.0.0.1:1/a2a/rest/a%20b/message:send")
    assert body is not None and b'"tenant":"a b"' in body
    assert rest._target(Op.GET, {"id": "t1", "historyLength": 1})[1] == \
        "http://127.0.0.1:1/a2a/rest/a%20b/tasks/t1?historyLength=1"  # a query does not repeat it
    plain = HttpJsonBinding(HttpClient(), "http://127.0.0.1:1/a2a/rest", V03, {})
    assert plain._target(Op.SEND, MESSAGE)[1] == "http://127.0.0.1:1/a2a/rest/v1/message:send"
