"""The history gives back what it was given: every field of the latest result and the last failure, the ring."""

from __future__ import annotations

import json
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

from probe import redact
from probe.history import History, dump, pack, unpack
from probe.reasons import Reason
from probe.results import (
    Category,
    CheckResult,
    ErrorStatus,
    Exchange,
    HttpPhases,
    InterfaceResult,
    ProbeResult,
    PushDelivery,
    Severity,
    Status,
    StepName,
    StepResult,
    TlsInfo,
)

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _rich(i: int, success: bool) -> ProbeResult:
    ex = Exchange(method="POST", url="https://a.example/rpc", status=200, content_type="application/json",
                  phases=HttpPhases(connect=0.001, tls=0.002, processing=0.0031, transfer=1e-05), duration_s=0.0062,
                  tls=TlsInfo(version="TLSv1.3", cipher="TLS_AES_128_GCM_SHA256", earliest_expiry=1.8e9))
    steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.002, http_status=200, exchanges=[ex]),
             StepResult(name=StepName.PING, status=Status.PASS if success else Status.FAIL, duration_s=0.004,
                        http_status=200 if success else 404, a2a_method="GetTask", detail="d \u00e9\u2603 \"q\"")]
    checks = [CheckResult(id=f"c.{k}", category=Category.AGENT_CARD, severity=Severity.MUST, status=Status.PASS,
                          message=f"message {k} of run {i}", step=StepName.DISCOVER, duration_ms=0.25 * k)
              for k in range(5)]
    iface = InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0",
                            interface_url="https://a.example/rpc", success=success, duration_s=0.004,
                            outcomes={"ping": "pass"}, artifacts=[["text"]], artifact_texts=["hi"], steps=steps)
    return ProbeResult(
        agent="a", target_url="https://a.example/", card_url="https://a.example/.well-known/agent-card.json",
        interface_url="https://a.example/rpc", binding="JSONRPC", protocol_version="1.0", card_name="A",
        card_version="1.0.0", tls={"card": ex.tls} if ex.tls else {}, extended_card={"skills": ["x"]},
        started_at=T0 + timedelta(seconds=60 * i), duration_s=0.0061 + i, success=success,
        reason=None if success else Reason.INVOKE_ROUTE_NOT_FOUND, steps=steps, checks=checks, interfaces=[iface],
        push=PushDelivery(deliveries=1, first_s=0.5), error_statuses=[ErrorStatus(error="E", binding="grpc",
                                                                                   status="NOT_FOUND")])


def test_pack_round_trips_every_field() -> None:
    for success in (True, False):
        r = _rich(1, success)
        back = unpack(pack(r))
        assert back == r and back.model_dump_json() == r.model_dump_json()
        assert back.interfaces[0].steps == r.steps


def test_history_keeps_the_latest_the_last_failure_and_the_ring() -> None:
    h = History(3)
    runs = [_rich(i, success) for i, success in enumerate([True, False, True, True, False, True])]
    for r in runs:
        h.add("ping", r)
    latest = h.latest("a", "ping")
    assert latest is not None and latest[0] == "ping" and latest[1] == runs[-1]
    assert h.last_failure("a", "ping") == runs[4]
    assert [(x.success, x.reason, x.started_at, x.duration_s) for x in h.recent("a", "ping")] == [
        (r.success, r.reason, r.started_at, r.duration_s) for r in runs[-3:]]
    assert h.last_success("a", "ping") == runs[5].started_at
    assert h.interface_url("a", "ping") == "https://a.example/rpc"


def test_the_result_json_written_with_kept_check_texts_is_pydantics() -> None:
    from probe import history

    for r in (_rich(2, True), _rich(3, False)):
        for c in r.checks[:3]:
            redact.share(c)  # as the engine hands out its shared checks
        two = r.model_copy(update={"interfaces": [*r.interfaces, r.interfaces[0].model_copy(
            update={"binding": "grpc", "steps": r.steps[:1]})]})
        for x in (r, two, r):  # the second pass of `r` takes the kept texts
            exclude = {"interfaces": {0: {"steps"}}} if len(x.interfaces) == 1 else None
            assert json.loads(history.dump(x)) == json.loads(x.model_dump_json(exclude=exclude))
            assert unpack(pack(x)) == x


