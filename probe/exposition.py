"""Per-agent metric families that keep their own text exposition, so a scrape of a large fleet is a join.

prometheus_client renders every series on every scrape (about 2 µs a sample; 750,000 samples at 50,000 agents).
Here each write (`set`, `inc`, `observe`) re-renders the lines of its own series, in exactly the text
prometheus_client writes for it (label names sorted, `floatToGoString` values, the same escaping), and a scrape
joins what is there.

The text is the state: a gauge's or counter's value is read back from its line (Go-style float text round-trips
exactly), a histogram keeps its bucket counts in a tuple. So a series costs one dict entry and one string, and no
object the garbage collector has to visit (dicts of strings, floats and tuples of them are untracked), which is
what keeps 50,000 agents' worth of series out of every full collection.

A family also yields ordinary prometheus_client `Metric`s, so `registry.collect()`, `get_sample_value` and
`generate_latest` still work; tests/daemon/test_exposition.py compares the text with a prometheus_client
registry given the same writes.

Thread safety: the scrape joins on a worker thread while the event loop writes. `"".join(d.values())` copies
the values in one C call under the GIL, so it sees each series either before or after a write, never half of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from prometheus_client import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString as _go_float

Key = tuple[str, ...]


def floatToGoString(value: float) -> str:
    """prometheus_client's own float formatting, so values match its exposition byte for byte."""
    return str(_go_float(value))  # type: ignore[no-untyped-call]


def escape_label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


_INF = float("inf")


def _go(value: float) -> str:
    """floatToGoString for a float, its finite values without the function's generic checks (a timestamp, a sum:
    the same text, tested against it)."""
    if value != value or value == _INF or value == -_INF:
        return floatToGoString(value)
    s = repr(value)
    dot = s.find(".")
    if value > 0 and dot > 6:  # Go switches to an exponent sooner than Python
        return f"{f'{s[0]}.{s[1:dot]}{s[dot + 1:]}'.rstrip('0.')}e+{dot - 1:02d}"
    return s


def _num(value: float) -> str:
    # floatToGoString, with the common case (small whole numbers, e.g. counts) without a float repr
    if 0 < value < 1_000_000 and value.is_integer():
        return f"{int(value)}.0"
    return _go(value)


def value_text(value: float) -> str:
    """A sample value as the exposition writes it (for `GaugeFamily.set_text`)."""
    return _num(float(value))


def _count(n: int) -> str:
    return f"{n}.0" if 0 <= n < 1_000_000 else floatToGoString(n)


def _parse(text: str) -> float:
    return float(text.replace("+Inf", "inf").replace("-Inf", "-inf"))


class Family:
    """One metric family with labels. `name` is the sample name base (counters: without `_total`)."""

    kind = ""
    __slots__ = ("documentation", "labelnames", "lines", "name")

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.lines: dict[Key, str] = {}  # the rendered sample lines of each series, by label values

    def _key(self, values: tuple[str, ...]) -> Key:
        """The label values of a new series, checked (existing series skip this)."""
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: {len(self.labelnames)} label values expected, got {len(values)}")
        return values if all(type(v) is str for v in values) else tuple(str(v) for v in values)

    def remove(self, *values: str) -> None:
        self.lines.pop(values, None)

    def series(self) -> list[Key]:
        """The label values of every series (a copy: safe to remove while iterating)."""
        return list(self.lines)

    def value(self, key: Key) -> float:
        """A gauge's or counter's value; a histogram's count."""
        line = self.lines.get(key)
        return _parse(line[line.rfind(" ") + 1:-1]) if line else 0.0

    def _labels(self, key: Key, extra: str = "") -> tuple[str, str]:
        """The label pairs sorted by name, split around where `extra` (histograms: `le`) sorts in."""
        pairs = sorted(zip(self.labelnames, key, strict=True))
        before = "".join(f'{k}="{escape_label_value(v)}",' for k, v in pairs if extra and k < extra)
        after = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in pairs if not extra or k > extra)
        return before, after

    # ---- exposition

    def sample_names(self) -> tuple[str, ...]:
        return (self.name,)

    def header(self, openmetrics: bool) -> str:
        """HELP and TYPE as prometheus_client writes them (OpenMetrics names counters without `_total` and also
        escapes quotes in HELP)."""
        doc = self.documentation.replace("\\", r"\\").replace("\n", r"\n")
        name = self.name
        if openmetrics:
            doc = doc.replace('"', r"\"")
        elif self.kind == "counter":
            name += "_total"
        return f"# HELP {name} {doc}\n# TYPE {name} {self.kind}\n"

    def text(self) -> str:
        return "".join(self.lines.values())

    def metric(self) -> Metric:
        """The family as prometheus_client's own `Metric`."""
        m = Metric(self.name, self.documentation, self.kind)
        for key in self.series():
            self._samples(m, key, dict(zip(self.labelnames, key, strict=True)))
        return m

    def _samples(self, m: Metric, key: Key, labels: dict[str, str]) -> None:
        m.add_sample(self.sample_names()[0], labels, self.value(key))


