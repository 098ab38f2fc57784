"""Write tests/fixtures/tck_requirements.json: every requirement id of the official TCK with its level and section.

Reads `tck/requirements/*.py` of a2aproject/a2a-tck (a bare git dir, branch 1.0-dev by default) without importing
it: each `RequirementSpec(id=..., section=..., level=RequirementLevel.X, title=...)` call is read from the syntax
tree. The snapshot names the commit it was taken from; tests/unit/test_tck_coverage.py reads it.

    python -m bench.tck_snapshot --git-dir /work/.mirror/a2aproject+a2a-tck/repo [--ref 1.0-dev]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tck_requirements.json"


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def _specs(source: str, path: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for node in ast.walk(ast.parse(source, path)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "RequirementSpec"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        level = kw["level"]
        assert isinstance(level, ast.Attribute), (path, ast.dump(level))
        out.append({"id": ast.literal_eval(kw["id"]), "level": level.attr, "section": ast.literal_eval(kw["section"]),
                    "title": ast.literal_eval(kw["title"]), "file": path.rsplit("/", 1)[-1]})
    return out


def snapshot(git_dir: str, ref: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(the source: repo, ref, commit; the requirements, in file order)."""
    commit = _git(git_dir, "rev-parse", ref).strip()
    reqs: list[dict[str, str]] = []
    for path in sorted(_git(git_dir, "ls-tree", "--name-only", commit, "tck/requirements/").split()):
        if path.endswith(".py"):
            reqs.extend(_specs(_git(git_dir, "show", f"{commit}:{path}"), path))
    ids = [r["id"] for r in reqs]
    assert len(ids) == len(set(ids)), "a TCK id is defined twice"
    return {"repo": "a2aproject/a2a-tck", "ref": ref, "commit": commit, "path": "tck/requirements/*.py"}, reqs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", default="/work/.mirror/a2aproject+a2a-tck/repo")
    ap.add_argument("--ref", default="1.0-dev")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    source, reqs = snapshot(a.git_dir, a.ref)
    rows = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in reqs)  # one requirement a line
    a.out.write_text(f'{{"source": {json.dumps(source)},\n "requirements": [\n{rows}\n]}}\n')


if __name__ == "__main__":
    main()