def test_a_secret_registered_later_never_reaches_the_history_through_a_kept_check_text() -> None:
    secret = "hx-secret-registered-later-42"
    c = redact.share(CheckResult(id="card.x", category=Category.AGENT_CARD, severity=Severity.MUST,
                                 status=Status.PASS, message=f"the card says {secret}"))
    r = ProbeResult(agent="a", target_url="http://x/", checks=[c])
    assert secret in unpack(pack(r)).checks[0].message  # not a secret yet: kept as the agent said it
    redact.register(secret)
    redact.result(r)  # the engine scrubs what it hands out again (in place: no longer shared)
    h = History(2)
    h.add("ping", r)
    latest = h.latest("a", "ping")
    assert latest is not None and secret not in latest[1].model_dump_json()
    assert redact.REDACTED in latest[1].checks[0].message


def test_a_kept_record_holds_its_own_size_not_the_compression_bound() -> None:
    """A compressed record is kept per job (50,000 jobs at scale): it must hold its length in memory, not the
    compressor's working allocation (zstandard's result held the bound of the input: about 4x a ping's record)."""
    result = _rich(0, False)
    pack(result)  # warm: the kept check texts and the compressor's context are not the records
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        blobs = [pack(result) for _ in range(200)]
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    held = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(blobs)
    assert held < len(blobs[0]) + 256, (held, len(blobs[0]), len(dump(result)))


def test_a_jobs_unchanged_checks_are_compressed_once_and_changed_ones_again() -> None:
    from probe import history

    h = History(4)
    runs = [_rich(1, True), _rich(1, False), _rich(1, True)]  # the same checks (same text), other results
    for r in runs[:2]:
        h.add("ping", r)
    h.flush()  # the parts are written in batches (history.BATCH): now
    job = h._jobs["a"]["ping"]
    kept = job.latest[1]
    assert job.last_failure is not None and job.last_failure[1] is kept  # the failure shares the checks part
    h.add("ping", runs[2])
    h.flush()
    assert job.latest[1] is kept and h.latest("a", "ping") == ("ping", runs[2])
    assert h.last_failure("a", "ping") == runs[1]
    # a check whose text changes but keeps its length: another hash, compressed again, read back as it is now
    changed = _rich(1, True)
    changed.checks[0] = changed.checks[0].model_copy(update={"message": changed.checks[0].message.upper()})
    assert len(history._checks_json(changed.checks)) == len(history._checks_json(runs[0].checks))
    h.add("ping", changed)
    h.flush()
    assert job.latest[1] is not kept and h.latest("a", "ping") == ("ping", changed)
    assert h.last_failure("a", "ping") == runs[1]  # the failure keeps the checks part it was recorded with
    fewer = _rich(1, True)
    fewer.checks.pop()
    h.add("ping", fewer)
    assert h.latest("a", "ping") == ("ping", fewer)


def test_kept_records_hold_their_own_size_per_job() -> None:
    """Per job, the history holds its two compressed parts (shared by the latest and the last failure when the
    checks are the same), not the compressor's bound: 200 jobs, each with a passing and a failing run."""
    h = History(2)
    warm = _rich(0, False)
    h.add("warm", warm)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(200):
            for success in (False, True):
                r = _rich(0, success)
                r.agent = f"agent-{i}"
                h.add("ping", r)
        h.flush()  # the last batch's parts written, its results let go
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    job = h._jobs["agent-0"]["ping"]
    assert job.failure_checks is job.latest_checks
    parts = len(job.latest_rest) + len(job.latest_checks) + len(job.failure_rest)
    held = sum(s.size_diff for s in after.compare_to(before, "filename")) / 200
    # besides its parts a job holds its ring arrays, its slots object, two dict entries, the run's interface URL
    # and the parts' bytes headers: ~1.05 KiB once the dictionaries are trained (the parts are then ~0.4-1 KB),
    # ~0.1 KiB before; a job holding its whole result would hold several times the result's JSON
    assert held < parts + 1280, (held, parts, len(dump(warm)))


