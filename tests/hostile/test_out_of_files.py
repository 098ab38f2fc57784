"""A probe process really out of file descriptors (RLIMIT_NOFILE filled, in a child process): a name lookup and a
gRPC call that cannot open their sockets are the probe's overload (`probe_overloaded`, ProbeOutOfFiles), never the
agent's failure. Neither carries the errno: glibc's getaddrinfo answers "Name or service not known" when it cannot
open /etc/hosts or a resolver socket, gRPC core UNAVAILABLE with "socket: Too many open files"."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

_CHILD = r'''
import asyncio, json, os, resource, sys
import grpc.aio
from probe.config import Agent, Module, Prober
from probe.history import History
from probe.metrics import Metrics
from probe.runner import Runner
from probe.wire.bindings import Op
from probe.wire.bindings.grpc_binding import GrpcBinding
from probe.wire.dialects import V1
from probe.wire.http import Deadline, HttpClient, WireError


def fill() -> list[int]:
    "x".encode("idna")  # loaded now: a lookup imports it, and that needs a descriptor too
    fds = []
    try:
        while True:
            fds.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        return fds


async def call(binding: GrpcBinding) -> list[str]:
    try:
        await binding.call(Op.GET, {"id": "t"}, deadline=Deadline.after(3))
    except WireError as exc:
        return [type(exc).__name__, str(exc)]
    return ["answered", ""]


async def main(port: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    out = {}
    async with HttpClient() as client:
        metrics, history = Metrics([1], []), History(5)
        runner = Runner(client, metrics, history, max_concurrency=1)
        module = Module(prober=Prober.PING, interval=5, timeout=3, fresh_connection=True)
        metrics.add_job("a", "m", module.interval, module.timeout)
        binding = GrpcBinding(f"127.0.0.1:{port}", V1, {})
        try:  # gRPC core's threads and pollers start on the first call, before the descriptors run out
            await binding.call(Op.GET, {"id": "t"}, deadline=Deadline.after(3))
        except WireError:
            pass
        fds = fill()
        out["grpc_first"] = await call(binding)  # no channel open: grpc.aio's start fails (a socketpair)
        for _ in range(16):
            os.close(fds.pop())
        keeper = grpc.aio.insecure_channel("127.0.0.1:1")  # grpc.aio's poller lives while a channel is open
        fds += fill()
        result = await runner.run(Agent(name="a", url=f"http://localhost:{port}"), module, timeout=3)
        out["dns"] = [result.reason.value if result.reason else None, json.dumps(result.model_dump(mode="json"))]
        out["grpc"] = await call(binding)  # the connect fails: UNAVAILABLE
        for fd in fds:
            os.close(fd)
        await keeper.close()
    print(json.dumps(out))

asyncio.run(main(int(sys.argv[1])))
'''


@pytest.fixture(scope="module")
def outcome() -> dict[str, list[str]]:
    with socket.socket() as listening:  # an address that accepts, and never answers
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(listening.getsockname()[1])], capture_output=True,
                              text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_lookup_without_descriptors_is_the_probes_overload(outcome: dict[str, list[str]]) -> None:
    reason, problem = outcome["dns"]
    assert reason == "probe_overloaded", outcome  # before: card_unreachable, "Name or service not known"
    assert "out of file descriptors" in problem, problem


def test_a_grpc_call_without_descriptors_is_the_probes_overload(outcome: dict[str, list[str]]) -> None:
    kind, message = outcome["grpc"]
    assert kind == "ProbeOutOfFiles", outcome  # before: ConnectFailed (invoke_unreachable)
    assert "out of file descriptors" in message and "UNAVAILABLE" in message
    kind, message = outcome["grpc_first"]
    assert kind == "ProbeOutOfFiles", outcome  # before: OSError out of grpc.aio.insecure_channel, a probe bug
    assert "gRPC channel to 127.0.0.1:" in message and "out of file descriptors" in message