class _Scalar(Family):
    __slots__ = ()

    def _write(self, key: Key, value: float) -> None:
        self._write_text(key, _num(value))

    def _write_text(self, key: Key, text: str) -> None:
        """Write a value already formatted (`_num`): one formatting for several series of the same value."""
        line = self.lines.get(key)
        if line is None:
            key = self._key(key)
            _, labels = self._labels(key)
            head = f"{self.sample_names()[0]}{{{labels}}} " if labels else f"{self.sample_names()[0]} "
        else:
            head = line[:line.rfind(" ") + 1]
        self.lines[key] = f"{head}{text}\n"

    def touch(self, key: Key) -> None:
        """The series at 0 if it does not exist yet (prometheus_client's `labels()` without a write)."""
        if key not in self.lines:
            self._write(key, 0.0)


class GaugeFamily(_Scalar):
    kind = "gauge"
    __slots__ = ()

    def set(self, key: Key, value: float) -> None:
        self._write(key, float(value))

    def set_text(self, key: Key, text: str) -> None:
        """`set` with the value already formatted by `value_text`."""
        self._write_text(key, text)

    def flag(self, key: Key, on: bool) -> None:
        """`set(key, 1 or 0)`, without a write when the series already holds that value (most probes change no
        verdict, reason or info series)."""
        line = self.lines.get(key)
        if line is None or not line.endswith(" 1.0\n" if on else " 0.0\n"):
            self._write_text(key, "1.0" if on else "0.0")

    def inc(self, key: Key, amount: float = 1.0) -> None:
        self._write(key, self.value(key) + amount)

    def labels(self, *values: str) -> GaugeChild:
        self.touch(values)
        return GaugeChild(self, values)


class CounterFamily(_Scalar):
    kind = "counter"
    __slots__ = ()

    def inc(self, key: Key, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        line = self.lines.get(key)
        if line is not None and amount == 1.0 and line.endswith(".0\n"):
            # a count by one (runs, failures): its whole number read and written as an int, one look-up, no float
            # parse or format; "N.0" below a million is what `_num` writes for it, anything else the general way
            cut = line.rfind(" ") + 1
            digits = line[cut:-3]
            if digits.isdigit() and len(digits) < 7:
                n = int(digits) + 1
                if n < 1_000_000:
                    self.lines[key] = f"{line[:cut]}{n}.0\n"
                    return
        self._write(key, self.value(key) + amount)

    def labels(self, *values: str) -> CounterChild:
        self.touch(values)
        return CounterChild(self, values)

    def sample_names(self) -> tuple[str, ...]:
        return (self.name + "_total",)


class HistogramFamily(Family):
    kind = "histogram"
    __slots__ = ("bounds", "le", "state")

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Iterable[float]) -> None:
        super().__init__(name, documentation, labelnames)
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds = tuple(bounds)
        self.le = tuple(floatToGoString(b) for b in bounds)
        # per series: counts per bucket, sum, and its label text before and after `le` (one entry: one look-up a
        # write)
        self.state: dict[Key, tuple[tuple[int, ...], float, str, str]] = {}

    def observe(self, key: Key, amount: float) -> None:
        state = self.state.get(key)
        if state is None:
            key = self._key(key)
            before, after = self._labels(key, "le")
            counts, total = (0,) * len(self.bounds), 0.0
        else:
            counts, total, before, after = state
        i = bisect_left(self.bounds, amount)
        self._render(key, (*counts[:i], counts[i] + 1, *counts[i + 1:]), total + amount, before, after)

    def touch(self, key: Key) -> None:
        if key not in self.state:
            key = self._key(key)
            self._render(key, (0,) * len(self.bounds), 0.0, *self._labels(key, "le"))

    def _render(self, key: Key, counts: tuple[int, ...], total: float, before: str, after: str) -> None:
        self.state[key] = (counts, total, before, after)
        name = self.name
        cumulative = list(accumulate(counts))
        n = cumulative[-1]
        bucket = f"{name}_bucket{{{before}le=\""
        close = f'",{after}}} ' if after else '"} '
        # the lines' pieces in one list and one join (no string made per line)
        parts: list[str] = []
        if n < 1_000_000:
            for le, c in zip(self.le, cumulative, strict=True):
                parts += (bucket, le, close, str(c), ".0\n")
            count = f"{n}.0"
        else:
            for le, c in zip(self.le, cumulative, strict=True):
                parts += (bucket, le, close, _count(c), "\n")
            count = _count(n)
        labels = f"{{{before[:-1]},{after}}}" if before and after else (
            f"{{{before[:-1]}}}" if before else (f"{{{after}}}" if after else ""))
        parts.append(f"{name}_count{labels} {count}\n{name}_sum{labels} {_go(total)}\n")
        self.lines[key] = "".join(parts)

    def remove(self, *values: str) -> None:
        super().remove(*values)
        self.state.pop(values, None)

    def value(self, key: Key) -> float:
        state = self.state.get(key)
        return float(sum(state[0])) if state else 0.0

    def labels(self, *values: str) -> HistogramChild:
        self.touch(values)
        return HistogramChild(self, values)

    def sample_names(self) -> tuple[str, ...]:
        return (self.name + "_bucket", self.name + "_count", self.name + "_sum")

    def _samples(self, m: Metric, key: Key, labels: dict[str, str]) -> None:
        state = self.state.get(key)
        if state is None:
            return
        counts, total = state[0], state[1]
        cumulative = 0
        for le, n in zip(self.le, counts, strict=True):
            cumulative += n
            m.add_sample(self.name + "_bucket", {**labels, "le": le}, float(cumulative))
        m.add_sample(self.name + "_count", labels, float(cumulative))
        m.add_sample(self.name + "_sum", labels, total)


