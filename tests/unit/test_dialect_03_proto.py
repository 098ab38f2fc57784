"""The 0.3 proto dialect (0.3 over HTTP+JSON and gRPC): ProtoJSON of a2a.v1, not the 0.3 JSON-RPC shapes."""

from __future__ import annotations

from probe.wire.bindings.http_json import HttpJsonBinding
from probe.wire.dialects import V03, V03_PROTO, V1, TaskState, for_binding
from probe.wire.http import HttpClient

TASK = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELLED"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "echo: hi"}]}],
        "history": [{"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "from history"}]}]}


def test_a_wrapped_task_reads_with_its_two_l_cancelled_and_message_content() -> None:
    item = V03_PROTO.result_item({"task": TASK})
    assert (item.kind, item.task_id, item.state, item.problems) == ("task", "t", TaskState.CANCELED, [])
    assert item.texts == ["echo: hi", "from history"]  # an Artifact's parts, a Message's content


def test_the_1_0_spelling_and_json_rpc_shapes_are_deviations_named_as_such() -> None:
    item = V03_PROTO.result_item({"task": {**TASK, "status": {"state": "TASK_STATE_CANCELED"}}})
    assert item.state is TaskState.UNKNOWN
    assert "unknown task state 'TASK_STATE_CANCELED' for protocol 0.3 proto (that is the 1.0 spelling)" in item.problems
    bare = V03_PROTO.result_item({"kind": "task", **TASK})
    assert bare.kind == "unknown" and "looks like a 0.3 result with 'kind'" in bare.problems[0]
    kinded = V03_PROTO.result_item({"message": {"messageId": "m", "role": "ROLE_AGENT",
                                                "content": [{"kind": "text", "text": "x"}]}})
    assert "a 0.3 proto part carries the 0.3 'kind' field" in kinded.problems


def test_a_final_status_update_and_the_user_message_builder() -> None:
    ev = V03_PROTO.result_item({"statusUpdate": {"taskId": "t", "contextId": "c", "final": True,
                                                 "status": {"state": "TASK_STATE_COMPLETED"}}})
    assert (ev.kind, ev.final, ev.state, ev.problems) == ("status", True, TaskState.COMPLETED, [])
    msg = V03_PROTO.user_message("hi", "m1", "t", None)
    assert msg == {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}], "taskId": "t"}


async def test_0_3_over_rest_and_grpc_speaks_the_proto_dialect_json_rpc_keeps_the_json_one() -> None:
    assert for_binding(V03, "http_json") is V03_PROTO and for_binding(V03, "grpc") is V03_PROTO
    assert for_binding(V03, "jsonrpc") is V03 and for_binding(V1, "http_json") is V1
    async with HttpClient() as client:
        assert HttpJsonBinding(client, "http://a/rest", V03, {}).dialect is V03_PROTO
