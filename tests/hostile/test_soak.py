"""The short soak (the long one is `python bench/soak.py --duration 1800`, figures in docs/reliability.md): the real
daemon against healthy, failing and hostile agents (a flood among them) on an accelerated schedule."""

from __future__ import annotations

from pathlib import Path

from bench.soak import soak

DURATION = 25.0
INTERVAL = 0.5


async def test_short_soak(tmp_path: Path) -> None:
    r = await soak(DURATION, INTERVAL, sample_every=0.5, workdir=tmp_path)
    assert r.cycles > 100, r.cycles
    assert r.mismatches == [], r.mismatches  # runs = successes + failures, per agent and module
    # healthy agents keep passing, on schedule, while the neighbours flood, reset, trickle and echo
    assert r.healthy_failures == 0, {k: v for k, v in r.verdicts.items() if k.startswith("healthy")}
    for key, v in r.verdicts.items():
        if key.startswith("healthy") and key.endswith("fast-ping"):
            assert v["runs"] >= 0.6 * DURATION / INTERVAL, (key, v)
    # no growth in descriptors, sockets or tasks; memory within a bound (the long soak shows it flat)
    # descriptors follow the connections in flight; a leak over hundreds of cycles shows as far more
    assert r.fds_growth <= 6 and r.sockets_growth <= 6, (r.fds_growth, r.sockets_growth)
    assert r.tasks_growth <= 16, r.tasks_growth  # tasks follow the probes in flight (14 jobs), never pile up
    assert r.rss_growth_mib < 25, r.rss_growth_mib