# ---- prometheus_client's child API (`family.labels(...).set(...)`), a handle made per call


class GaugeChild:
    __slots__ = ("family", "key")

    def __init__(self, family: GaugeFamily, key: Key) -> None:
        self.family, self.key = family, key

    def set(self, value: float) -> None:
        self.family.set(self.key, value)

    def inc(self, amount: float = 1.0) -> None:
        self.family.inc(self.key, amount)

    def dec(self, amount: float = 1.0) -> None:
        self.family.inc(self.key, -amount)


class CounterChild:
    __slots__ = ("family", "key")

    def __init__(self, family: CounterFamily, key: Key) -> None:
        self.family, self.key = family, key

    def inc(self, amount: float = 1.0) -> None:
        self.family.inc(self.key, amount)


class HistogramChild:
    __slots__ = ("family", "key")

    def __init__(self, family: HistogramFamily, key: Key) -> None:
        self.family, self.key = family, key

    def observe(self, amount: float) -> None:
        self.family.observe(self.key, amount)


class FamilyCollector(Collector):
    """The families as a prometheus_client collector."""

    def __init__(self, families: Sequence[Family], before: Callable[[], None] | None = None) -> None:
        self.families = tuple(families)
        self.before = before  # called first on every collection (the writes still waiting: `Metrics.flush`)

    def describe(self) -> Iterator[Metric]:
        for f in self.families:
            yield Metric(f.name, f.documentation, f.kind)

    def collect(self) -> Iterator[Metric]:
        if self.before is not None:
            self.before()
        for f in self.families:
            yield f.metric()


SLICE = 2048  # series per piece of a scrape: ~0.2 MB of text, a fraction of a millisecond to join and encode


def pieces(families: Iterable[Family], openmetrics: bool, names: frozenset[str] = frozenset()) -> Iterator[bytes]:
    """The families' text in pieces: HELP and TYPE once per family, then every series' kept lines, `SLICE` series
    a piece, each piece encoded on its own. `names` restricts the output to the families with one of these sample
    names, as prometheus_client's `name[]` filter does.

    A family's series are copied at once (`list(d.values())`, one C call: a consistent copy while the loop writes),
    then joined piece by piece, so the thread that renders holds the GIL for one piece at a time and the event
    loop gets it back between pieces (and, with gzip, while each piece is compressed: zlib lets the GIL go)."""
    for f in families:
        wanted = f.sample_names()
        if names and names.isdisjoint(wanted):
            continue
        yield f.header(openmetrics).encode()
        if names and not names.issuperset(wanted):  # part of a family (e.g. only `_bucket`): filter its lines
            yield "".join(line + "\n" for line in f.text().splitlines() if line.partition("{")[0] in names).encode()
            continue
        lines = list(f.lines.values())
        for i in range(0, len(lines), SLICE):
            yield "".join(lines[i:i + SLICE]).encode()


def render(families: Iterable[Family], openmetrics: bool, names: frozenset[str] = frozenset()) -> bytes:
    """The families' text at once (`pieces` joined)."""
    return b"".join(pieces(families, openmetrics, names))
