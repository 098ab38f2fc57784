"""Real A2A servers beyond the official SDKs' current line, each in its own pinned venv.

| name       | what                                                           | pins in tests/peers/thirdparty/ |
|------------|----------------------------------------------------------------|---------------------------------|
| fasta2a    | Pydantic's fasta2a, an independent A2A 1.0 server              | fasta2a.txt                     |
| sdk03      | the a2a-sdk 0.3 line's last release (0.3: JSON-RPC, REST, gRPC) | sdk03.txt                       |
| python-a2a | python-a2a, an independent Flask library (card 0.3; pre-0.2 methods) | python-a2a.txt             |
| a2a-server | a2a-server, an independent FastAPI server (pre-0.2 methods)    | a2a-server.txt                  |

.ci/run makes each venv under tests/peers/venvs/<name>; a test never installs anything, and a missing
venv fails with the command that makes it.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from tests.peers.harness import PEERS_DIR, PeerStartError, _card_ok, free_port

VENVS = PEERS_DIR / "venvs"
AGENTS = {"fasta2a": PEERS_DIR / "fasta2a_agent.py", "sdk03": PEERS_DIR / "sdk03_agent.py",
          "python-a2a": PEERS_DIR / "python_a2a_agent.py", "a2a-server": PEERS_DIR / "a2a_server_agent.py"}
# where each serves its card, polled for readiness (a2a-server only at the 0.2 path)
CARD_PATHS = {"a2a-server": "/.well-known/agent.json"}
GRPC = frozenset({"sdk03"})  # peers that also serve gRPC, on a second free port
__all__ = ["VenvPeer", "a2a_server_peer", "fasta2a_peer", "python_a2a_peer", "sdk03_peer", "start_venv_peer"]


@dataclass(eq=False)
class VenvPeer:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    grpc_port: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def rest_url(self) -> str:
        return f"{self.base_url}/rest"

    @property
    def grpc_url(self) -> str:
        """As the card advertises it: a schemeless host:port."""
        assert self.grpc_port is not None, f"the {self.name} peer serves no gRPC"
        return f"127.0.0.1:{self.grpc_port}"

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def python_of(name: str) -> Path:
    python = VENVS / name / "bin" / "python"
    if not python.exists():
        pins = PEERS_DIR / "thirdparty" / f"{name}.txt"
        raise PeerStartError(f"the {name} peer is not installed: python -m venv {VENVS / name} && "
                             f"{VENVS / name}/bin/pip install -r {pins} (as .ci/run does)")
    return python


def start_venv_peer(name: str, timeout: float = 90.0) -> VenvPeer:
    """Start a peer and wait for its card; python-a2a and a2a-server import LLM clients (openai, anthropic,
    litellm) at start, seconds of CPU on a loaded machine."""
    python = python_of(name)
    port = free_port()
    grpc_port = free_port() if name in GRPC else None
    log = tempfile.TemporaryFile()  # noqa: SIM115  (closed by VenvPeer.stop)
    cmd = [str(python), str(AGENTS[name]), "--port", str(port)]
    if grpc_port is not None:
        cmd += ["--grpc-port", str(grpc_port)]
    process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=PEERS_DIR,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    peer = VenvPeer(name, port, process, log, grpc_port)
    deadline = time.monotonic() + timeout
    while not _card_ok(peer.base_url + CARD_PATHS.get(name, "/.well-known/agent-card.json")):
        if process.poll() is not None or time.monotonic() > deadline:
            out = peer.output()
            peer.stop()
            raise PeerStartError(f"the {name} peer did not serve its card. Output:\n{out}")
        time.sleep(0.05)
    return peer


def _serve(name: str) -> Iterator[VenvPeer]:
    peer = start_venv_peer(name)
    try:
        yield peer
    finally:
        peer.stop()


@pytest.fixture(scope="session")
def fasta2a_peer() -> Iterator[VenvPeer]:
    yield from _serve("fasta2a")


@pytest.fixture(scope="session")
def sdk03_peer() -> Iterator[VenvPeer]:
    yield from _serve("sdk03")


@pytest.fixture(scope="session")
def python_a2a_peer() -> Iterator[VenvPeer]:
    yield from _serve("python-a2a")


@pytest.fixture(scope="session")
def a2a_server_peer() -> Iterator[VenvPeer]:
    yield from _serve("a2a-server")
