"""invoke.timestamps_utc: the timestamps an agent's answers carry are UTC with 'Z', not another offset (1.0).

1.0.0 and 1.0.1 §5.6.1: "Timestamps **MUST NOT** include timezone offsets other than 'Z' (all times are UTC)".
`invoke.schema` / `stream.schema` stay as lenient as the official parsers (a2a-sdk's json_format and @a2a-js/sdk
read `+00:00` and `+02:00`), so such an answer is not a failed call; this check reports the offsets of its own, a
finding that counts for the conformance level and `--fail-on must`, never for the verdict (no step fails for it).

In the 1.0 proto the one Timestamp an agent sends is `TaskStatus.timestamp` (Message and Artifact have none): in a
Task, a SendMessage/StreamResponse's `task`, a `statusUpdate` event and ListTasks' `tasks`. 0.3 has no such rule (its
schema: "An ISO 8601 datetime string"; its own examples carry no zone): the registry leaves it ungraded there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from probe.checks.catalogue import record_finding
from probe.results import ProbeResult
from probe.wire.schema import show

CHECK = "invoke.timestamps_utc"
_MAX_SHOWN = 5
# an RFC 3339 date-time whose zone is an offset (what the schema accepts besides 'Z'); anything else is not this
# check's: a timestamp without a zone or not a date-time at all fails invoke.schema / stream.schema already
_OFFSET = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?[+-]\d{2}:\d{2}")
# the members of a 1.0 answer that hold a TaskStatus (SendMessageResponse / StreamResponse: task, statusUpdate);
# a bare Task (GetTask, CancelTask) or TaskStatusUpdateEvent holds it itself, ListTasksResponse in `tasks`
_HOLDERS = ("task", "statusUpdate")
PASSED = "every timestamp seen is UTC with 'Z'"
NONE_SEEN = "no timestamp in the answers seen"


@dataclass(slots=True)
class TimestampLog:
    """The status timestamps of one run's answers: how many, and the first few with an offset."""

    seen: int = 0
    offsets: int = 0
    shown: list[str] = field(default_factory=list)

    def see(self, payload: Any, where: str) -> None:
        """Note the TaskStatus timestamps of one answer (`where` names it: "SendMessage", "event 3")."""
        if payload.__class__ is not dict:
            return
        for path, holder in _holders(payload):
            status = holder.get("status")
            stamp = status.get("timestamp") if status.__class__ is dict else None
            if stamp.__class__ is not str:
                continue
            self.seen += 1
            if stamp[-1:] not in ("Z", "z") and _OFFSET.fullmatch(stamp):
                self.offsets += 1
                if len(self.shown) < _MAX_SHOWN:
                    self.shown.append(f"{where}: {path}status.timestamp {show(stamp)}")

    def record(self, result: ProbeResult) -> None:
        """The check, in place of an earlier record of it (the suite's own calls add to the engine's)."""
        failure = None
        if self.offsets:
            more = f" … (+{self.offsets - len(self.shown)} more)" if self.offsets > len(self.shown) else ""
            failure = (f"{self.offsets} of {self.seen} timestamp(s) carry an offset other than 'Z': "
                       f"{'; '.join(self.shown)}{more}")
        record_finding(result, CHECK, failure, seen=bool(self.seen), passed=PASSED, none_seen=NONE_SEEN)


def _holders(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [("", payload)]
    for key in _HOLDERS:
        inner = payload.get(key)
        if inner.__class__ is dict:
            out.append((f"{key}.", inner))
    tasks = payload.get("tasks")
    if tasks.__class__ is list:
        out += [(f"tasks[{i}].", t) for i, t in enumerate(tasks[:100]) if t.__class__ is dict]
    return out
