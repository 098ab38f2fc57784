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
