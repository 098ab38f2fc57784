"""A 1.0 agent that writes the proto's snake_case field names (MessageToDict(preserving_proto_field_name=True), a
hand-rolled serializer) is called fine by both official clients, whose ProtoJSON parsers read either name: the
verdict passes, and the spelling is invoke.camel_case's MUST finding (1.0 §5.5). Before, the probe read camelCase
only and failed the call as invoke_bad_result ("the task has no contextId")."""

from __future__ import annotations

import json
from typing import Any

from a2a.types import a2a_pb2
from google.protobuf import json_format

from probe.engine import run_probe
from probe.results import Status
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.scripted import Reply, scripted_agent

ART = {"artifact_id": "a1", "parts": [{"text": "hello", "media_type": "text/plain"}]}
TASK = {"id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}
EVENTS: list[dict[str, Any]] = [
    {"task": TASK},
    {"status_update": {"task_id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_WORKING"}}},
    {"artifact_update": {"task_id": "t1", "context_id": "c1", "artifact": ART, "last_chunk": True}},
    {"status_update": {"task_id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}},
]
SENT = {"task": {**TASK, "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [ART]}}


def _rpc(result: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": "{id}", "result": result})


def test_the_official_parser_reads_these_answers() -> None:
    """The premise, on a2a-sdk's own definitions: every answer parses, ids intact."""
    sent = json_format.ParseDict(SENT, a2a_pb2.SendMessageResponse())
    assert (sent.task.context_id, sent.task.artifacts[0].artifact_id) == ("c1", "a1")
    for event in EVENTS:
        parsed = json_format.ParseDict(event, a2a_pb2.StreamResponse())
        assert parsed.WhichOneof("payload") in ("task", "status_update", "artifact_update")


async def test_a_snake_case_agent_passes_with_the_camel_case_finding(client: HttpClient) -> None:
    replies = {"SendMessage": Reply(chunks=[_rpc(SENT)]),
               "SendStreamingMessage": Reply(content_type="text/event-stream",
                                             chunks=[f"data: {_rpc(e)}\n\n" for e in EVENTS])}
    async with scripted_agent(replies) as origin:
        r = await run_probe(Target(name="snake", url=origin, timeout=5.0), client)
    failed = {c.id: c for c in r.checks if c.status is Status.FAIL}
    assert r.success and r.reason is None, (r.reason, r.problem, failed)
    assert set(failed) == {"invoke.camel_case"}, failed
    assert "result.task.context_id (ProtoJSON name 'contextId')" in failed["invoke.camel_case"].message
