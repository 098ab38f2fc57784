"""One :class:`~tests.agents.fault_agent.Faults` configuration per failure mode, and :func:`run_agent`.

Usage::

    async with run_agent("doubled_prefix") as agent:
        card_url = agent.card_url   # where the card really is
        rpc_url = agent.rpc_url     # where JSON-RPC really is (the card advertises something else)
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.agents.cards import valid_card
from tests.agents.fault_agent import ORIGIN_PLACEHOLDER, DemoAgent, Faults

__all__ = ["FAULTS", "GATEWAY_PREFIX", "faults_for", "run_agent"]

GATEWAY_PREFIX = "/api/a2a/ns/name"
_ORIGIN = ORIGIN_PLACEHOLDER.decode()


def _valid_card_fields(origin: str = _ORIGIN, **extra: Any) -> dict[str, Any]:
    """A complete 1.0 card whose interface URL points at the serving agent (via ``__ORIGIN__``)."""
    return valid_card(f"{origin}/", name="raw-card-agent", description="card served from raw bytes") | extra


def _oversized_card(size: int = 2 * 1024 * 1024) -> bytes:
    """A syntactically valid card padded to exactly ``size`` bytes on the wire (no ``__ORIGIN__``)."""
    fields = _valid_card_fields(origin="http://oversized.invalid", description="")
    base = json.dumps(fields, separators=(",", ":")).encode()
    marker = b'"description":""'
    padding = size - len(base)
    body = base.replace(marker, b'"description":"' + b"x" * padding + b'"')
    assert len(body) == size
    return body


def _duplicate_keys_card() -> bytes:
    body = json.dumps(_valid_card_fields(), separators=(",", ":")).encode()
    return body.replace(b'{"name":"raw-card-agent"', b'{"name":"first-name","name":"raw-card-agent"', 1)


def _nan_card() -> bytes:
    body = json.dumps(_valid_card_fields(), separators=(",", ":")).encode()
    return body[:-1] + b',"x-priority":NaN}'


_INVALID_CARD: dict[str, Any] = {
    # no "name"; interfaces lack "url"
    "description": "an invalid card",
    "supportedInterfaces": [
        {"protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ],
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["demo"]}],
}

FAULTS: dict[str, Faults] = {
    "healthy": Faults(),
    "healthy_03": Faults(protocol="0.3"),
    "hybrid": Faults(protocol="hybrid"),
    "doubled_prefix": Faults(card_prefix=GATEWAY_PREFIX, advertised_path="/api/a2a" + GATEWAY_PREFIX),
    "html_interface": Faults(interface_html=True),
    "jsonrpc_error_200": Faults(jsonrpc_error=-32603),
    "version_header_required": Faults(require_version_header=True),
    "stream_never_terminates": Faults(stream_mode="never_terminates"),
    "stream_closes_early": Faults(stream_mode="closes_early"),
    "stream_regression": Faults(stream_mode="regression"),
    "stream_task_id_changes": Faults(stream_mode="task_id_changes"),
    "stream_wrong_content_type": Faults(stream_mode="wrong_content_type"),
    "stream_error_event": Faults(stream_mode="error_event"),
    "invalid_card": Faults(card_override=_INVALID_CARD),
    "oversized_card": Faults(card_raw=_oversized_card()),
    "duplicate_keys_card": Faults(card_raw=_duplicate_keys_card()),
    "nan_card": Faults(card_raw=_nan_card()),
    "pre_03": Faults(protocol="0.1"),
    "in_cluster_host": Faults(advertised_host="agent.default.svc.cluster.local:8080"),
    "task_failed": Faults(task_final_state="failed"),
    "slow_task": Faults(task_delay=3.0),
    "crlf_chunked_stream": Faults(stream_line_ending="\r\n", stream_chunking=7),
    # 0.3 §8.2: servers SHOULD use -32003 for push without the capability; -32004 misses a SHOULD, not a MUST
    "push_code_03": Faults(protocol="0.3", push_error_code=-32004),
    # a subscription that starts with the updates, not the Task: a 1.0 MUST (§3.1.6), not a 0.3 rule (§7.9)
    "subscribe_updates_first_03": Faults(protocol="0.3", subscribe_first="status", task_delay=1.0),
    "subscribe_updates_first": Faults(subscribe_first="status", task_delay=1.0),
    # status timestamps with an offset: 1.0 §5.6.1 "MUST NOT include timezone offsets other than 'Z'"; 0.3 has no
    # such rule. The official parsers read both: a finding of its own, never the verdict
    "timestamp_offset": Faults(timestamp_offset="+02:00", task_delay=0.3),
    "timestamp_offset_03": Faults(protocol="0.3", timestamp_offset="+00:00"),
}


def faults_for(name_or_faults: str | Faults) -> Faults:
    """A private deep copy of a catalogue entry (or of the given Faults)."""
    faults = FAULTS[name_or_faults] if isinstance(name_or_faults, str) else name_or_faults
    return copy.deepcopy(faults)


@asynccontextmanager
async def run_agent(name_or_faults: str | Faults, *, name: str | None = None) -> AsyncIterator[DemoAgent]:
    """Start a :class:`DemoAgent` on 127.0.0.1 (free port) for the block, then stop it."""
    agent_name = name or (name_or_faults if isinstance(name_or_faults, str) else "fault-agent")
    agent = DemoAgent(agent_name, faults_for(name_or_faults))
    await agent.start()
    try:
        yield agent
    finally:
        await agent.stop()
