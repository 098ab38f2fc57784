"""Recent results per agent and module, bounded and compact.

Per job the daemon keeps: a ring of the last `limit` runs as packed numbers (start time, duration,
outcome code: about 17 bytes a run, in arrays the garbage collector never scans), the latest result
and the last failure as zstd-compressed JSON (about 0.3 KB for a ping once the dictionaries are trained, 2.5 KB
before; about 32 KB as live objects), and the latest interface URL. /report unpacks the one result it serves.
Measured figures are in docs/daemon.md.

A kept result is two compressed parts: the result without its checks, and the checks' JSON (8 of a ping's 10 KB).
A job's checks are most often the same run after run, so when their JSON has the hash of the job's previous
checks, the previous compressed part is kept again (the same bytes object, also shared by the last failure)
instead of compressing 8 KB again. `hash` is keyed per process (SipHash): two different texts colliding is a
2**-64 chance per run, and it could only show a run's report with its previous run's checks (the verdict, reason
and steps are in the other part).

zstd at level 1, not zlib: the same size (2,429 against 2,468 bytes for a ping result) in a third of the time
(25-35 µs against 97-99 µs for 9.4 KB of JSON; bench/bench_record.py measures the whole record). Each kind of part
is compressed with a zstd dictionary trained on the process's first parts (`_Codec`): a ping's parts in about a
third of the time and a fifth of the bytes. The compressors are reused; only the event loop records, and reads
decompress with a fresh context.
"""

from __future__ import annotations

from array import array
from datetime import UTC, datetime
from typing import Any, NamedTuple

import zstandard

from probe import redact
from probe.reasons import Reason
from probe.results import CheckResult, ProbeResult

Key = tuple[str, str]  # (agent, module)
_REASONS = tuple(Reason)
_CODE = {r: i + 1 for i, r in enumerate(_REASONS)}  # 0 = passed


class Run(NamedTuple):
    """One past run, as the fleet view needs it."""

    started_at: datetime
    success: bool
    reason: Reason | None
    duration_s: float


_NO_CHECKS: dict[str, Any] = {"checks": True}
_NO_CHECKS_ONE_INTERFACE: dict[str, Any] = {"checks": True, "interfaces": {0: {"steps"}}}
_COMPRESSOR = zstandard.ZstdCompressor(level=1)
_CHECK_JSON = CheckResult.__pydantic_serializer__.to_json

# The checks are most of a result's JSON (30 of a ping's 9.4 KB are checks: 8.6 KB), and most check objects are
# shared: the engine builds each distinct check once, never mutates it, and hands it to every result that records
# it (probe.redact.share). Their JSON is written once too: by object, holding the object (`_pinned`) so its id stays
# its own while its text is kept (so a kept id is that object: looked up in C, `map(_fragments.get, ...)`, with no
# identity test a check); bounded, starting over when full, and whenever a secret is registered (the engine then
# scrubs its shared checks again, in place: a text kept from before could hold the new secret).
_MAX_FRAGMENTS = 65_536
_fragments: dict[int, bytes] = {}  # id of a pinned check -> its JSON
_pinned: dict[int, CheckResult] = {}  # the same ids -> the checks themselves, alive while their text is kept
_fragments_secrets: list[tuple[str, ...]] = [()]  # the secrets registered when `_fragments` was filled


def _check_json(c: CheckResult) -> bytes:
    text = _CHECK_JSON(c)
    if redact.is_shared(c):  # never mutated while shared: its text stays true
        if len(_fragments) >= _MAX_FRAGMENTS:
            _fragments.clear()
            _pinned.clear()
        _pinned[id(c)] = c
        _fragments[id(c)] = text
    return text


def _checks_json(checks: list[CheckResult]) -> bytes:
    secrets = redact.registered()
    if secrets != _fragments_secrets[0]:
        _fragments.clear()
        _pinned.clear()
        _fragments_secrets[0] = secrets
    texts = list(map(_fragments.get, map(id, checks)))
    if None in texts:
        for i, text in enumerate(texts):
            if text is None:
                texts[i] = _check_json(checks[i])
    return b",".join(texts)  # type: ignore[arg-type]  # every None replaced above


def dump(result: ProbeResult) -> bytes:
    """The result's JSON, with the checks' text written once per shared check object (see `_fragments`).

    One interface (most agents): its entry's steps are the result's own, stored once (half the JSON to write)."""
    return b"".join((_rest_json(result)[:-1], b',"checks":[', _checks_json(result.checks), b"]}"))


def _rest_json(result: ProbeResult) -> bytes:
    """The result's JSON without its checks; one interface: its entry's steps left out (they are the result's)."""
    exclude = _NO_CHECKS_ONE_INTERFACE if len(result.interfaces) == 1 else _NO_CHECKS
    return result.__pydantic_serializer__.to_json(result, exclude=exclude)


