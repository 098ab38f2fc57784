"""0.3's `kind` and `final` inside a 1.0 answer: unrecognized fields, which 1.0 §5.7 has receivers ignore.

Found on LangGraph (langgraph-api 0.16.7), which keeps `kind` on its 1.0 Tasks, Messages and Parts. 1.0 §5.7:
"Implementations SHOULD ignore unrecognized fields in messages"; a2a-sdk 1.3's client parses every result with
ignore_unknown_fields=True (a2a.utils.proto_utils.parse_lenient) and @a2a-js/sdk 1.3's generated fromJSON reads
the fields it knows, so the answer reaches both intact: no MUST is broken (the probe failed invoke.result_shape and
invoke.dialect, MUST, on them). The 0.3 proto dialect still names them: a2a-sdk 0.3's REST client parses with
json_format.Parse, which rejects an unknown field.
"""

from __future__ import annotations

from probe.checks.shape import shape_problems
from probe.wire.dialects import V03_PROTO, V1, TaskState

PART = {"kind": "text", "text": "echo: hi"}
TASK = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "parts": [PART]}],
        "history": [{"kind": "message", "messageId": "m", "role": "ROLE_AGENT", "parts": [PART]}]}


def test_1_0_ignores_0_3_kind_and_final() -> None:
    item = V1.result_item({"task": TASK})
    assert (item.kind, item.state, item.problems) == ("task", TaskState.COMPLETED, [])
    assert shape_problems(item) == ([], [])
    assert item.texts == ["echo: hi", "echo: hi"]
    message = V1.result_item({"message": {"kind": "message", "messageId": "m", "role": "ROLE_AGENT", "parts": [PART]}})
    assert (message.kind, message.problems) == ("message", [])
    event = V1.result_item({"statusUpdate": {"kind": "status-update", "final": True, "taskId": "t", "contextId": "c",
                                             "status": {"state": "TASK_STATE_WORKING"}}})
    assert (event.kind, event.final, event.problems) == ("status", None, [])  # final means nothing in 1.0


def test_a_bare_0_3_result_is_still_no_1_0_result() -> None:
    bare = V1.result_item(TASK)  # not wrapped in {"task": …}: what a 1.0 client cannot read
    assert bare.kind == "unknown" and "looks like a 0.3 result with 'kind'" in bare.problems[0]


def test_the_0_3_proto_dialect_still_names_kind() -> None:
    item = V03_PROTO.result_item({"message": {"messageId": "m", "role": "ROLE_AGENT", "kind": "message",
                                              "content": [{"kind": "text", "text": "x"}]}})
    assert "a 0.3 proto part carries the 0.3 'kind' field" in item.problems
    assert "0.3 proto message carries the 0.3 'kind' field" in item.problems
