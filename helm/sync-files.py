#!/usr/bin/env python3
"""Copy the canonical alert rules and dashboards into the chart (Helm cannot read files outside a chart).

    python helm/sync-files.py           # dashboards/alerts.yaml -> helm/a2a-probe/files/alerts.yaml,
                                        # dashboards/*.json      -> helm/a2a-probe/files/dashboards/
    python helm/sync-files.py --check   # exit 1 and list the differences instead (tests/deploy/test_chart.py)

Dashboards that left dashboards/ are removed from the chart. Without dashboards/alerts.yaml the chart keeps a
placeholder with no rule groups (`groups: []`), so the PrometheusRule still renders.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "dashboards"
FILES = REPO / "helm" / "a2a-probe" / "files"
PLACEHOLDER = b"# Placeholder: dashboards/alerts.yaml does not exist yet (helm/sync-files.py copies it).\ngroups: []\n"


def plan() -> tuple[dict[Path, bytes], list[Path]]:
    """What the chart's files/ should hold (path -> content), and the stale files to delete."""
    wanted: dict[Path, bytes] = {}
    alerts = SOURCE / "alerts.yaml"
    wanted[FILES / "alerts.yaml"] = alerts.read_bytes() if alerts.is_file() else PLACEHOLDER
    for dashboard in sorted(SOURCE.glob("*.json")):
        wanted[FILES / "dashboards" / dashboard.name] = dashboard.read_bytes()
    stale = [p for p in sorted((FILES / "dashboards").glob("*.json")) if p not in wanted]
    return wanted, stale


def differences() -> list[str]:
    wanted, stale = plan()
    out = []
    for path, content in wanted.items():
        rel = path.relative_to(REPO)
        if not path.is_file():
            out.append(f"missing: {rel}")
        elif path.read_bytes() != content:
            out.append(f"differs from the canonical file: {rel}")
    out += [f"stale (no longer in dashboards/): {p.relative_to(REPO)}" for p in stale]
    return out


def sync() -> list[str]:
    changes = differences()
    wanted, stale = plan()
    for path, content in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
    for path in stale:
        path.unlink()
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report differences, change nothing")
    args = parser.parse_args(argv)
    if args.check:
        diffs = differences()
        for line in diffs:
            print(line)
        if diffs:
            print("run: python helm/sync-files.py", file=sys.stderr)
        return 1 if diffs else 0
    for line in sync():
        print(f"synced ({line})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
