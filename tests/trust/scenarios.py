"""Runs that make the trust checks fail, for the test that proves every catalogued check can fail."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from probe.engine import run_probe
from probe.results import Status, StepName
from probe.target import AuthSpec, Target, TlsSpec
from probe.wire.http import HttpClient
from tests.trust.agent import base_card, trust_agent
from tests.trust.material import CA, server_context


async def trust_failures(client: HttpClient) -> set[str]:
    failed: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        ca = CA.create(Path(tmp))
        async with trust_agent(tls=server_context(ca.issue("soon", days=2))) as agent:
            for tls in (TlsSpec(ca_bundle=str(ca.path)), TlsSpec(insecure_skip_verify=True)):
                r = await run_probe(Target(name="t", url=agent.origin, tls=tls), client, steps=(StepName.PING,))
                failed |= {c.id for c in r.checks if c.status is Status.FAIL}  # tls.cert_expiry, tls.verified

    def card(origin: str) -> dict[str, Any]:
        doc = base_card(origin)
        doc["capabilities"]["extendedAgentCard"] = True
        return doc

    async with trust_agent(card) as agent:  # declared, but GetExtendedAgentCard is not served
        r = await run_probe(Target(name="t", url=agent.origin, auth=AuthSpec(bearer=SecretStr("ZqBtok-xyz"))),
                            client, steps=(StepName.PING,))
        failed |= {c.id for c in r.checks if c.status is Status.FAIL}  # card.extended
    return failed
