"""How a parsed result's problems split between invoke.result_shape and invoke.dialect (live and offline)."""

from __future__ import annotations

from probe.wire.dialects import NO_KIND, NUMBER_NOTE, Item, TaskState

# problems that are about the protocol version's spelling rather than the object's structure
_DIALECT_MARKERS = ("state", "0.3", "1.0", "role")
# spelling problems the official client reads past, so the object's structure stands: a 0.x object without its
# `kind` discriminator (a2a-sdk's models default it and read the object by its fields); a ProtoJSON enum sent as
# its number (json_format reads it)
_SPELLING_ONLY = ("state", NO_KIND, NUMBER_NOTE)


def shape_problems(item: Item, *, task_expected: bool = False) -> tuple[list[str], list[str]]:
    """(result_shape problems, dialect problems) of one Task/Message result."""
    if item.kind not in ("task", "message"):
        return item.problems or [f"a {item.kind} result, not a Task or Message"], []
    shape = [p for p in item.problems if not any(m in p for m in _SPELLING_ONLY)]
    if task_expected and item.kind == "message":
        shape.append("a Message, not a Task")
    if item.kind == "task" and not item.context_id:
        # a Task carries the contextId the server generated; Message.contextId is optional (1.0 §4.1.4, 0.3 §6.4)
        shape.append("the task has no contextId")
    # TASK_STATE_UNSPECIFIED (1.0) and "unknown" (0.3) are states the version defines ("unknown or indeterminate"):
    # a task in one is unfinished, not malformed; a spelling the version does not define is
    undefined = item.state is TaskState.UNKNOWN and any(p.startswith("unknown task state") for p in item.problems)
    if item.kind == "task" and (item.state is None or undefined):
        shape.append("the task has no status.state the protocol version defines")
    return shape, [p for p in item.problems if any(m in p for m in _DIALECT_MARKERS)]
