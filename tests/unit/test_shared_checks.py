"""Shared check results (probe.redact.share): built and scrubbed once, handed to every result that records the same
value, never mutated, never carrying one agent's text into another's result, and scrubbed again after a new secret."""

from __future__ import annotations

import uuid
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy

from probe import redact
from probe.checks import card as card_checks
from probe.checks import grading
from probe.checks.catalogue import make_check, shared_check
from probe.reasons import Reason
from probe.results import Exchange, ProbeResult, Status, StepName
from probe.wire import card as cardwire
from probe.wire.card import Card
from probe.wire.http import Response


def _secret() -> str:
    return f"{uuid.uuid4().hex}-tok"  # a value no other test registered (nor a prefix of one)


def _card(url: str, rpc: str) -> Card:
    doc: dict[str, Any] = {
        "name": "agent", "description": "d", "version": "1", "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": [{"url": rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    body = repr(doc).encode()  # the cache keys on the body's digest: a distinct body per distinct doc
    response = Response(url=url, status=200, headers=CIMultiDictProxy(CIMultiDict()), body=body,
                        exchange=Exchange(method="GET", url=url))
    return cardwire.build(url=url, doc=doc, response=response)


def test_equal_checks_are_one_scrubbed_object_and_the_walk_skips_it() -> None:
    secret = _secret()
    redact.register(secret)
    a = shared_check("invoke.transport", Status.FAIL, f"the agent echoed {secret}", step=StepName.PING)
    b = shared_check("invoke.transport", Status.FAIL, f"the agent echoed {secret}", step=StepName.PING)
    assert a is b and redact.is_shared(a)
    assert secret not in a.message and redact.REDACTED in a.message
    other = shared_check("invoke.transport", Status.FAIL, "something else", step=StepName.PING)
    assert other is not a and other.message == "something else"  # only equal values share an object


def test_a_secret_registered_later_is_scrubbed_from_shared_checks_too() -> None:
    secret = _secret()
    old = shared_check("invoke.transport", Status.FAIL, f"echo {secret}", step=StepName.PING)
    assert secret in old.message  # not a secret yet
    redact.register(secret)
    assert not redact.is_shared(old)  # what was clean may hold the new secret
    new = shared_check("invoke.transport", Status.FAIL, f"echo {secret}", step=StepName.PING)
    assert new is not old and secret not in new.message and redact.is_shared(new)
    r = ProbeResult(agent="a", target_url="http://h/")
    r.checks.append(old)  # a result built before the secret was registered
    redact.result(r)
    assert all(secret not in c.message for c in r.checks)


def test_cached_card_checks_never_carry_another_agents_text() -> None:
    a = card_checks.judge_cached(_card("http://a.example/.well-known/agent-card.json", "http://a.example/AAA/rpc"))[0]
    b = card_checks.judge_cached(_card("http://b.example/.well-known/agent-card.json", "http://b.example/BBB/rpc"))[0]
    https_a, https_b = (next(c for c in checks if c.id == "card.https") for checks in (a, b))
    assert "AAA" in https_a.message and "BBB" in https_b.message
    assert all("AAA" not in c.message for c in b) and all("BBB" not in c.message for c in a)
    # the same card again: the same shared objects, scrubbed once
    again = card_checks.judge_cached(_card("http://a.example/.well-known/agent-card.json", "http://a.example/AAA/rpc"))[0]
    assert all(x is y for x, y in zip(a, again, strict=True)) and all(redact.is_shared(c) for c in again)
    # cards that differ only in their URL share the results that are equal (the interned objects)
    c = card_checks.judge_cached(_card("http://c.example/.well-known/agent-card.json", "http://b.example/BBB/rpc"))[0]
    assert [x is y for x, y in zip(b, c, strict=True)] == [True] * len(b)


def test_a_cached_card_check_is_scrubbed_after_its_secret_is_registered() -> None:
    secret = _secret()
    card = _card("http://s.example/.well-known/agent-card.json", f"http://s.example/{secret}/rpc")
    before = card_checks.judge_cached(card)[0]
    assert any(secret in c.message for c in before)
    redact.register(secret)
    after = card_checks.judge_cached(card)[0]
    assert all(secret not in c.message for c in after)
    r = ProbeResult(agent="s", target_url="http://s.example/")
    r.checks += before  # a result that took the results before the secret was known
    redact.result(r)
    assert all(secret not in c.message for c in r.checks)


def test_grading_and_the_verdicts_carrier_copy_a_shared_check() -> None:
    shared = shared_check("card.required_fields", Status.FAIL, "name is missing", step=StepName.VALIDATE)
    state = dict(shared.__dict__)
    r = ProbeResult(agent="a", target_url="http://h/", protocol_version="0.3", reason=Reason.CARD_INVALID)
    r.checks.append(shared)
    grading.finish(r)
    carrier = r.check("card.required_fields")
    assert carrier is not None and carrier.reason is Reason.CARD_INVALID and carrier is not shared
    assert shared.__dict__ == state  # the shared object is untouched


def test_a_fresh_check_is_not_shared_and_is_scrubbed_by_the_walk() -> None:
    secret = _secret()
    redact.register(secret)
    c = make_check("invoke.transport", Status.FAIL, f"echo {secret}", step=StepName.PING)
    assert not redact.is_shared(c)
    r = ProbeResult(agent="a", target_url="http://h/")
    r.checks.append(c)
    redact.result(r)
    assert secret not in c.message


def test_past_the_bound_a_check_is_the_results_own_and_the_shared_ones_stay(monkeypatch: Any) -> None:
    from probe.checks import catalogue

    kept = shared_check("card.public", Status.PASS, "read without credentials", step=StepName.DISCOVER)
    monkeypatch.setattr(catalogue, "MAX_SHARED_CHECKS", len(catalogue._SHARED))  # full from now on
    secret = _secret()
    redact.register(secret)  # every entry un-shared: replaced by a newly scrubbed one on its next use
    again = shared_check("card.public", Status.PASS, "read without credentials", step=StepName.DISCOVER)
    assert again is not kept and redact.is_shared(again)  # a known value is replaced, not refused
    assert shared_check("card.public", Status.PASS, "read without credentials", step=StepName.DISCOVER) is again
    own = shared_check("invoke.transport", Status.FAIL, f"per agent {secret}", step=StepName.PING)
    assert not redact.is_shared(own) and secret in own.message  # a new value past the bound: the result's own
    r = ProbeResult(agent="a", target_url="http://h/")
    r.checks += [again, own]
    redact.result(r)
    assert secret not in own.message  # which the walk scrubs


def test_past_the_interning_bound_cached_card_checks_are_handed_out_as_copies(monkeypatch: Any) -> None:
    monkeypatch.setattr(card_checks, "_MAX_INTERNED", 0)
    secret = _secret()
    card = _card("http://p.example/.well-known/agent-card.json", f"http://p.example/{secret}/rpc")
    first = card_checks.judge_cached(card)[0]
    second = card_checks.judge_cached(card)[0]
    unshared = [(x, y) for x, y in zip(first, second, strict=True) if not redact.is_shared(x)]
    assert unshared and all(x is not y and x == y for x, y in unshared)  # copies: a walk's scrub stays in its result
    assert any(secret in c.message for c in second)
    redact.register(secret)
    r = ProbeResult(agent="p", target_url="http://p.example/")
    r.checks += card_checks.judge_cached(card)[0]
    redact.result(r)
    assert all(secret not in c.message for c in r.checks)
    assert any(secret in c.message for c in second)  # the walk scrubbed the result's copies, nobody else's


def test_a_fork_keeps_the_shared_checks_and_copies_everything_else() -> None:
    from probe.engine import ProbeRun
    from probe.results import StepResult
    from probe.target import Target
    from probe.wire.http import Deadline, HttpClient

    secret = _secret()
    r = ProbeResult(agent="a", target_url="http://h/")
    shared = shared_check("card.public", Status.PASS, "read without credentials", step=StepName.DISCOVER)
    own = make_check("card.size", Status.PASS, f"{secret} bytes", step=StepName.DISCOVER)
    r.checks += [shared, own]
    r.steps.append(StepResult(name=StepName.DISCOVER, detail=f"saw {secret}"))
    base = ProbeRun(Target(name="a", url="http://h/"), HttpClient(), r, Deadline.after(5.0))
    fork = base.fork(Target(name="a", url="http://h/", binding="GRPC"))
    assert fork.r == r and fork.r is not r
    assert fork.r.checks[0] is shared and fork.r.checks[1] is not own and fork.r.steps[0] is not r.steps[0]
    redact.register(secret)
    redact.result(fork.r)  # the fork is scrubbed on its own: the base's objects stay as they are
    assert secret not in fork.r.checks[1].message and secret not in fork.r.steps[0].detail
    assert secret in own.message and secret in r.steps[0].detail


async def test_probes_of_one_agent_add_no_shared_check_after_the_first() -> None:
    """A value that differs every run (a task id) is the result's own check: shared, it would add one entry to the
    bounded table a probe until the table is full, and the fleet's constant checks would stop being shared."""
    from probe.checks import catalogue
    from probe.engine import execute
    from probe.target import Target
    from probe.wire.bindings import Op
    from probe.wire.bindings.fake import FakeBinding, result, stream_of
    from probe.wire.http import HttpClient
    from tests.agents.cards import valid_card

    rpc = "http://agent.test/rpc"
    card = cardwire.build(url="http://agent.test/.well-known/agent-card.json", doc=valid_card(rpc, streaming=True))
    target = Target(name="one", url="http://agent.test", timeout=5.0)

    def task(n: int) -> dict[str, Any]:
        return {"id": f"task-{n}-{uuid.uuid4().hex}", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a1", "parts": [{"text": "echo: hi"}]}]}

    async def probe(n: int) -> ProbeResult:
        script = {Op.SEND: [result({"task": task(n)})], Op.STREAM: [stream_of({"task": task(n)})]}
        run = await execute(target, HttpClient(), steps=(StepName.INVOKE, StepName.STREAM), card=card,
                            bindings={"JSONRPC": lambda _ctx: FakeBinding(script)})
        return run.r

    first = await probe(0)
    assert first.success, (first.reason, first.steps)
    size = len(catalogue._SHARED)
    for n in range(1, 6):
        r = await probe(n)
        assert r.success and any(c.id == "invoke.task_completed" and "task-" in c.message for c in r.checks)
    assert len(catalogue._SHARED) == size  # nothing per run entered the shared table


def test_a_shared_checks_grade_is_kept_per_version_and_binding_and_forgotten_with_the_shared_objects() -> None:
    """grading's memo of shared checks' grades: one table per (version, binding), looked up by the run's binding
    or a check's interface tag; a grade for one binding never answers for another, and a new secret forgets it."""
    shared = shared_check("invoke.camel_case", Status.PASS, "camelCase field names", step=StepName.PING)

    def graded(binding: str, interface: str | None = None) -> Any:
        r = ProbeResult(agent="a", target_url="http://h/", protocol_version="1.0", binding=binding)
        r.checks.append(shared if interface is None else shared.model_copy(update={"interface": interface}))
        grading.grade(r)
        return r.checks[0]

    assert graded("JSONRPC") is shared  # graded as it is, and kept
    assert graded("JSONRPC") is shared  # from the memo
    on_grpc = graded("GRPC")  # §5.5 is not graded on gRPC: another result, not the JSON-RPC one
    assert on_grpc.status is Status.SKIP and on_grpc.message.startswith("not graded")
    assert graded("GRPC") is on_grpc  # that binding's own memo: the same graded object again
    assert graded("JSONRPC") is shared  # and the JSON-RPC memo still answers for JSON-RPC
    tagged = graded("JSONRPC", interface="grpc 1.0")  # a check tagged with its interface: that interface's binding
    assert tagged.status is Status.SKIP
    redact.register(_secret())  # the shared objects forgotten: so are their grades
    fresh = shared_check("invoke.camel_case", Status.PASS, "camelCase field names", step=StepName.PING)
    assert fresh is not shared
    r = ProbeResult(agent="a", target_url="http://h/", protocol_version="1.0", binding="GRPC")
    r.checks.append(fresh)
    grading.grade(r)
    assert r.checks[0] is not on_grpc and r.checks[0].status is Status.SKIP  # graded again, not the old object
    assert list(grading._GRADED) == [("1.0", "grpc")] and grading._graded_size == 1
