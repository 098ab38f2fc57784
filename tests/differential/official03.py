"""Run by the sdk03 peer venv's python (a2a-sdk 0.3.26): read each job's agent as a 0.3 caller does.

stdin: a JSON list of {"base": url, "target": card|send|get|stream}; stdout: a JSON list, one entry a job: null
when the card resolved, the client was made, send_message was consumed to its end (and, for "get", get_task
returned), else the exception the client raised.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def one(job: dict[str, Any]) -> str | None:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, TaskQueryParams, TextPart

    async with httpx.AsyncClient(timeout=5.0) as hx:
        try:
            card = await A2ACardResolver(hx, job["base"]).get_agent_card()
            client = ClientFactory(ClientConfig(streaming=job["target"] == "stream", httpx_client=hx)).create(card)
            message = Message(role=Role.user, parts=[Part(root=TextPart(text="hi"))], message_id="x")
            async for _ in client.send_message(message):
                pass
            if job["target"] == "get":
                await client.get_task(TaskQueryParams(id="t1"))
        except Exception as exc:  # whatever the client raises is its refusal
            return f"{type(exc).__name__}: {exc}"[:300]
    return None


async def main() -> None:
    jobs = json.load(sys.stdin)
    gate = asyncio.Semaphore(8)

    async def guarded(job: dict[str, Any]) -> str | None:
        async with gate:
            return await one(job)

    print(json.dumps(await asyncio.gather(*(guarded(j) for j in jobs))))


if __name__ == "__main__":
    asyncio.run(main())
