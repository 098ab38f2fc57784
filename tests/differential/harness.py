"""Differential testing: each mutant served by a loopback agent, read by the official client and by the probe.

One aiohttp app serves every mutant of a run under its own prefix (`/m/<n>`): the card at the well-known path
under it, JSON-RPC at `/m/<n>/rpc`, HTTP+JSON at `/m/<n>/rest/...`. The official client of the mutant's version
reads it: a2a-sdk 1.3.0 in this process for 1.0 (`A2ACardResolver`, `ClientFactory.create`, `send_message`
consumed to the end, `get_task`), a2a-sdk 0.3.26 in the `sdk03` peer venv for 0.3 (one subprocess for the whole
batch, `official03.py`). The probe reads it with its `check` engine (`run_probe`: card validation, invoke with its
GetTask poll, stream). An `Outcome` says whether each accepted the answer and why not.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from probe.engine import run_probe
from probe.results import ProbeResult, Severity, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.server import serve
from tests.differential.mutants import BASE, Mutant

SDK03_PYTHON = Path(__file__).resolve().parents[1] / "peers" / "venvs" / "sdk03" / "bin" / "python"
_METHODS = {"1.0": {"SendMessage": "send", "GetTask": "get", "SendStreamingMessage": "stream"},
            "0.3": {"message/send": "send", "tasks/get": "get", "message/stream": "stream"}}


@dataclass
class Outcome:
    mutant: Mutant
    official: str | None  # None: the official client read everything; else its exception
    reason: str | None  # the probe's verdict: its primary reason (None: success)
    probe_failed: list[str]  # the failed MUST/SHOULD checks: "id (level): message"
    baseline: str | None = None  # the reason on the valid answers of this flavour and target
    baseline_failed: tuple[str, ...] = ()

    @property
    def official_ok(self) -> bool:
        return self.official is None

    @property
    def probe_ok(self) -> bool:
        """The probe's verdict is what it is on the valid answers (the "get" answers' WORKING SendMessage is not
        blocking, and a loopback agent sends no cache headers: those are in the baseline)."""
        return self.reason == self.baseline

    @property
    def graded(self) -> list[str]:
        """MUST failures beyond the valid answers' ones: the grade, when the verdict stays."""
        return [f for f in self.probe_failed if "(must)" in f and f.split(" ")[0] not in self.baseline_failed]

    @property
    def agree(self) -> bool:
        return self.official_ok == self.probe_ok

    def row(self) -> str:
        off = "reads" if self.official_ok else f"refuses: {self.official}"
        probe = "passes" if self.probe_ok else f"fails ({self.reason})"
        return f"{self.mutant.id} | official {off} | probe {probe}: {'; '.join(self.graded)[:400]}"


def _fill(doc: Any, base: str) -> Any:
    return json.loads(json.dumps(doc).replace(BASE, base))