def test_parts_read_back_the_same_before_and_after_the_dictionaries_are_trained(monkeypatch: Any) -> None:
    """Each kind of part is compressed with a dictionary trained on the process's first parts: records written
    before the training (no dictionary) and after it (the frame names its dictionary) all read back as written,
    and the same part is smaller with the dictionary."""
    import zstandard

    from probe import history

    rest, checks = history._Codec(8 * 1024), history._Codec(16 * 1024)
    monkeypatch.setattr(history, "_REST", rest)
    monkeypatch.setattr(history, "_CHECKS", checks)
    h = History(2)
    runs = []
    for i in range(2 * history._SAMPLES):
        r = _rich(i, i % 3 != 0)
        r.agent = f"agent-{i}"
        r.checks = [c.model_copy(update={"message": f"{c.message} of agent {i}"}) for c in r.checks]
        h.add("ping", r)
        runs.append(r)
    assert rest.samples is None and checks.samples is None  # trained, samples dropped
    assert rest.compressor is not history._COMPRESSOR and checks.compressor is not history._COMPRESSOR
    first, last = h._jobs["agent-0"]["ping"], h._jobs[runs[-1].agent]["ping"]
    assert zstandard.get_frame_parameters(first.latest_rest).dict_id == 0
    assert zstandard.get_frame_parameters(last.latest_rest).dict_id in history._DICTS
    assert zstandard.get_frame_parameters(last.latest_checks).dict_id in history._DICTS
    for r in runs:
        assert h.latest(r.agent, "ping") == ("ping", r)
        if not r.success:
            assert h.last_failure(r.agent, "ping") == r
    again = runs[1].model_copy(update={"agent": "again"})
    h.add("ping", again)
    assert len(h._jobs["again"]["ping"].latest_rest) < len(h._jobs[runs[1].agent]["ping"].latest_rest)


def test_a_dictionary_that_cannot_be_trained_leaves_plain_compression(monkeypatch: Any) -> None:
    import zstandard

    from probe import history

    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise zstandard.ZstdError("cannot train")

    monkeypatch.setattr(zstandard, "train_dictionary", refuse)
    codec = history._Codec(4096)
    blobs = [codec.compress(b'{"n":%d}' % i) for i in range(history._SAMPLES + 3)]
    assert codec.samples is None and codec.compressor is history._COMPRESSOR
    assert [history._decompress(b) for b in blobs] == [b'{"n":%d}' % i for i in range(history._SAMPLES + 3)]


def test_parts_written_in_batches_are_what_every_read_sees_at_once() -> None:
    """The kept parts wait for `BATCH` results (written one after another, cheaper than one at a time); the ring,
    last success and URL are written at once, and any read of a part writes what waits first."""
    from probe import history

    h = History(4)
    runs = {f"agent-{i}": [_rich(k, k != 1) for k in range(3)] for i in range(3)}
    for name, rs in runs.items():
        for r in rs:
            r.agent = name
            h.add("ping", r)
    assert len(h._waiting) == 9 < history.BATCH
    assert h._jobs["agent-0"]["ping"].latest is None  # not written yet ...
    assert [run.success for run in h.recent("agent-0", "ping")] == [True, False, True]  # ... but the ring is
    assert h.last_success("agent-0", "ping") == runs["agent-0"][2].started_at
    assert h.interface_url("agent-0", "ping") == "https://a.example/rpc"
    assert h.last_failure("agent-1", "ping") == runs["agent-1"][1]  # a read writes every waiting part, in order
    assert not h._waiting
    for name, rs in runs.items():
        assert h.latest(name, "ping") == ("ping", rs[2]) and h.last_failure(name, "ping") == rs[1]
    # a full batch is written without a read, and never more than BATCH results wait
    for k in range(history.BATCH):
        r = _rich(k, True)
        r.agent = f"b-{k}"
        h.add("ping", r)
        assert len(h._waiting) == (k + 1) % history.BATCH
    assert all(h._jobs[f"b-{k}"]["ping"].latest is not None for k in range(history.BATCH))
    assert h.latest("b-3", "ping") is not None and h.latest("b-3", "ping")[1].started_at == _rich(3, True).started_at
