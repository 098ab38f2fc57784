"""The catalogue of checks: one entry per check id, defined once.

The CLI, the daemon, the reports and the docs all read this table. A check that runs records a
`CheckResult` (see `probe.results`) that points back here by id.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Category(StrEnum):
    AGENT_CARD = "agent-card"
    INTERFACE = "interface"
    LIFECYCLE = "lifecycle"
    STREAMING = "streaming"


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    category: Category
    severity: Severity
    title: str
    recommendation: str
    spec_ref: str = ""


_M, _S = Severity.MUST, Severity.SHOULD
_CARD, _IFACE, _LIFE, _STREAM = Category.AGENT_CARD, Category.INTERFACE, Category.LIFECYCLE, Category.STREAMING

CHECKS: tuple[Check, ...] = (
    # --- discovery and the card
    Check("card.discovered", _CARD, _M, "The Agent Card is served at the well-known path without credentials",
          "Serve the card at <base>/.well-known/agent-card.json with HTTP 200, publicly.", "DISC-01"),
    Check("card.well_known_path", _CARD, _S, "The card is at /.well-known/agent-card.json, not the legacy agent.json",
          "Serve the card at /.well-known/agent-card.json (the 0.3+ path); agent.json is 0.1/0.2 only.", "DISC-01"),
    Check("card.no_cross_origin_redirect", _CARD, _S, "Discovery does not redirect to another origin",
          "Serve the card from the agent's own origin; clients refuse cross-origin redirects for discovery."),
    Check("card.size", _CARD, _M, "The card is at most 1 MiB",
          "Keep the Agent Card small; move large content out of the card."),
    Check("card.strict_json", _CARD, _M, "The card is strict JSON (no duplicate keys, no NaN/Infinity)",
          "Emit standard JSON: unique object keys, finite numbers only.", "FMT-01"),
    Check("card.content_type", _CARD, _S, "The card is served as application/json",
          "Serve the card with Content-Type: application/json."),
    Check("card.cache_headers", _CARD, _S, "The card response carries Cache-Control max-age and an ETag",
          "Send Cache-Control: max-age=<seconds> and an ETag with the card.", "DISC-02"),
    Check("card.protocol_version", _CARD, _S, "The card declares a current protocol version (1.0 or 0.3)",
          "Upgrade the agent to A2A 1.0 (or at least 0.3); 0.1/0.2 cards are obsolete."),
    Check("card.required_fields", _CARD, _M, "Required card fields are present, typed and non-empty",
          "Add every required field of the card's protocol version with the right JSON type.", "CARD-01"),
    Check("card.interfaces", _CARD, _M,
          "Every advertised interface has a url, a protocolBinding and a Major.Minor protocolVersion",
          "Give each supportedInterfaces entry url, protocolBinding (JSONRPC, GRPC, HTTP+JSON) and "
          "protocolVersion like \"1.0\".", "CARD-02"),
    Check("card.skills", _CARD, _M, "Every skill has id, name, description and tags",
          "Give each skill a unique id, a name, a description and a non-empty tags list.", "CARD-01"),
    Check("card.capabilities", _CARD, _M, "Capability flags are booleans",
          "Use JSON true/false for capabilities.streaming, pushNotifications and extendedAgentCard.", "CARD-01"),
    Check("card.security", _CARD, _M, "Every security requirement names a declared security scheme",
          "Declare each scheme named in securityRequirements (or 0.3 security) under securitySchemes.", "CARD-01"),
    Check("card.https", _CARD, _S, "Advertised interface URLs use https outside loopback",
          "Serve production interfaces over https.", "CARD-05"),
    # --- the advertised interface, compared with where the card was found
    Check("interface.selected", _IFACE, _M, "The card advertises an interface the probe can call",
          "Advertise a JSONRPC interface with protocolVersion 1.0 or 0.3.", "CARD-03"),
    Check("interface.no_path_repeat", _IFACE, _S, "The advertised URL does not repeat the card's path prefix",
          "The gateway's base-URL setting should hold only scheme and host; it must not include the route prefix."),
    Check("interface.routable_host", _IFACE, _S,
          "The advertised host is not in-cluster, loopback, unspecified or private behind a public card",
          "Set the agent's public base URL (for example kagent's controller.a2aBaseUrl) to the address "
          "clients use."),
    Check("interface.scheme", _IFACE, _S, "An https card does not advertise an http interface",
          "Advertise the https URL clients use; check X-Forwarded-Proto handling in the gateway."),
    # --- invocation (SendMessage, GetTask)
    Check("invoke.http", _LIFE, _M, "The advertised URL answers the JSON-RPC POST with HTTP 200",
          "Route the advertised URL to the A2A JSON-RPC handler; it answers HTTP 200 for every JSON-RPC "
          "response.", "FMT-02"),
    Check("invoke.jsonrpc_envelope", _LIFE, _M,
          "The response is JSON-RPC 2.0: application/json, jsonrpc \"2.0\", echoed id, one of result/error",
          "Answer with {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\"|\"error\":…} as application/json.",
          "FMT-02"),
    Check("invoke.version_accepted", _LIFE, _M, "The agent accepts the A2A-Version of the advertised interface",
          "Accept the A2A-Version header for every version the card advertises.", "VER-01"),
    Check("invoke.result_shape", _LIFE, _M,
          "SendMessage returns a Task (id, contextId, status.state) or a Message in the version's shape",
          "Return {\"task\":…} or {\"message\":…} (1.0) or a Task/Message with kind (0.3).", "SEND-01"),
    Check("invoke.dialect", _LIFE, _M, "Enums and shapes match the advertised protocol version",
          "Use TASK_STATE_*/ROLE_* enums in 1.0 and lowercase states with kind in 0.3.", "FMT-01"),
    Check("invoke.task_completed", _LIFE, _M, "The task reaches COMPLETED before the deadline",
          "Check the task's status message: the agent failed, asked for input, or is too slow.", "SEND-03"),
    Check("invoke.expected_text", _LIFE, _M, "The configured expected text appears in an artifact or the history",
          "Check the agent's answer, or the configured expected text."),
    # --- streaming (SendStreamingMessage)
    Check("stream.content_type", _STREAM, _M, "The stream is HTTP 200 text/event-stream",
          "Answer SendStreamingMessage with Content-Type: text/event-stream; don't let a gateway buffer it.",
          "STRM-01"),
    Check("stream.events_parse", _STREAM, _M, "Every SSE event is a JSON-RPC response with the request's id",
          "Send each event as data: {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\":<StreamResponse>}.",
          "STRM-01"),
    Check("stream.first_event", _STREAM, _M, "The first event is the Task (or a single Message)",
          "Start a task stream with the Task object, then send updates.", "STRM-02"),
    Check("stream.consistent_ids", _STREAM, _M, "One taskId and contextId throughout the stream",
          "Keep every event's taskId and contextId equal to the Task's.", "STRM-04"),
    Check("stream.no_regression", _STREAM, _M, "Task states never move backwards",
          "Never emit a status update after a terminal state, nor a state before the current one.", "STRM-03"),
    Check("stream.terminal", _STREAM, _M, "A terminal state arrives before the stream ends",
          "Emit the terminal status update before closing the stream; check gateway idle timeouts.", "STRM-03"),
    Check("stream.closes_after_terminal", _STREAM, _M, "The stream closes after the terminal event",
          "Close the stream right after the terminal status update.", "STRM-03"),
    Check("stream.artifact_chunks", _STREAM, _M, "Artifact chunks are coherent (append only to a known artifact)",
          "Send append:true only for an artifactId already sent, and nothing after lastChunk:true.", "STRM-04"),
    Check("stream.task_completed", _STREAM, _M, "The streamed task ends COMPLETED",
          "Check the task's final status message in the report.", "STRM-03"),
    Check("stream.expected_text", _STREAM, _M, "The configured expected text appears in the streamed artifacts",
          "Check the agent's answer, or the configured expected text."),
)

BY_ID: dict[str, Check] = {c.id: c for c in CHECKS}
assert len(BY_ID) == len(CHECKS), "duplicate check id"


def get(check_id: str) -> Check:
    return BY_ID[check_id]
