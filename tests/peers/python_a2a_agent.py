"""A real third-party A2A server: python-a2a (an independent library on Flask, not built on the official SDKs).

Run with its venv (tests/peers/venvs/python-a2a, made by .ci/run): ``python python_a2a_agent.py --port N``.
The card at ``/.well-known/agent-card.json`` (and ``/.well-known/agent.json``) says protocolVersion 0.3.0 and
JSON-RPC at its url; the library's own A2AServer echoes the user's text and completes the task — on its own
routes (``POST /tasks/send``, ``/tasks/stream``), the pre-0.2 methods: its url answers message/send with HTTP 500.
"""

from __future__ import annotations

import argparse

from python_a2a import A2AServer, AgentCard, run_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    card = AgentCard(name="python-a2a-echo", description="echo agent on python-a2a",
                     url=f"http://127.0.0.1:{args.port}", version="1.0.0")
    run_server(A2AServer(agent_card=card), host="127.0.0.1", port=args.port)  # the default handler echoes


if __name__ == "__main__":
    main()
