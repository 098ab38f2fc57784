"""Per-agent metric families that keep their own text exposition, so a scrape of a large fleet is a join.

prometheus_client renders every series on every scrape (about 2 µs a sample; 750,000 samples at 50,000 agents).
Here each write (`set`, `inc`, `observe`) re-renders the lines of its own series, in exactly the text
prometheus_client writes for it (label names sorted, `floatToGoString` values, the same escaping), and a scrape
joins what is there. A family also yields ordinary prometheus_client `Metric`s from its values (not from its
text), so `registry.collect()`, `get_sample_value` and `generate_latest` still work, and a test compares the two.

Thread safety: the scrape joins on a worker thread while the event loop writes. `"".join(d.values())` copies
the values in one C call under the GIL, so it sees each series either before or after a write, never half of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from prometheus_client import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString as _go_float

Key = tuple[str, ...]


def escape_label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def floatToGoString(value: float) -> str:
    """prometheus_client's own float formatting, so values match its exposition byte for byte."""
    return str(_go_float(value))  # type: ignore[no-untyped-call]


def _num(value: float) -> str:
    # floatToGoString, with the common case (small whole numbers, e.g. counts) without a float repr
    if 0 < value < 1_000_000 and value.is_integer():
        return f"{int(value)}.0"
    return floatToGoString(value)


def _count(n: int) -> str:
    return f"{n}.0" if 0 <= n < 1_000_000 else floatToGoString(n)


class Family:
    """One metric family with labels. `name` is the sample name base (counters: without `_total`)."""

    kind = ""
    __slots__ = ("_children", "documentation", "labelnames", "lines", "name")

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._children: dict[Key, _Child] = {}
        self.lines: dict[Key, str] = {}  # the rendered sample lines of each series

    # ---- the prometheus_client child API

    def _child(self, values: tuple[str, ...]) -> _Child:
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: {len(self.labelnames)} label values expected, got {len(values)}")
            values = tuple(str(v) for v in values)
            child = self._children[values] = self._new(values)
            child.render()
        return child

    def _new(self, key: Key) -> _Child:
        raise NotImplementedError

    def remove(self, *values: str) -> None:
        self._children.pop(values, None)
        self.lines.pop(values, None)

    def series(self) -> list[Key]:
        """The label values of every series (a copy: safe to remove while iterating)."""
        return list(self._children)

    def value(self, key: Key) -> float:
        child = self._children.get(key)
        return child.total() if child is not None else 0.0

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
        """The family as prometheus_client's own `Metric`, built from the values."""
        m = Metric(self.name, self.documentation, self.kind)
        for key, child in list(self._children.items()):
            child.samples(m, dict(zip(self.labelnames, key, strict=True)))
        return m

    def _labelstr(self, key: Key, extra: str = "") -> tuple[str, str]:
        """The label pairs sorted by name, split around where `extra` (histograms: `le`) sorts in."""
        pairs = sorted(zip(self.labelnames, key, strict=True))
        before = "".join(f'{k}="{escape_label_value(v)}",' for k, v in pairs if extra and k < extra)
        after = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in pairs if not extra or k > extra)
        return before, after


class _Child:
    __slots__ = ("family", "key")

    def __init__(self, family: Family, key: Key) -> None:
        self.family = family
        self.key = key

    def render(self) -> None:
        raise NotImplementedError

    def total(self) -> float:
        raise NotImplementedError

    def samples(self, m: Metric, labels: dict[str, str]) -> None:
        raise NotImplementedError


class _Scalar(_Child):
    __slots__ = ("head", "v")

    def __init__(self, family: Family, key: Key, sample: str) -> None:
        super().__init__(family, key)
        _, labels = family._labelstr(key)
        self.head = f"{sample}{{{labels}}} " if labels else f"{sample} "
        self.v = 0.0

    def render(self) -> None:
        self.family.lines[self.key] = f"{self.head}{_num(self.v)}\n"

    def total(self) -> float:
        return self.v


class GaugeChild(_Scalar):
    __slots__ = ()

    def set(self, value: float) -> None:
        self.v = float(value)
        self.render()

    def inc(self, amount: float = 1.0) -> None:
        self.v += amount
        self.render()

    def dec(self, amount: float = 1.0) -> None:
        self.v -= amount
        self.render()

    def samples(self, m: Metric, labels: dict[str, str]) -> None:
        m.add_sample(self.family.name, labels, self.v)