def _compress(data: bytes, compressor: zstandard.ZstdCompressor = _COMPRESSOR) -> bytes:
    # copied to its own size: zstandard's result keeps the allocation of the compression bound (the JSON's size,
    # ~9.4 KB for a ping against ~2.4 KB compressed), which a kept record would hold for as long as it is kept
    return bytes(memoryview(compressor.compress(data)))


# A kept part is a few KB of JSON whose keys, check ids and messages recur in every other job's: zstd with a
# dictionary trained on such parts writes a ping's two parts in a quarter of the time and a tenth of the bytes
# (bench/bench_record.py, docs/performance.md). Each kind of part gets its own dictionary, trained once per process
# on its first `_SAMPLES` parts (any parts will do: a dictionary only makes compression cheaper and smaller, it never
# changes what a record decompresses to). A frame names its dictionary (zstd's dictionary id), so records written
# before the training, or with either dictionary, all read back; training failures (odd samples) leave the plain
# compressor in place for good.
_SAMPLES = 64
_SAMPLE_MAX = 32 * 1024  # larger parts (a suite's) are not samples: training time grows with the samples' bytes
_DICTS: dict[int, zstandard.ZstdCompressionDict] = {}  # dictionary id -> dictionary, for reading


class _Codec:
    """The compressor of one kind of part, with the dictionary trained on its first parts once there are enough."""

    __slots__ = ("compressor", "dict_size", "samples")

    def __init__(self, dict_size: int) -> None:
        self.compressor = _COMPRESSOR
        self.dict_size = dict_size
        self.samples: list[bytes | bytearray | memoryview] | None = []  # None: trained, or given up

    def compress(self, data: bytes) -> bytes:
        samples = self.samples
        if samples is not None and len(data) <= _SAMPLE_MAX:
            samples.append(data)
            if len(samples) >= _SAMPLES:
                self.train()
        return _compress(data, self.compressor)

    def train(self) -> None:
        samples, self.samples = self.samples, None
        try:
            trained = zstandard.train_dictionary(self.dict_size, samples or [])
        except zstandard.ZstdError:
            return  # too few or too uniform samples: plain compression, as before
        key = trained.dict_id()
        if not key or key in _DICTS:  # a frame names its dictionary by id: never two under one
            return
        trained.precompute_compress(level=1)
        _DICTS[key] = trained
        self.compressor = zstandard.ZstdCompressor(level=1, dict_data=trained)


_REST = _Codec(8 * 1024)  # the result without its checks (~2.3 KB of JSON for a ping)
_CHECKS = _Codec(16 * 1024)  # the checks (~8 KB for a ping)


def _decompress(blob: bytes) -> bytes:
    key = zstandard.get_frame_parameters(blob).dict_id
    if not key:
        return zstandard.decompress(blob)
    return zstandard.ZstdDecompressor(dict_data=_DICTS[key]).decompress(blob)


def pack(result: ProbeResult) -> bytes:
    """The whole result as one compressed blob (what `unpack` reads)."""
    return _compress(dump(result))


def _result(data: bytes) -> ProbeResult:
    result = ProbeResult.model_validate_json(data)
    if len(result.interfaces) == 1 and not result.interfaces[0].steps:
        result.interfaces[0].steps = result.steps
    return result


def unpack(blob: bytes) -> ProbeResult:
    return _result(_decompress(blob))


Record = tuple[bytes, bytes]  # a kept result: (its JSON without checks, its checks' JSON), each compressed


def unpack_record(record: Record) -> ProbeResult:
    rest, checks = _decompress(record[0]), _decompress(record[1])
    return _result(b"".join((rest[:-1], b',"checks":[', checks, b"]}")))


