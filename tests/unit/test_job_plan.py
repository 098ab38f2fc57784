"""The runner's per-job memo of a scheduled run's Target (Runner._scheduled_target): the same Target the general
path builds, narrowed to the job, and a new one whenever a live input (a rotated secret) or the config changes."""

from __future__ import annotations

from typing import Any

import pytest

from probe import redact
from probe.config import Agent, BindingName, Module, Prober, job_bindings
from probe.history import History
from probe.metrics import Metrics
from probe.runner import Runner, _narrow
from probe.wire.http import HttpClient

URL = "http://127.0.0.1:9/a/x"


def _runner() -> Runner:
    return Runner(HttpClient(), Metrics([0.1, 1.0], []), History(2), 16)


def _general(agent: Agent, module: Module) -> dict[str, Any]:
    """What an on-demand run builds for this agent and module (no memo of the runner's)."""
    only = job_bindings(agent, module)
    return _narrow(agent.target(module.timeout, fresh_connection=module.fresh), module, only).model_dump()


MODULES = [
    Module(prober=Prober.PING, interval=60, timeout=5),
    Module(prober=Prober.INVOKE, interval=60, timeout=7, max_stream_events=5),
    Module(prober=Prober.PUSH, interval=60, timeout=7),
]
SUBSET: dict[str, Any] = {"bindings": [BindingName.GRPC, BindingName.HTTP_JSON]}


@pytest.mark.parametrize(("module", "extra"), [(MODULES[0], {}), (MODULES[1], SUBSET), (MODULES[2], SUBSET)],
                         ids=["ping", "limits", "push-one-binding"])
def test_a_static_agents_job_keeps_one_target_equal_to_the_general_path(module: Module,
                                                                        extra: dict[str, Any]) -> None:
    runner = _runner()
    agent = Agent(name="x", url=URL, headers={"X-Tenant": "t1"}, **extra)
    assert not agent.reads_live_inputs()
    first, only = runner._scheduled_target(agent, module, module.timeout)
    again, _ = runner._scheduled_target(agent, module, module.timeout)
    assert again is first  # the job's memo
    assert only == job_bindings(agent, module)
    assert first.model_dump() == _general(agent, module)
    if module.prober is Prober.PUSH:
        assert first.binding == BindingName.HTTP_JSON.card_name  # the preferred of the agent's subset


def test_a_live_agent_reads_its_secret_every_run_and_a_rotation_builds_a_new_target(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = _runner()
    module = MODULES[1]
    agent = Agent(name="x", url=URL, auth={"bearer_token": {"env": "PLAN_TOKEN"}})
    assert agent.reads_live_inputs()
    monkeypatch.setenv("PLAN_TOKEN", "pl1-8Rw-cccc")
    first, _ = runner._scheduled_target(agent, module, module.timeout)
    assert runner._scheduled_target(agent, module, module.timeout)[0] is first  # unchanged secret: the same
    monkeypatch.setenv("PLAN_TOKEN", "pl2-4Tz-dddd")
    rotated, _ = runner._scheduled_target(agent, module, module.timeout)
    assert rotated is not first
    assert rotated.auth.bearer is not None and rotated.auth.bearer.get_secret_value() == "pl2-4Tz-dddd"
    assert rotated.max_stream_events == 5  # still narrowed to the job
    assert redact.text("got pl2-4Tz-dddd") != "got pl2-4Tz-dddd"  # registered by the run that read it
    monkeypatch.delenv("PLAN_TOKEN")
    with pytest.raises(Exception, match="PLAN_TOKEN"):  # a secret gone is the run's config error, every run
        runner._scheduled_target(agent, module, module.timeout)


def test_a_reloaded_config_gets_new_plans() -> None:
    runner = _runner()
    module = MODULES[0]
    old = Agent(name="x", url=URL)
    first, _ = runner._scheduled_target(old, module, module.timeout)
    new = Agent(name="x", url=URL + "/moved")  # the same name after a reload: another object
    moved, _ = runner._scheduled_target(new, module, module.timeout)
    assert moved is not first and moved.url == URL + "/moved"
    other = Module(prober=Prober.PING, interval=60, timeout=9)
    assert runner._scheduled_target(new, other, other.timeout)[0].timeout == 9


def test_the_plans_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import probe.runner as runner_mod

    monkeypatch.setattr(runner_mod, "MAX_PLANS", 4)
    runner = _runner()
    module = MODULES[0]
    agents = [Agent(name=f"a{i}", url=URL) for i in range(10)]
    for agent in agents:
        runner._scheduled_target(agent, module, module.timeout)
    assert len(runner._plans) == 4
    assert runner._plan(agents[-1], module).target is not None  # the newest kept
