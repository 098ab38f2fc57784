"""The one valid-card builder for tests: a complete A2A card whose interfaces point where you say.

`valid_card` builds a 1.0 card (`supportedInterfaces`); with `version="0.3"` or `"0.2"` it builds that version's
card instead (top-level `url`, `protocolVersion`; `preferredTransport` from 0.3 on). `extra` replaces or adds
top-level fields, so a test states only what its agent does differently.
"""

from __future__ import annotations

from typing import Any

LEGACY_VERSIONS = {"0.3": "0.3.0", "0.2": "0.2.5"}


def valid_card(*interfaces: tuple[str, str, str] | str, name: str = "test-agent", streaming: bool = True,
               version: str = "1.0", **extra: Any) -> dict[str, Any]:
    """`interfaces` are (url, protocolBinding, protocolVersion) triples, or bare URLs for JSONRPC 1.0 (for 0.3 and
    0.2: the first one's URL is the card's `url`)."""
    head: dict[str, Any] = {"name": name, "description": f"{name} for tests", "version": "1.0.0"}
    rest = {"capabilities": {"streaming": streaming}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            # built on each call: tests edit the card they get
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["test"]}]}
    if version in LEGACY_VERSIONS:
        first = interfaces[0] if isinstance(interfaces[0], str) else interfaces[0][0]
        head |= {"protocolVersion": LEGACY_VERSIONS[version], "url": first}
        if version == "0.3":
            head["preferredTransport"] = "JSONRPC"
    else:
        head["supportedInterfaces"] = [
            {"url": i, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"} if isinstance(i, str)
            else {"url": i[0], "protocolBinding": i[1], "protocolVersion": i[2]} for i in interfaces]
    return head | rest | extra
