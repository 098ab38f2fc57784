"""The daemon's per-run self-histograms (lateness, slot wait) are folded in batches: a collection shows exactly
what prometheus_client's Histogram.observe would have counted, whenever it comes, from any thread."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry, Histogram

from probe.metrics import BatchedHistogram, Metrics

BUCKETS = (0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10.0)
VALUES = [0.0, 0.0005, 0.001, 0.0010001, 0.005, 0.02, 0.025, 0.1, 0.3, 0.5, 2.5, 9.99, 10.0, 10.5, 1e9]


def _samples(h: Histogram) -> dict[tuple[str, str], float]:
    return {(s.name, s.labels.get("le", "")): s.value for m in h.collect() for s in m.samples}


def test_the_same_buckets_sum_and_count_as_a_plain_histogram() -> None:
    plain = Histogram("p", "p", registry=CollectorRegistry(), buckets=BUCKETS)
    batched = BatchedHistogram("b", "b", registry=CollectorRegistry(), buckets=BUCKETS)
    for rounds in range(3):  # collected between batches: nothing counted twice
        for v in VALUES * (rounds + 1):
            plain.observe(v)
            batched.observe(v)
        want = {(n.replace("p_", "b_", 1), le): v for (n, le), v in _samples(plain).items()}
        got = _samples(batched)
        # the sum is added in another order (a batch's total at once): equal to the float rounding of that order
        assert got.pop(("b_sum", "")) == pytest.approx(want.pop(("b_sum", "")), rel=1e-12)
        assert got == want


def test_observations_are_folded_before_a_scrape_would_see_many_pending() -> None:
    batched = BatchedHistogram("b", "b", registry=CollectorRegistry(), buckets=BUCKETS)
    for _ in range(BatchedHistogram.FOLD_AT):
        batched.observe(0.002)
    assert not batched._pending  # folded on the loop: what waits for a scrape is bounded
    assert batched._buckets[1].get() == BatchedHistogram.FOLD_AT


def test_a_fold_on_another_thread_loses_or_doubles_nothing() -> None:
    batched = BatchedHistogram("b", "b", registry=CollectorRegistry(), buckets=BUCKETS)
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            batched.collect()

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        for _ in range(50_000):
            batched.observe(0.01)
    finally:
        stop.set()
        scraper.join()
    assert _samples(batched)[("b_count", "")] == 50_000


def test_the_daemon_batches_exactly_its_label_less_per_run_histograms() -> None:
    m = Metrics([0.1, 1.0], [])
    assert isinstance(m.histogram("scheduler_lateness_seconds"), BatchedHistogram)
    assert isinstance(m.histogram("slot_wait_seconds"), BatchedHistogram)
    assert not isinstance(m.histogram("event_loop_lag_seconds"), BatchedHistogram)
    m.histogram("scheduler_lateness_seconds").observe(0.03)
    assert m.registry.get_sample_value("a2a_probe_scheduler_lateness_seconds_bucket", {"le": "0.1"}) == 1.0
    assert m.registry.get_sample_value("a2a_probe_scheduler_lateness_seconds_count") == 1.0