def _app(mutants: Sequence[Mutant]) -> web.Application:
    def mutant(request: web.Request) -> Mutant:
        return mutants[int(request.match_info["n"])]

    def answer(m: Mutant, op: str) -> Any:
        return {"send": m.send, "get": m.get}[op]

    async def card(request: web.Request) -> web.Response:
        base = f"{request.url.origin()}/m/{request.match_info['n']}"
        return web.json_response(_fill(mutant(request).card, base))

    async def sse(request: web.Request, events: Iterable[Any]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for event in events:
            await resp.write(f"data: {json.dumps(event)}\n\n".encode())
        await resp.write_eof()
        return resp

    async def rpc(request: web.Request) -> web.StreamResponse:
        m = mutant(request)
        body = await request.json()
        rid = body.get("id")
        op = _METHODS[m.flavour.version].get(body.get("method"))
        if op is None:
            return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
        if op == "stream":
            return await sse(request, ({"jsonrpc": "2.0", "id": rid, "result": e} for e in m.stream))
        return web.json_response({"jsonrpc": "2.0", "id": rid, "result": answer(m, op)})

    async def rest(request: web.Request) -> web.StreamResponse:
        m = mutant(request)
        tail = request.match_info["tail"]
        if request.method == "POST" and tail == "message:stream":
            return await sse(request, m.stream)
        if request.method == "POST" and tail == "message:send":
            return web.json_response(m.send)
        if request.method == "GET" and tail.startswith("tasks/"):
            return web.json_response(m.get)
        return web.json_response({"error": {"code": 404, "status": "NOT_FOUND", "message": "no"}}, status=404)

    app = web.Application()
    app.router.add_get("/m/{n}/.well-known/agent-card.json", card)
    app.router.add_post("/m/{n}/rpc", rpc)
    app.router.add_route("*", "/m/{n}/rest/{tail:.*}", rest)
    return app


@asynccontextmanager
async def served(mutants: Sequence[Mutant]) -> Any:
    async with serve(_app(mutants)) as origin:
        yield [f"{origin}/m/{i}" for i in range(len(mutants))]


# ---- the probe

_STEPS = {"card": (StepName.INVOKE,), "send": (StepName.INVOKE,), "get": (StepName.INVOKE,),
          "stream": (StepName.STREAM,)}


async def probe(client: HttpClient, m: Mutant, base: str) -> tuple[str | None, list[str], ProbeResult]:
    r = await run_probe(Target(name="diff", url=base, a2a_version=m.flavour.version, binding=m.flavour.binding,
                               timeout=5.0), client,
                        steps=_STEPS[m.target])
    failed = [f"{c.id} ({c.severity.value}): {c.message}" for c in r.failed_checks()
              if c.severity in (Severity.MUST, Severity.SHOULD) and c.status is Status.FAIL]
    return (r.reason.value if r.reason is not None else None), failed, r


# ---- the official clients

def lost(desc: Any, value: Any, path: str = "") -> list[str]:
    """What protobuf's lenient parse (`ignore_unknown_fields=True`, a2a-sdk's `parse_lenient`) drops silently from
    a document it accepts: an enum name the version does not define (read as the zero value) and a non-object where
    a message belongs (read as an empty message, its characters taken for unknown field names). Those answers are
    "read", but not as sent: the caller sees TASK_STATE_UNSPECIFIED or an empty Task."""
    if not isinstance(value, dict):
        return [f"{path or 'result'}: {value!r} read as an empty {desc.name}"]
    envelope = desc.name in ("StreamResponse", "SendMessageResponse")
    if not path and envelope and not any(isinstance(value.get(f.json_name, value.get(f.name)), dict)
                                         for f in desc.fields):
        # a one-of envelope with no member (a 0.3 `kind` object, {}): the client yields an empty event
        return [f"result: none of {'/'.join(f.json_name for f in desc.fields)} (read as an empty {desc.name})"]
    out: list[str] = []
    by = {f.json_name: f for f in desc.fields} | {f.name: f for f in desc.fields}
    for key, item in value.items():
        fd = by.get(key)
        if fd is None or item is None:
            continue
        items = item if fd.is_repeated and isinstance(item, list) else [item]
        sub = fd.message_type
        for i, one in enumerate(items):
            where = f"{path}.{key}" + (f"[{i}]" if fd.is_repeated else "")
            if sub is not None and not sub.GetOptions().map_entry and not sub.full_name.startswith("google."):
                out += lost(sub, one, where)
            elif (fd.enum_type is not None and isinstance(one, str) and one not in fd.enum_type.values_by_name
                  and not one.strip().lstrip("+-").isdigit()):  # json_format reads a numeric string as the number
                out.append(f"{where}: {one!r} read as {fd.enum_type.values[0].name}")
    return out


async def official10(m: Mutant, base: str) -> str | None:
    """a2a-sdk 1.3.0 as a caller uses it; None when every call returned and every event was read as sent."""
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import a2a_pb2 as pb

    async with httpx.AsyncClient(timeout=5.0) as hx:
        try:
            card = await A2ACardResolver(hx, base).get_agent_card()
            config = ClientConfig(streaming=m.target == "stream", httpx_client=hx,
                                  supported_protocol_bindings=[m.flavour.binding])
            client = ClientFactory(config).create(card)
            request = pb.SendMessageRequest(message=pb.Message(message_id="x", role=pb.Role.ROLE_USER,
                                                               parts=[pb.Part(text="hi")]))
            async for _ in client.send_message(request):
                pass
            if m.target == "get":
                await client.get_task(pb.GetTaskRequest(id="t1"))
        except Exception as exc:  # whatever the client raises is its refusal
            return f"{type(exc).__name__}: {exc}"[:300]
    sent = {"card": [(pb.AgentCard, m.card)], "send": [(pb.SendMessageResponse, m.send)], "get": [(pb.Task, m.get)],
            "stream": [(pb.StreamResponse, e) for e in m.stream]}[m.target]
    dropped = [p for cls, doc in sent for p in lost(cls.DESCRIPTOR, doc)]
    return f"read with losses: {'; '.join(dropped)}" if dropped else None


def official03(jobs: Sequence[tuple[Mutant, str]]) -> list[str | None]:
    """a2a-sdk 0.3.26, in its own venv: one subprocess reads every job (they are served meanwhile)."""
    return read03([(base, m.target) for m, base in jobs])


def read03(jobs: Sequence[tuple[str, str]]) -> list[str | None]:
    """a2a-sdk 0.3.26's client on each (base URL, card|send|get|stream): None when it read to the end, else what it
    raised (official03.py)."""
    payload = json.dumps([{"base": base, "target": target} for base, target in jobs])
    done = subprocess.run([str(SDK03_PYTHON), str(Path(__file__).with_name("official03.py"))], input=payload,
                          capture_output=True, text=True, timeout=300, check=True,
                          env={**os.environ, "PYTHONPATH": ""})
    out: list[str | None] = json.loads(done.stdout)
    return out


async def run(mutants: Sequence[Mutant], client: HttpClient, *, concurrency: int = 8) -> list[Outcome]:
    """Both readings of every mutant."""
    async with served(mutants) as bases:
        jobs = list(zip(mutants, bases, strict=True))
        legacy = [(i, job) for i, job in enumerate(jobs) if job[0].flavour.version == "0.3"]
        officials: list[str | None] = [None] * len(jobs)
        if legacy:
            answers = await asyncio.to_thread(official03, [job for _, job in legacy])
            for (i, _), ans in zip(legacy, answers, strict=True):
                officials[i] = ans
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int, m: Mutant, base: str) -> Outcome:
            async with gate:
                if m.flavour.version == "1.0":
                    officials[i] = await official10(m, base)
                reason, failed, _ = await probe(client, m, base)
                return Outcome(m, officials[i], reason, failed)

        outcomes = list(await asyncio.gather(*(one(i, m, b) for i, (m, b) in enumerate(jobs))))
    valid = {(o.mutant.flavour, o.mutant.target): o for o in outcomes if o.mutant.name == "valid"}
    for o in outcomes:
        base_o = valid.get((o.mutant.flavour, o.mutant.target))
        if base_o is not None:
            o.baseline, o.baseline_failed = base_o.reason, tuple(f.split(" ")[0] for f in base_o.probe_failed)
    return outcomes


def main(argv: Sequence[str]) -> int:
    """`python -m tests.differential.harness [flavour ...]`: every mutant; prints the disagreements."""
    from tests.differential.mutants import FLAVOURS, generate

    wanted = [f for f in FLAVOURS if not argv or f.name in argv or f.version in argv]
    mutants = [m for f in wanted for m in generate(f, ("send", "get", "stream") if f.binding == "HTTP+JSON"
                                                   else ("card", "send", "get", "stream"))]

    async def go() -> list[Outcome]:
        async with HttpClient() as client:
            return await run(mutants, client)

    outcomes = asyncio.run(go())
    bad = [o for o in outcomes if not o.agree]
    for o in bad:
        print(o.row())
    print(f"{len(outcomes)} mutants, {len(bad)} disagreements", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
