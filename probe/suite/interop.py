"""Interop checks for two agents: a common interface, both callable, no cross-talk, optional delegation."""

from __future__ import annotations

import asyncio
import uuid

from probe.engine import ProbeRun, execute
from probe.results import Status, StepName
from probe.suite.context import Skip, Suite
from probe.target import Target
from probe.wire.card import dialect_of
from probe.wire.dialects import TaskState, state_name

_CONCURRENT = 3  # tasks per agent sent at once


async def interop(s: Suite) -> None:
    peer_target = s.opts.peer
    if peer_target is None:
        raise Skip("no second agent given (--peer URL)")
    peer = await execute(peer_target, s.run.client, steps=(StepName.INVOKE,))
    if peer.card is None:
        s.record("interop.common_interface", Status.FAIL, f"the peer's card: {peer.r.reason}")
        return
    ours = {(i.binding.upper(), d.version) for i in s.card.interfaces if (d := dialect_of(i))}
    theirs = {(i.binding.upper(), d.version) for i in peer.card.interfaces if (d := dialect_of(i))}
    common = sorted(ours & theirs)
    matrix = f"this agent {sorted(ours)} x peer {sorted(theirs)}"
    s.record("interop.common_interface", Status.PASS if common else Status.FAIL,
             f"common: {common}; {matrix}" if common else f"nothing in common: {matrix}")
    if common:
        await _parse_each_other(s, peer_target, common)
    a_ok = s.result.step(StepName.INVOKE)
    b_ok = peer.r.step(StepName.INVOKE)
    both = a_ok is not None and a_ok.status is Status.PASS and b_ok is not None and b_ok.status is Status.PASS
    s.record("interop.both_callable", Status.PASS if both else Status.FAIL,
             "both interfaces completed a task" if both else
             f"this agent: {a_ok.status if a_ok else 'not run'}, peer: {peer.r.reason or 'ok'}")
    if not both or peer.binding is None:
        return
    await _no_cross_talk(s, peer)
    await _delegation(s)


async def _parse_each_other(s: Suite, peer_target: Target, common: list[tuple[str, str]]) -> None:
    """Each side's answers on the interface both speak are valid for the other's client (the official
    definitions of that version), not only callable: a basic send on that interface of each, strictly judged."""
    binding, version = min(common, key=lambda bv: (bv[1] != "1.0", bv[0] != "JSONRPC"))
    problems: list[str] = []
    judged = 0
    for who, target in (("this agent", s.run.t), ("the peer", peer_target)):
        if binding not in ("JSONRPC", "HTTP+JSON", "GRPC") or version not in ("1.0", "0.3"):
            break
        pinned = target.model_copy(update={"binding": binding, "a2a_version": version})
        run = await execute(pinned, s.run.client, steps=(StepName.INVOKE,))
        verdict = run.r.check("invoke.schema")
        if verdict is None:
            problems.append(f"{who} gave no answer to judge on {binding} {version}: {run.r.reason or 'no result'}")
        elif verdict.status is Status.FAIL:
            problems.append(f"{who}'s answers cannot be parsed by a {version} client: {verdict.message[:240]}")
        else:
            judged += 1
    ok = not problems and judged == 2
    s.record("interop.parse_each_other", Status.PASS if ok else Status.FAIL,
             "; ".join(problems) or f"both answer {binding} {version} in the shape the other's client parses")


async def _no_cross_talk(s: Suite, peer: ProbeRun) -> None:
    other = Suite(peer, s.opts, s.deadline)
    nonces = [[uuid.uuid4().hex[:12] for _ in range(_CONCURRENT)] for _ in (0, 1)]
    sends = [suite.send(f"a2a-probe interop {n}") for suite, ns in zip((s, other), nonces, strict=True) for n in ns]
    answers = await asyncio.gather(*sends, return_exceptions=True)
    all_nonces = {n for ns in nonces for n in ns}
    problems: list[str] = []
    ids: set[str] = set()
    flat = [n for ns in nonces for n in ns]
    for nonce, answer in zip(flat, answers, strict=True):
        if isinstance(answer, BaseException):
            problems.append(f"{nonce}: {answer}")
            continue
        _, item = answer
        if item is None:
            problems.append(f"{nonce}: the agent answered an error")
            continue
        if item.task_id:
            if item.task_id in ids:
                problems.append(f"task id {item.task_id} was given to two different messages")
            ids.add(item.task_id)
        foreign = {n for n in all_nonces - {nonce} if any(n in t for t in item.texts)}
        if foreign:
            problems.append(f"the answer to {nonce} mentions other messages: {sorted(foreign)}")
        if item.kind == "task" and item.state not in (TaskState.COMPLETED, None):
            problems.append(f"{nonce}: task ended {state_name(item.state)}")
    s.record("interop.no_cross_talk", Status.FAIL if problems else Status.PASS,
             "; ".join(problems[:5]) or f"{len(flat)} concurrent tasks, all separate")


async def _delegation(s: Suite) -> None:
    prompt, expect = s.opts.delegation_prompt, s.opts.delegation_expect
    if not prompt or not expect:
        s.record("interop.delegation", Status.SKIP, "no delegation prompt and expected text given")
        return
    _, item = await s.send(prompt)
    texts = item.texts if item else []
    ok = any(expect in t for t in texts)
    s.record("interop.delegation", Status.PASS if ok else Status.FAIL,
             f"found {expect!r}" if ok else f"expected {expect!r} from the peer, got: {' | '.join(texts)[:200]}")


CHECKS = (interop,)
IDS = {interop: ("interop.common_interface", "interop.parse_each_other", "interop.both_callable",
                 "interop.no_cross_talk", "interop.delegation")}
