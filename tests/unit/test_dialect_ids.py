"""An id that is no string (a number, an object) is read as absent, never sliced or compared as a string.

Found by the differential harness (tests/differential): a 1.0 stream whose second event said `"taskId": 7` made the
stream judge slice the int (`item.task_id[:40]`) and the probe ended in probe_error with a traceback, where a2a-sdk's
client refuses the event (json_format: "Failed to parse taskId field: expected string").
"""

from __future__ import annotations

import pytest

from probe.wire.dialects import V03, V1


@pytest.mark.parametrize("bad", [7, {"x": 1}, ["t1"], True])
@pytest.mark.parametrize("key", ["statusUpdate", "artifactUpdate", "message"])
def test_a_non_string_id_is_absent(key: str, bad: object) -> None:
    body: dict[str, object] = {"taskId": bad, "contextId": bad, "status": {"state": "TASK_STATE_WORKING"},
                               "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
                               "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}
    item = V1.result_item({key: body})
    assert item.task_id is None and item.context_id is None
    if key != "message":
        assert any("lacks taskId or contextId" in p for p in item.problems), item.problems


def test_a_03_update_with_a_number_id() -> None:
    item = V03.result_item({"kind": "status-update", "taskId": 7, "contextId": "c1", "final": True,
                            "status": {"state": "completed"}})
    assert item.task_id is None and item.context_id == "c1"


# ProtoJSON parsers read a field by its proto name too (protobuf's json_format under a2a-sdk 1.x, ts-proto's fromJSON
# under @a2a-js/sdk 1.x): a 1.0 agent that writes snake_case is called fine by both; the spelling is
# invoke.camel_case's MUST finding, never a task without a contextId (before: invoke_bad_result)
@pytest.mark.parametrize(("result", "kind"), [
    ({"task": {"id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}, "task"),
    ({"status_update": {"task_id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_WORKING"}}}, "status"),
    ({"artifact_update": {"task_id": "t1", "context_id": "c1", "last_chunk": True,
                          "artifact": {"artifact_id": "a1", "parts": [{"text": "x"}]}}}, "artifact"),
    ({"message": {"message_id": "m", "task_id": "t1", "context_id": "c1", "role": "ROLE_AGENT",
                  "parts": [{"text": "x"}]}}, "message"),
])
def test_proto_field_names_are_read_as_protojson_parsers_read_them(result: dict[str, object], kind: str) -> None:
    item = V1.result_item(result)
    assert (item.kind, item.task_id, item.context_id, item.problems) == (kind, "t1", "c1", [])
    if kind == "artifact":
        assert item.artifact_id == "a1" and item.last_chunk


def test_the_03_json_dialect_reads_json_names_only() -> None:
    """a2a-js 0.3 reads plain JSON objects: a 0.3 JSON-RPC agent's context_id is no contextId to it."""
    item = V03.result_item({"kind": "task", "id": "t1", "context_id": "c1", "status": {"state": "completed"}})
    assert item.context_id is None


def test_named_reads_the_proto_name_in_proto_dialects_only() -> None:
    from probe.wire.dialects import named

    page = {"tasks": [], "next_page_token": ""}
    assert named(V1, page, "nextPageToken") == ""  # ListTasks' last page, as json_format reads it
    assert named(V1, {"nextPageToken": "p2", "next_page_token": "x"}, "nextPageToken") == "p2"  # the JSON name first
    assert named(V03, {"next_page_token": ""}, "nextPageToken") is None
    assert named(V1, {"message_id": "m1"}, "messageId") == "m1"
