"""The gRPC binding's pure parts: URL -> target and TLS, 0.3 requests and error names, and the refusal."""

from __future__ import annotations

from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import json_format

from probe.wire.bindings import BindingUnavailable, Op, ProblemKind
from probe.wire.bindings.grpc_binding import GrpcBinding, params_03, target_of
from probe.wire.dialects import V01, V03, V03_PROTO, V1
from probe.wire.http import ClientConfig, Credentials, Deadline, HttpClient


@pytest.mark.parametrize(("url", "expected"), [
    ("127.0.0.1:50051", ("127.0.0.1:50051", False, True)),
    ("http://agent.example:8080", ("agent.example:8080", False, False)),
    ("https://agent.example", ("agent.example:443", True, False)),
    ("grpcs://agent.example:9443/", ("agent.example:9443", True, False)),
])
def test_target_and_tls_follow_the_url(url: str, expected: tuple[str, bool, bool]) -> None:
    assert target_of(url) == expected


def test_metadata_carries_the_version_and_credentials_lowercased() -> None:
    b = GrpcBinding("127.0.0.1:1", V1, {"Authorization": "Bearer x"})
    md = dict(b._metadata_for({"A2A-Version": "99.0"}))
    assert md == {"authorization": "Bearer x", "a2a-version": "99.0"}
    assert dict(b._metadata_for({"authorization": None})) == {"a2a-version": "1.0"}


def test_pre_0_3_grpc_is_refused_as_the_agents_interface_not_a_probe_bug() -> None:
    with pytest.raises(BindingUnavailable) as err:
        GrpcBinding("127.0.0.1:1", V01, {})
    assert not err.value.probe_side
    assert "1.0 and 0.3" in str(err.value)


def test_0_3_speaks_the_0_3_service_on_the_sdks_0_3_stubs_in_the_proto_dialect() -> None:
    b = GrpcBinding("127.0.0.1:1", V03, {})
    assert b.service.name == "a2a.v1.A2AService" and b.pb2.__name__ == "a2a.compat.v0_3.a2a_v0_3_pb2"
    assert b.dialect is V03_PROTO
    assert (b.method(Op.SUBSCRIBE), b.method(Op.EXTENDED_CARD), b.method(Op.PUSH_LIST)) == (
        "TaskSubscription", "GetAgentCard", "ListTaskPushNotificationConfig")
    assert "a2a-version" not in dict(b._metadata_for(None))  # 0.3 has no version header
    assert b._exchange(Op.GET).method == "/a2a.v1.A2AService/GetTask"


@pytest.mark.parametrize(("op", "params", "request_json"), [
    (Op.GET, {"id": "t/1", "historyLength": 2}, {"name": "tasks/t%2F1", "historyLength": 2}),
    (Op.CANCEL, {"id": "t1"}, {"name": "tasks/t1"}),
    (Op.SUBSCRIBE, {"id": "t1"}, {"name": "tasks/t1"}),
    (Op.PUSH_SET, {"taskId": "t1", "pushNotificationConfig": {"id": "c1", "url": "http://h/x"}},
     {"parent": "tasks/t1", "configId": "c1", "config": {"name": "tasks/t1/pushNotificationConfigs/c1",
                                                          "pushNotificationConfig": {"id": "c1", "url": "http://h/x"}}}),
    (Op.PUSH_GET, {"id": "t1", "pushNotificationConfigId": "c1"}, {"name": "tasks/t1/pushNotificationConfigs/c1"}),
    (Op.PUSH_LIST, {"id": "t1"}, {"parent": "tasks/t1"}),
])
def test_0_3_requests_name_resources(op: Op, params: dict[str, Any], request_json: dict[str, Any]) -> None:
    b = GrpcBinding("127.0.0.1:1", V03, {})
    assert params_03(op, params) == request_json
    msg = b._request(op, params)  # parses into the SDK's generated 0.3 message without loss
    assert json_format.MessageToDict(msg) == request_json


async def test_0_3_has_no_list_tasks_rpc_and_says_so_without_calling() -> None:
    b = GrpcBinding("127.0.0.1:1", V03, {})  # nothing listens: a call would fail to connect
    answer = await b.call(Op.LIST, {}, deadline=Deadline(1.0))
    assert answer.problem is not None and answer.problem.kind is ProblemKind.ROUTE
    assert "defines no rpc for list" in answer.problem.detail


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


@pytest.mark.parametrize(("code", "details", "name"), [
    # a2a-sdk 0.3: no ErrorInfo, the error's name leads the details
    (grpc.StatusCode.UNIMPLEMENTED, "UnsupportedOperationError: not here", "UnsupportedOperationError"),
    (grpc.StatusCode.UNIMPLEMENTED, "TaskNotCancelableError: Task cannot be canceled", "TaskNotCancelableError"),
    (grpc.StatusCode.FAILED_PRECONDITION, "Task cannot be canceled", "TaskNotCancelableError"),  # §8 message
    # @a2a-js/sdk 0.3.14: no name, the error's own message (its A2AError) as the details
    (grpc.StatusCode.UNIMPLEMENTED, "Push Notification is not supported", "PushNotificationNotSupportedError"),
    (grpc.StatusCode.UNIMPLEMENTED, "Unsupported operation: Agent does not support authenticated extended card.",
     "UnsupportedOperationError"),
    (grpc.StatusCode.NOT_FOUND, "gone", "TaskNotFoundError"),  # the one error NOT_FOUND stands for
    (grpc.StatusCode.INTERNAL, "AuthenticatedExtendedCardNotConfiguredError: no",
     "ExtendedAgentCardNotConfiguredError"),
    (grpc.StatusCode.INTERNAL, "boom", None),
])
def test_0_3_grpc_errors_are_named_without_a_status_table(code: grpc.StatusCode, details: str,
                                                          name: str | None) -> None:
    b = GrpcBinding("127.0.0.1:1", V03, {})
    answer = b._failed(Op.CANCEL, b._exchange(Op.CANCEL), _rpc_error(code, details))
    assert answer.error is not None and answer.error.name == name
    assert answer.problem is None  # 0.3 sets no status to hold the agent to


def test_0_3_unimplemented_without_an_a2a_name_is_a_missing_service() -> None:
    b = GrpcBinding("127.0.0.1:1", V03, {})
    answer = b._failed(Op.GET, b._exchange(Op.GET), _rpc_error(grpc.StatusCode.UNIMPLEMENTED, "Method not found!"))
    assert answer.error is None and answer.problem is not None and answer.problem.kind is ProblemKind.ROUTE
    assert "no a2a.v1.A2AService here" in answer.problem.detail


def test_the_auth_flows_credentials_go_in_as_metadata_for_its_origin_only() -> None:
    class Flow:
        def __init__(self, origin: str) -> None:
            self.origin = origin

        def credentials(self, url: str) -> Credentials:
            return Credentials({"Authorization": "Bearer tok"}) if url.startswith(self.origin) else Credentials()

        async def on_unauthorized(self, client: HttpClient, deadline: Deadline) -> bool:
            return False

    mine = GrpcBinding("127.0.0.1:7", V1, {}, ClientConfig(auth=Flow("http://127.0.0.1:7")))
    assert dict(mine._metadata_for(None))["authorization"] == "Bearer tok"
    other = GrpcBinding("127.0.0.1:7", V1, {}, ClientConfig(auth=Flow("http://elsewhere:7")))
    assert "authorization" not in dict(other._metadata_for(None))