class _Job:
    __slots__ = (
        "checks_hash",
        "code",
        "count",
        "duration",
        "failure_checks",
        "failure_rest",
        "interface_url",
        "last_success",
        "latest_checks",
        "latest_rest",
        "pos",
        "started",
    )

    def __init__(self, limit: int) -> None:
        self.started = array("d", bytes(8 * limit))
        self.duration = array("d", bytes(8 * limit))
        self.code = bytearray(limit)
        self.pos = 0
        self.count = 0
        # the kept records' two parts as slots, not tuples (50,000 jobs); "" until there is one
        self.latest_rest = self.latest_checks = self.failure_rest = self.failure_checks = b""
        self.last_success = 0.0
        self.interface_url: str | None = None
        self.checks_hash = 0  # the hash of the latest record's checks JSON (see the module's doc)

    @property
    def latest(self) -> Record | None:
        return (self.latest_rest, self.latest_checks) if self.latest_rest else None

    @property
    def last_failure(self) -> Record | None:
        return (self.failure_rest, self.failure_checks) if self.failure_rest else None

    def add(self, r: ProbeResult) -> None:
        """The run in the ring, its last success and URL (at once); its kept parts are `keep`'s (see `History`)."""
        limit = len(self.code)
        ts = r.started_at.timestamp()
        self.started[self.pos], self.duration[self.pos] = ts, r.duration_s
        self.code[self.pos] = 0 if r.success else _CODE.get(r.reason or Reason.PROBE_ERROR, 0)
        self.pos = (self.pos + 1) % limit
        self.count = min(limit, self.count + 1)
        if r.interface_url != self.interface_url:  # equal: the kept string stays (the URL caches hold it too)
            self.interface_url = r.interface_url
        if r.success:
            self.last_success = ts

    def keep(self, r: ProbeResult) -> None:
        """The run's result as the latest record (and the last failure when it failed): its two compressed parts."""
        checks = _checks_json(r.checks)
        digest = hash(checks)
        if digest != self.checks_hash or not self.latest_checks:  # the same JSON: the latest part kept again
            self.latest_checks, self.checks_hash = _CHECKS.compress(checks), digest
        self.latest_rest = _REST.compress(_rest_json(r))
        if not r.success:
            self.failure_rest, self.failure_checks = self.latest_rest, self.latest_checks

    def runs(self) -> list[Run]:
        limit = len(self.code)
        out = []
        for k in range(self.count):
            i = (self.pos - self.count + k) % limit
            code = self.code[i]
            out.append(Run(datetime.fromtimestamp(self.started[i], UTC), code == 0,
                           _REASONS[code - 1] if code else None, self.duration[i]))
        return out


# A result's kept parts (pydantic's JSON of it, two zstd frames) cost about half as much written one after another
# as written each between two probes, when the serializer's and the compressors' state (a trained dictionary's
# tables are some hundred KB) has left the CPU's caches (docs/performance.md): `History.add` puts the run in its
# ring at once and keeps the result until `BATCH` are waiting, then writes all their parts in one go, in order. Any
# read of a kept part writes what waits first, so no reader ever sees the difference; at most `BATCH` results are
# held (about what the probes in flight hold).
BATCH = 32


class History:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._jobs: dict[str, dict[str, _Job]] = {}  # agent -> module -> job
        self._waiting: list[tuple[_Job, ProbeResult]] = []  # results whose parts are not written yet, in order

    def add(self, module: str, result: ProbeResult) -> None:
        job = self._jobs.setdefault(result.agent, {}).get(module)
        if job is None:
            job = self._jobs[result.agent][module] = _Job(self.limit)
        job.add(result)
        waiting = self._waiting
        waiting.append((job, result))
        if len(waiting) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the kept parts of every result waiting (see `BATCH`)."""
        waiting, self._waiting = self._waiting, []
        for job, result in waiting:
            job.keep(result)

    def latest(self, agent: str, module: str | None = None) -> tuple[str, ProbeResult] | None:
        """The newest result of an agent (for one module, or across its modules)."""
        if self._waiting:
            self.flush()
        best: tuple[str, float, Record] | None = None
        for m, job in self._jobs.get(agent, {}).items():
            if (module is None or m == module) and job.count:
                ts = job.started[(job.pos - 1) % len(job.code)]
                if best is None or ts > best[1]:
                    best = (m, ts, (job.latest_rest, job.latest_checks))
        return (best[0], unpack_record(best[2])) if best else None

    def recent(self, agent: str, module: str) -> list[Run]:
        job = self._jobs.get(agent, {}).get(module)
        return job.runs() if job is not None else []

    def last_success(self, agent: str, module: str) -> datetime | None:
        job = self._jobs.get(agent, {}).get(module)
        return datetime.fromtimestamp(job.last_success, UTC) if job is not None and job.last_success else None

    def interface_url(self, agent: str, module: str) -> str | None:
        job = self._jobs.get(agent, {}).get(module)
        return job.interface_url if job is not None else None

    def last_failure(self, agent: str, module: str) -> ProbeResult | None:
        if self._waiting:
            self.flush()
        job = self._jobs.get(agent, {}).get(module)
        record = job.last_failure if job is not None else None
        return unpack_record(record) if record is not None else None

    def keys(self) -> list[Key]:
        return [(a, m) for a, jobs in self._jobs.items() for m in jobs]

    def forget(self, agent: str, module: str | None = None) -> None:
        jobs = self._jobs.get(agent)
        if jobs is None:
            return
        if module is None:
            jobs.clear()
        else:
            jobs.pop(module, None)
        if not jobs:
            self._jobs.pop(agent, None)
