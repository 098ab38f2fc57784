"""The demo's own agents (probe/demo): the healthy one passes everything, the broken one is the doubled prefix."""

from __future__ import annotations

from probe.demo.agent import DemoAgent
from probe.demo.run import BROKEN_PREFIX
from probe.engine import run_probe
from probe.reasons import Reason
from probe.results import Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient


async def test_the_demo_agents_give_the_demo_verdicts(client: HttpClient) -> None:
    healthy = DemoAgent("demo-healthy")
    broken = DemoAgent("demo-gateway-broken", card_prefix=BROKEN_PREFIX, advertised_path="/api/a2a" + BROKEN_PREFIX)
    h, b = await healthy.start(), await broken.start()
    try:
        ok = await run_probe(Target(name="h", url=h, expect_text="echo"), client,
                             steps=(StepName.PING, StepName.INVOKE, StepName.STREAM))
        assert ok.success, [(c.id, c.message) for c in ok.failed_checks()]
        bad = await run_probe(Target(name="b", url=b + BROKEN_PREFIX), client)
        assert bad.reason is Reason.INTERFACE_PATH_DOUBLED
        assert bad.check("interface.no_path_repeat").status is Status.FAIL  # type: ignore[union-attr]
    finally:
        await broken.stop()
        await healthy.stop()
