"""Protocol knowledge and nothing about verdicts: HTTP, strict JSON, SSE, cards, JSON-RPC, bindings."""
