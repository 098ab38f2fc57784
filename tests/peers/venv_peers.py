"""Real A2A servers beyond the official SDKs' current line, each in its own pinned venv.

| name       | what                                                           | pins                            |
|------------|----------------------------------------------------------------|---------------------------------|
| fasta2a    | Pydantic's fasta2a, an independent A2A 1.0 server              | thirdparty/fasta2a.txt          |
| sdk10      | a2a-sdk 1.0.0, the 1.0 line's first release (1.0: JSON-RPC, REST, gRPC) | thirdparty/sdk10.txt   |
| js10       | @a2a-js/sdk 1.0.1, the JS 1.0 line's first release (the same), on Node | js10/package-lock.json |
| sdk03      | the a2a-sdk 0.3 line's last release (0.3: JSON-RPC, REST, gRPC) | thirdparty/sdk03.txt           |
| sdk02      | the a2a-sdk 0.2 line's last release (0.2: JSON-RPC)            | thirdparty/sdk02.txt            |
| js03       | the @a2a-js/sdk 0.3 line's last release (0.3: JSON-RPC, REST, gRPC), on Node | js03/package-lock.json |
| python-a2a | python-a2a, an independent Flask library (card 0.3; pre-0.2 methods) | thirdparty/python-a2a.txt  |
| a2a-server | a2a-server, an independent FastAPI server (pre-0.2 methods)    | thirdparty/a2a-server.txt       |
| langgraph  | LangGraph's own A2A server (langgraph-api, in memory): 1.0, JSON-RPC | thirdparty/langgraph.txt  |
| voltagent  | VoltAgent's own A2A server (@voltagent/a2a-server) on Node: 0.2, JSON-RPC | voltagent/package-lock.json |
| adk        | Google ADK's to_a2a (google-adk[a2a], on a2a-sdk 1.3): 1.0, JSON-RPC | thirdparty/adk.txt           |
| strands    | Strands Agents' A2AServer (strands-agents[a2a], on a2a-sdk 0.3): 0.3, JSON-RPC | thirdparty/strands.txt |
| agno       | Agno's AgentOS A2A interface (agno[os,a2a]; own routes, a2a-sdk 0.3 types): 0.3 | thirdparty/agno.txt |
| mastra     | Mastra's own A2A server (@mastra/server, @mastra/hono) on Node: 0.3 JSON-RPC | mastra/package-lock.json |

.ci/run makes each venv under tests/peers/venvs/<name> (and js10's, js03's, voltagent's and mastra's node_modules
with `npm ci`); a test never installs anything, and a missing install fails with the command that makes it. sdk10 runs
tests/peers/py_agent.py, js10 tests/peers/js_v1_agent.mjs: the current line's reference agents, unchanged.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from uuid import UUID, uuid5

import pytest

from tests.peers.harness import PEERS_DIR, PeerStartError, _card_ok, ensure_js_deps, free_port

VENVS = PEERS_DIR / "venvs"
OLD_SDK = PEERS_DIR / "a2a_sdk_old_agent.py"  # the official Python SDK's older lines, picked by the venv
AGENTS = {"fasta2a": PEERS_DIR / "fasta2a_agent.py", "sdk03": OLD_SDK, "sdk02": OLD_SDK,
          "sdk10": PEERS_DIR / "py_agent.py", "js10": PEERS_DIR / "js10" / "agent.mjs",
          "js03": PEERS_DIR / "js03" / "agent.mjs",
          "python-a2a": PEERS_DIR / "python_a2a_agent.py", "a2a-server": PEERS_DIR / "a2a_server_agent.py",
          "langgraph": PEERS_DIR / "langgraph_agent.py", "voltagent": PEERS_DIR / "voltagent" / "agent.mjs",
          "adk": PEERS_DIR / "adk_agent.py", "strands": PEERS_DIR / "strands_agent.py",
          "agno": PEERS_DIR / "agno_agent.py", "mastra": PEERS_DIR / "mastra" / "agent.mjs"}
# langgraph-api makes graph "echo" (langgraph_agent.py) the assistant uuid5(NAMESPACE_GRAPH, "echo")
# (langgraph_api.graph), served at /a2a/{assistant_id}, its card under that path
LANGGRAPH_ASSISTANT = str(uuid5(UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "echo"))
# where each serves A2A (its card under it), under its base URL
A2A_PATHS = {"langgraph": f"/a2a/{LANGGRAPH_ASSISTANT}", "agno": "/a2a/agents/echo"}  # agno: AgentOS's /a2a/agents/{id}
# where each serves its card, polled for readiness (a2a-server and a2a-sdk 0.2 only at the 0.2 path)
CARD_PATHS = {"a2a-server": "/.well-known/agent.json", "sdk02": "/.well-known/agent.json",
              "voltagent": "/.well-known/echo/agent-card.json",  # VoltAgent: /.well-known/{serverId}/agent-card.json
              "mastra": "/api/.well-known/echo/agent-card.json"}  # Mastra: {apiPrefix}/.well-known/{agentId}/...
# what each needs in its environment: VoltAgent refreshes a model registry from the network unless in production
ENV = {"voltagent": {"NODE_ENV": "production"},
       "agno": {"AGNO_TELEMETRY": "false"},  # Agno: the env overrides the agent's telemetry flag
       # Mastra: no PostHog telemetry, no model-registry refresh (its agent.mjs sets them too, before it loads Mastra)
       "mastra": {"MASTRA_TELEMETRY_DISABLED": "1", "MASTRA_OFFLINE": "1", "MASTRA_AUTO_REFRESH_PROVIDERS": "false"}}
# the package whose presence in a JS peer's node_modules says `npm ci` ran there (Mastra bundles @a2a-js/sdk aliased)
JS_MARKERS = {"mastra": "@mastra/server"}
GRPC = frozenset({"sdk10", "js10", "sdk03", "js03"})  # peers that also serve gRPC, on a second free port
# where each serves its REST binding (HTTP+JSON), under its base URL
REST_PATHS = {"js03": "/a2a/rest", "sdk10": "/a2a/rest", "js10": "/a2a/rest"}
__all__ = ["VenvPeer", "a2a_server_peer", "adk_peer", "agno_peer", "fasta2a_peer", "js03_peer", "js10_peer",
           "langgraph_peer", "mastra_peer", "python_a2a_peer", "sdk02_peer", "sdk03_peer", "sdk10_peer",
           "start_venv_peer", "strands_peer", "voltagent_peer"]


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
    def url(self) -> str:
        """The agent's URL: its card is at <url>/.well-known/agent-card.json."""
        return self.base_url + A2A_PATHS.get(self.name, "")

    @property
    def card_url(self) -> str:
        return self.url + CARD_PATHS.get(self.name, "/.well-known/agent-card.json")

    @property
    def rest_url(self) -> str:
        return self.base_url + REST_PATHS.get(self.name, "/rest")

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
    runtime = (ensure_js_deps(AGENTS[name].parent, name, JS_MARKERS.get(name, "@a2a-js/sdk"))
               if AGENTS[name].suffix == ".mjs" else str(python_of(name)))
    port = free_port()
    grpc_port = free_port() if name in GRPC else None
    log = tempfile.TemporaryFile()  # noqa: SIM115  (closed by VenvPeer.stop)
    cmd = [runtime, str(AGENTS[name]), "--port", str(port)]
    if grpc_port is not None:
        cmd += ["--grpc-port", str(grpc_port)]
    process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=PEERS_DIR,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", **ENV.get(name, {})})
    peer = VenvPeer(name, port, process, log, grpc_port)
    deadline = time.monotonic() + timeout
    while not _card_ok(peer.card_url):
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


def _fixture(name: str) -> Callable[[], Iterator[VenvPeer]]:
    """A session fixture that starts the named peer once and stops it at the end."""
    def serve() -> Iterator[VenvPeer]:
        yield from _serve(name)

    serve.__name__ = serve.__qualname__ = f"{name.replace('-', '_')}_peer"
    return pytest.fixture(scope="session")(serve)


fasta2a_peer = _fixture("fasta2a")
sdk10_peer = _fixture("sdk10")
js10_peer = _fixture("js10")
sdk03_peer = _fixture("sdk03")
sdk02_peer = _fixture("sdk02")
js03_peer = _fixture("js03")
python_a2a_peer = _fixture("python-a2a")
a2a_server_peer = _fixture("a2a-server")
langgraph_peer = _fixture("langgraph")
voltagent_peer = _fixture("voltagent")
adk_peer = _fixture("adk")
strands_peer = _fixture("strands")
agno_peer = _fixture("agno")
mastra_peer = _fixture("mastra")
