"""Push through the one A2A client, on the fake binding: the request shapes per version, and the round trip."""

from __future__ import annotations

from typing import Any

import pytest

from probe.inbox import Delivery, PushInbox
from probe.reasons import Reason
from probe.suite.push import round_trip
from probe.wire.bindings import Answer, Op
from probe.wire.bindings.fake import FakeBinding, error, result
from probe.wire.client import A2AClient
from probe.wire.dialects import V03, V1, Dialect
from probe.wire.http import Deadline

HOOK = ("https://probe.example.com/-/push/r", "tok", "cred")


def client(script: dict[Op, list[Any]], dialect: Dialect = V1) -> tuple[A2AClient, FakeBinding]:
    binding = FakeBinding(script, dialect=dialect)
    return A2AClient(binding, Deadline.after(5)), binding


async def test_config_operation_shapes_per_version() -> None:
    ok = [result({})]
    for dialect, create, get, lst in (
        (V1, {"taskId": "t", "url": HOOK[0], "token": "tok", "authentication": {"scheme": "Bearer",
                                                                                "credentials": "cred"}},
         {"taskId": "t", "id": "c"}, {"taskId": "t"}),
        (V03, {"taskId": "t", "pushNotificationConfig": {"url": HOOK[0], "token": "tok", "authentication": {
            "schemes": ["Bearer"], "credentials": "cred"}}}, {"id": "t", "pushNotificationConfigId": "c"},
         {"id": "t"}),
    ):
        c, b = client({op: ok for op in (Op.PUSH_SET, Op.PUSH_GET, Op.PUSH_LIST, Op.PUSH_DELETE)}, dialect)
        await c.push_set("t", *HOOK)
        await c.push_get("t", "c")
        await c.push_list("t")
        await c.push_delete("t", "c")
        assert [(op, params) for op, params, _ in b.calls] == [
            (Op.PUSH_SET, create), (Op.PUSH_GET, get), (Op.PUSH_LIST, lst), (Op.PUSH_DELETE, get)]


@pytest.mark.parametrize(("dialect", "expected"), [
    (V1, {"returnImmediately": True, "taskPushNotificationConfig": {
        "url": HOOK[0], "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "cred"}}}),
    (V03, {"blocking": False, "pushNotificationConfig": {
        "url": HOOK[0], "token": "tok", "authentication": {"schemes": ["Bearer"], "credentials": "cred"}}}),
])
def test_send_with_a_webhook(dialect: Dialect, expected: dict[str, Any]) -> None:
    c, _ = client({}, dialect)
    assert c.send_params({"messageId": "m"}, immediate=True, push=HOOK)["configuration"] == expected


async def test_round_trip_registers_only_its_own_receiver_and_releases_it() -> None:
    inbox = PushInbox("https://probe.example.com")
    task = {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}
    c, b = client({Op.SEND: [result(task)]})

    async def send(params: dict[str, Any]) -> Answer:
        answer = await c.call(Op.SEND, params)
        # the agent delivers while the probe waits: straight into the registration the send named
        url = params["configuration"]["taskPushNotificationConfig"]["url"]
        reg = inbox._regs[url.rsplit("/", 1)[-1]]
        reg.add(Delivery(reg.created, True, None, "application/a2a+json", body={"statusUpdate": {
            "taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}))
        return answer

    trip = await round_trip(c, send, inbox, "hi", Deadline.after(2))
    assert trip.verdict is not None and trip.verdict.reason is None and trip.task_id == "t1"
    [(_, params, _)] = b.calls
    assert params["configuration"]["taskPushNotificationConfig"]["url"].startswith(
        "https://probe.example.com/-/push/")
    assert len(inbox) == 0


async def test_round_trip_names_push_not_supported() -> None:
    inbox = PushInbox("https://probe.example.com")
    c, _ = client({Op.SEND: [error("PushNotificationNotSupportedError", "nope")]})
    trip = await round_trip(c, lambda p: c.call(Op.SEND, p), inbox, "hi", Deadline.after(1))
    assert trip.failure is not None and trip.failure[0] is Reason.PUSH_NOT_SUPPORTED
