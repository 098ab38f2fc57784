"""The one valid-card builder for tests: a complete A2A 1.0 card whose interfaces point where you say."""

from __future__ import annotations

from typing import Any


def valid_card(*interfaces: tuple[str, str, str] | str, name: str = "test-agent", streaming: bool = True,
               **extra: Any) -> dict[str, Any]:
    """`interfaces` are (url, protocolBinding, protocolVersion) triples, or bare URLs for JSONRPC 1.0."""
    entries = [{"url": i, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"} if isinstance(i, str)
               else {"url": i[0], "protocolBinding": i[1], "protocolVersion": i[2]} for i in interfaces]
    return {"name": name, "description": f"{name} for tests", "version": "1.0.0", "supportedInterfaces": entries,
            "capabilities": {"streaming": streaming}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["test"]}]} | extra