class CounterChild(_Scalar):
    __slots__ = ()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.v += amount
        self.render()

    def samples(self, m: Metric, labels: dict[str, str]) -> None:
        m.add_sample(self.family.name + "_total", labels, self.v)


class HistogramChild(_Child):
    __slots__ = ("after", "before", "counts", "sum")

    def __init__(self, family: HistogramFamily, key: Key) -> None:
        super().__init__(family, key)
        self.before, self.after = family._labelstr(key, "le")
        self.counts = [0] * len(family.bounds)
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        fam = self.family
        assert isinstance(fam, HistogramFamily)
        self.counts[bisect_left(fam.bounds, amount)] += 1
        self.sum += amount
        self.render()

    def render(self) -> None:
        fam = self.family
        assert isinstance(fam, HistogramFamily)
        name, before = fam.name, self.before
        after = "," + self.after if self.after else ""
        lines = []
        cumulative = 0
        for le, n in zip(fam.le, self.counts, strict=True):
            cumulative += n
            lines.append(f'{name}_bucket{{{before}le="{le}"{after}}} {_count(cumulative)}\n')
        labels = f"{{{self.after}}}" if self.after else ""
        if before:
            labels = f"{{{before[:-1]}{after}}}"
        lines.append(f"{name}_count{labels} {_count(cumulative)}\n{name}_sum{labels} {floatToGoString(self.sum)}\n")
        fam.lines[self.key] = "".join(lines)

    def total(self) -> float:
        return float(sum(self.counts))

    def samples(self, m: Metric, labels: dict[str, str]) -> None:
        fam = self.family
        assert isinstance(fam, HistogramFamily)
        cumulative = 0
        for le, n in zip(fam.le, self.counts, strict=True):
            cumulative += n
            m.add_sample(fam.name + "_bucket", {**labels, "le": le}, float(cumulative))
        m.add_sample(fam.name + "_count", labels, float(cumulative))
        m.add_sample(fam.name + "_sum", labels, self.sum)


class GaugeFamily(Family):
    kind = "gauge"
    __slots__ = ()

    def labels(self, *values: str) -> GaugeChild:
        child = self._child(values)
        assert isinstance(child, GaugeChild)
        return child

    def _new(self, key: Key) -> _Child:
        return GaugeChild(self, key, self.name)


class CounterFamily(Family):
    kind = "counter"
    __slots__ = ()

    def labels(self, *values: str) -> CounterChild:
        child = self._child(values)
        assert isinstance(child, CounterChild)
        return child

    def _new(self, key: Key) -> _Child:
        return CounterChild(self, key, self.name + "_total")

    def sample_names(self) -> tuple[str, ...]:
        return (self.name + "_total",)


class HistogramFamily(Family):
    kind = "histogram"
    __slots__ = ("bounds", "le")

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Iterable[float]) -> None:
        super().__init__(name, documentation, labelnames)
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds = tuple(bounds)
        self.le = tuple(floatToGoString(b) for b in bounds)

    def labels(self, *values: str) -> HistogramChild:
        child = self._child(values)
        assert isinstance(child, HistogramChild)
        return child

    def _new(self, key: Key) -> _Child:
        return HistogramChild(self, key)

    def sample_names(self) -> tuple[str, ...]:
        return (self.name + "_bucket", self.name + "_count", self.name + "_sum")


class FamilyCollector(Collector):
    """The families as a prometheus_client collector: `collect()` builds `Metric`s from the values."""

    def __init__(self, families: Sequence[Family]) -> None:
        self.families = tuple(families)

    def describe(self) -> Iterator[Metric]:
        for f in self.families:
            yield Metric(f.name, f.documentation, f.kind)

    def collect(self) -> Iterator[Metric]:
        for f in self.families:
            yield f.metric()


def render(families: Iterable[Family], openmetrics: bool, names: frozenset[str] = frozenset()) -> bytes:
    """The families' text: HELP and TYPE once per family, then every series' kept lines. `names` restricts the
    output to the families with one of these sample names, as prometheus_client's `name[]` filter does."""
    out: list[bytes] = []
    for f in families:
        wanted = f.sample_names()
        if names and names.isdisjoint(wanted):
            continue
        out.append(f.header(openmetrics).encode())
        text = f.text()
        if names and not names.issuperset(wanted):  # part of a family (e.g. only `_bucket`): filter its lines
            text = "".join(line + "\n" for line in text.splitlines() if line.partition("{")[0] in names)
        out.append(text.encode())
    return b"".join(out)
