"""One-way imports, checked on every run (the import contract of docs/architecture.md).

Layers, top to bottom; a module may import its own layer and any layer below, never one above. A new
top-level module or package must be placed here, which is the point: the layering is a decision.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "probe"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cli", ("probe.cli", "probe.__main__", "probe.docs")),
    ("demo", ("probe.demo",)),
    ("daemon", ("probe.daemon",)),
    ("web", ("probe.web", "probe.statuspage", "probe.webguard")),
    ("runner", ("probe.runner", "probe.scheduler", "probe.history", "probe.metrics", "probe.exposition",
                "probe.selfmon", "probe.offline", "probe.admission")),
    ("report", ("probe.report", "probe.levels", "probe.templates")),
    ("config", ("probe.config",)),
    ("suite", ("probe.suite",)),
    ("engine", ("probe.engine",)),
    ("checks", ("probe.checks",)),
    ("wire", ("probe.wire", "probe.trust", "probe.inbox")),
    ("model", ("probe.results", "probe.reasons", "probe.target", "probe.redact", "probe.shard", "probe.logs",
               "probe.stall", "probe.interning", "probe")),
)


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None  # (prefix length, layer index)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    if best is None or (best[0] == len("probe") and module != "probe"):
        raise LookupError(module)
    return best[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def probe_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "probe"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                node.module.split(".")[0] == "probe":
            for alias in node.names:  # `from probe.wire import card` imports the module probe.wire.card
                sub = f"{node.module}.{alias.name}"
                found.add(sub if _is_module(sub) else node.module)
    return found


def _is_module(name: str) -> bool:
    base = ROOT.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


MODULES = sorted(ROOT.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    unplaced = []
    for path in MODULES:
        try:
            layer_of(module_name(path))
        except LookupError:
            unplaced.append(module_name(path))
    assert not unplaced, f"place these in tests/unit/test_layers.py LAYERS: {unplaced}"


def upward(me: str, path: Path) -> list[tuple[str, str]]:
    mine = layer_of(me)
    return sorted((imp, LAYERS[layer_of(imp)][0]) for imp in probe_imports(path) if layer_of(imp) < mine)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_point_down(path: Path) -> None:
    me = module_name(path)
    assert not upward(me, path), f"{me} ({LAYERS[layer_of(me)][0]}) imports from a higher layer: {upward(me, path)}"


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The contract can fail: the two imports this repo once had (results -> catalogue, web -> daemon)."""
    src = tmp_path / "m.py"
    src.write_text("from probe.checks.catalogue import Severity\nfrom probe.wire import card\n"
                   "def f():\n    from probe.daemon import Daemon\n")
    assert upward("probe.results", src) == [("probe.checks.catalogue", "checks"), ("probe.daemon", "daemon"),
                                            ("probe.wire.card", "wire")]
    assert upward("probe.web", src) == [("probe.daemon", "daemon")]
    with pytest.raises(LookupError):
        layer_of("probe.newthing")
