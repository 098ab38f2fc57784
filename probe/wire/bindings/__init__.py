"""Bindings, one module each, registered by name: `jsonrpc` (JSON-RPC 2.0), later `http_json` and `grpc`.

Adding a binding is one module and one `register(...)` line at its end; the engine looks bindings up
by the card's protocolBinding (`BY_CARD_NAME`) and reports them by registry name (a bounded label value).
"""

from __future__ import annotations

from probe.wire.bindings import grpc_binding, http_json, jsonrpc
from probe.wire.bindings.base import (
    BY_CARD_NAME,
    REGISTRY,
    A2AError,
    Answer,
    AnswerStream,
    Binding,
    BindingUnavailable,
    Context,
    Factory,
    Headers,
    Op,
    Problem,
    ProblemKind,
    StreamEvent,
    retry_after_seconds,
)

__all__ = ["BY_CARD_NAME", "REGISTRY", "A2AError", "Answer", "AnswerStream", "Binding", "BindingUnavailable",
           "Context", "Factory", "Headers", "Op", "Problem", "ProblemKind", "StreamEvent", "grpc_binding", "http_json",
           "jsonrpc", "retry_after_seconds"]
