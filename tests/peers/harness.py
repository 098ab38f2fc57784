"""Spawn and stop the official-SDK reference peers (tests/peers/py_agent.py, tests/peers/js/agent.mjs).

Usage::

    with start_peer("js", compat=True) as peer:
        ...  # peer.jsonrpc_url, peer.card_url

Each peer is a subprocess bound to 127.0.0.1 on a free port; ``start_peer`` returns once the agent
card answers 200.
"""

from __future__ import annotations

import asyncio
import atexit
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Literal

PEERS_DIR = Path(__file__).resolve().parent
PY_AGENT = PEERS_DIR / "py_agent.py"
JS_DIR = PEERS_DIR / "js"
JS_AGENT = JS_DIR / "agent.mjs"

CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"

PeerKind = Literal["python", "js"]

POLL_INTERVAL = 0.02
STOP_GRACE = 5.0
PORT_ATTEMPTS = 3  # free_port() can race with other processes; retry on a bind failure

# Peers are local: never route the readiness probe through an http_proxy from the environment.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_npm_lock = threading.Lock()
_live: set[Peer] = set()


class PeerStartError(RuntimeError):
    """A peer process died or never served its agent card."""


def free_port() -> int:
    """A currently unused TCP port on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(eq=False)
class Peer:
    """A running reference peer. Usable as a (sync or async) context manager that stops it."""

    kind: PeerKind
    compat: bool
    port: int
    process: subprocess.Popen[bytes]
    startup_seconds: float = 0.0
    _log: IO[bytes] | None = field(default=None, repr=False)
    grpc_port: int | None = None  # both peers also serve gRPC (lf.a2a.v1; with compat also a2a.v1) in-process

    @property
    def grpc_url(self) -> str:
        """As the SDK advertises it: a schemeless host:port."""
        assert self.grpc_port is not None, f"the {self.kind} peer serves no gRPC"
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def card_url(self) -> str:
        return self.base_url + CARD_PATH

    @property
    def jsonrpc_url(self) -> str:
        return self.base_url + JSONRPC_PATH

    @property
    def rest_url(self) -> str:
        return self.base_url + REST_PATH

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        """Everything the peer wrote to stdout/stderr so far (for failure messages)."""
        if self._log is None or self._log.closed:
            return ""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after STOP_GRACE seconds; always reaps the process. Idempotent."""
        terminate(self.process)
        if self._log is not None:
            self._log.close()
        _live.discard(self)

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> Peer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Peer:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.astop()


def terminate(process: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; always reaps the process. Idempotent."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_peer(kind: str, compat: bool = False, timeout: float = 15.0, extra_args: tuple[str, ...] = ()) -> Peer:
    """Spawn a peer on a free port and wait until its agent card answers 200 (extra_args go to the agent)."""
    if kind not in ("python", "js"):
        raise ValueError(f"unknown peer kind {kind!r}; expected 'python' or 'js'")
    peer_kind: PeerKind = "python" if kind == "python" else "js"
    if peer_kind == "js":
        ensure_js_deps()
    for attempt in range(1, PORT_ATTEMPTS + 1):
        try:
            return _start_once(peer_kind, compat, timeout, extra_args)
        except PeerStartError as err:
            if attempt == PORT_ATTEMPTS or not _is_port_clash(str(err)):
                raise
    raise AssertionError("unreachable")


async def start_peer_async(kind: str, compat: bool = False, timeout: float = 15.0) -> Peer:
    """``start_peer`` without blocking the event loop."""
    return await asyncio.to_thread(start_peer, kind, compat, timeout)


def ensure_js_deps(folder: Path = JS_DIR, what: str = "JS SDK", package: str = "@a2a-js/sdk") -> str:
    """Node, once a JS peer's pinned node_modules are there (.ci/run runs `npm ci` in its folder; a test never
    installs anything); `package` is the one whose presence says so."""
    if not (folder / "node_modules" / package).is_dir():
        raise PeerStartError(f"the {what} peer is not installed: (cd {folder} && npm ci), as .ci/run does")
    node = shutil.which("node")
    if node is None:
        raise PeerStartError(f"node not found on PATH; needed for the {what} peer")
    return node


def _command(kind: PeerKind, port: int, compat: bool, extra_args: tuple[str, ...] = (),
             grpc_port: int | None = None) -> list[str]:
    if kind == "python":
        # sys.executable: the interpreter running the tests, so the peer sees the same venv.
        cmd = [sys.executable, str(PY_AGENT), "--port", str(port)]
        if grpc_port is not None:
            cmd += ["--grpc-port", str(grpc_port)]
    else:
        cmd = [ensure_js_deps(), str(JS_AGENT), "--port", str(port)]
        if grpc_port is not None:
            cmd += ["--grpc-port", str(grpc_port)]
    return [*cmd, *extra_args, "--compat"] if compat else [*cmd, *extra_args]


def _start_once(kind: PeerKind, compat: bool, timeout: float, extra_args: tuple[str, ...] = ()) -> Peer:
    port = free_port()
    grpc_port = free_port()  # both SDK peers serve gRPC from the same process
    # A file, not a pipe: nobody drains the output while tests run, and a full pipe would block the peer.
    # Closed by Peer.stop().
    log = tempfile.TemporaryFile()  # noqa: SIM115
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            _command(kind, port, compat, extra_args, grpc_port),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            cwd=PEERS_DIR,
        )
    except BaseException:
        log.close()
        raise
    peer = Peer(kind=kind, compat=compat, port=port, process=process, _log=log, grpc_port=grpc_port)
    _live.add(peer)
    try:
        _wait_for_card(peer, started + timeout)
    except BaseException:
        peer.stop()
        raise
    peer.startup_seconds = time.monotonic() - started
    return peer


def _wait_for_card(peer: Peer, deadline: float) -> None:
    while True:
        if not peer.running:
            raise PeerStartError(
                f"{peer.kind} peer (port {peer.port}) exited with code {peer.process.returncode} "
                f"before serving its card. Output:\n{peer.output()}"
            )
        if _card_ok(peer.card_url):
            return
        if time.monotonic() >= deadline:
            raise PeerStartError(
                f"{peer.kind} peer (port {peer.port}) did not serve {CARD_PATH} in time. "
                f"Output:\n{peer.output()}"
            )
        time.sleep(POLL_INTERVAL)


def _card_ok(url: str) -> bool:
    try:
        with _NO_PROXY.open(url, timeout=1.0) as resp:
            status: int = resp.status
            return status == 200
    except (OSError, http.client.HTTPException):  # refused, reset, 404 (URLError/HTTPError), half-up server
        return False


def _is_port_clash(message: str) -> bool:
    return "EADDRINUSE" in message or "address already in use" in message.lower()


@atexit.register
def _stop_all() -> None:
    # Last line of defence against orphaned peers when a test run aborts without fixture teardown.
    for peer in list(_live):
        peer.stop()
