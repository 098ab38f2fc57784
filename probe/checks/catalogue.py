"""The catalogue of checks: one entry per check id, defined once.

The CLI, the daemon, the reports and the docs all read this table. A check that runs records a
`CheckResult` (see `probe.results`) that points back here by id.
"""

from __future__ import annotations

from dataclasses import dataclass

from probe import redact
from probe.results import Category, CheckResult, ProbeResult, Severity, Status, StepName, new_check

__all__ = ["ALL_CHECKS", "BY_ID", "CHECKS", "JSONRPC", "SUITE_CHECKS", "Category", "Check", "Rule", "Severity",
           "from_problems", "get", "make_check"]

JSONRPC = ("jsonrpc",)  # `bindings` of a check that only means something on JSON-RPC


@dataclass(frozen=True, slots=True)
class Rule:
    """What one version of the specification says: its level in that version's words, and where."""

    level: Severity
    section: str  # the section of that version's specification.md, e.g. "§3.2.2 SendMessageConfiguration"
    words: str = ""  # the requirement, shortly, as that version states it


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    category: Category
    severity: Severity  # the default level; probe/checks/registry.py gives the level in each version's own text
    title: str
    recommendation: str
    spec_ref: str = ""
    side_effects: bool = False  # starts real agent work (excluded by --safe-only)
    bindings: tuple[str, ...] = ()  # the bindings (registry names) it applies to; () = every binding


_M, _S = Severity.MUST, Severity.SHOULD
_CARD, _IFACE, _LIFE, _STREAM = Category.AGENT_CARD, Category.INTERFACE, Category.LIFECYCLE, Category.STREAMING
_ERR, _SEC, _IOP = Category.ERRORS, Category.SECURITY, Category.INTEROP
_PUSH = Category.PUSH
_W = True  # side effects: the check makes the agent do real work

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
    Check("card.not_modified", _CARD, _S, "A 304 answers only a conditional request and names the stored card",
          "Answer 304 only to If-None-Match / If-Modified-Since that match the current card, and send the card's "
          "current ETag with it (RFC 9110 §15.4.5, RFC 9111 §4.3.4).", "DISC-02"),
    Check("card.last_modified", _CARD, Severity.MAY, "A Last-Modified on the card, if sent, is a valid HTTP-date",
          "Send Last-Modified as an HTTP-date (e.g. Tue, 01 Dec 2026 10:00:00 GMT), or not at all.", "DISC-02"),
    Check("card.protocol_version", _CARD, _S, "The card declares a current protocol version (1.0 or 0.3)",
          "Upgrade the agent to A2A 1.0 (or at least 0.3); 0.1/0.2 cards are obsolete. Declare versions as "
          "Major.Minor (\"1.0\", not \"1.0.0\")."),
    Check("card.required_fields", _CARD, _M, "Required card fields are present, typed and non-empty",
          "Add every required field of the card's protocol version with the right JSON type.", "CARD-01"),
    Check("card.schema", _CARD, _M, "The card parses as the official definitions do (1.0 proto, 0.3 JSON schema)",
          "Emit the card as the version's definitions type it (1.0: ProtoJSON of the AgentCard proto, one member "
          "per one-of, required fields set and required arrays non-empty; 0.3: the JSON schema's types); the "
          "official clients refuse it otherwise.", "CARD-01"),
    Check("card.interfaces", _CARD, _M,
          "Every advertised interface has a url, a protocolBinding and a Major.Minor protocolVersion",
          "Give each supportedInterfaces entry url, protocolBinding (JSONRPC, GRPC, HTTP+JSON or a custom "
          "binding's URI) and protocolVersion like \"1.0\" (0.3: url and preferredTransport).", "CARD-02"),
    Check("card.skills", _CARD, _M, "Every skill has id, name, description and tags",
          "Give each skill a unique id, a name, a description and a non-empty tags list.", "CARD-01"),
    Check("card.capabilities", _CARD, _M, "Capability flags are booleans",
          "Use JSON true/false for capabilities.streaming, pushNotifications and extendedAgentCard.", "CARD-01"),
    Check("card.security", _CARD, _M, "Every security requirement names a declared security scheme",
          "Declare each scheme named in securityRequirements (or 0.3 security) under securitySchemes.", "CARD-01"),
    Check("card.https", _CARD, _S, "Advertised interface URLs use https outside loopback",
          "Serve production interfaces over https.", "CARD-05"),
    Check("card.security_schemes", _CARD, _M,
          "Security schemes are complete: oauth2 flows carry their URLs and scopes, apiKey its name and location",
          "Give oauth2 flows tokenUrl (and authorizationUrl where the flow needs it) and scopes, apiKey schemes a "
          "name and a location (header, query or cookie), http schemes a scheme, OIDC an openIdConnectUrl.",
          "CARD-01"),
    Check("card.signature", _CARD, _M,
          "The card's signature verifies under the trusted key it names (JWS over the RFC 8785 canonical card)",
          "Sign the card as served (1.0 §8.4.1: the proto's fields, required empties kept, signatures excluded, "
          "RFC 8785); if the key changed under the same kid, update the probe's trusted JWKS.", "§8.4"),
    Check("card.signature_trusted", _CARD, _S,
          "The card is signed under a key the operator trusts (when a trusted JWKS is configured)",
          "Sign the card with a key in the probe's trusted JWKS and an asymmetric algorithm (ES256, RS256, "
          "EdDSA, ...); if the keys rotated, add the new public key to the trusted JWKS.", "§8.4"),
    Check("card.extended", _CARD, _S,
          "The extended Agent Card the card declares is served to an authenticated client",
          "Serve GetExtendedAgentCard (0.3: agent/getAuthenticatedExtendedCard) to authenticated callers when "
          "the card declares capabilities.extendedAgentCard (0.3: supportsAuthenticatedExtendedCard).", "XCARD-01"),
    Check("card.public", _CARD, _S, "The card is readable without credentials",
          "Serve the public Agent Card without authentication; put sensitive details in the extended card.",
          "DISC-01"),
    # --- the advertised interface, compared with where the card was found
    Check("interface.selected", _IFACE, _M, "The card advertises an interface the probe can call",
          "Advertise a JSONRPC interface with protocolVersion 1.0 or 0.3.", "CARD-03"),
    Check("interface.no_path_repeat", _IFACE, _S, "The advertised URL does not repeat the card's path prefix",
          "The gateway's base-URL setting should hold only scheme and host; it must not include the route prefix."),
    Check("interface.routable_host", _IFACE, _S,
          "The advertised host is not in-cluster, loopback, unspecified or private behind a public card",
          "Set the agent's public base URL (for example kagent's controller.a2aBaseUrl) to the address "
          "clients use."),
    Check("interface.grpc_url", _IFACE, _S, "A gRPC interface URL names its scheme (https:// for TLS, http:// for "
          "plaintext)",
          "Advertise gRPC interfaces as https://host:port (or http:// for plaintext); a bare host:port leaves the "
          "client to guess whether to use TLS.", "CARD-02", bindings=("grpc",)),
    Check("interface.scheme", _IFACE, _S, "An https card does not advertise an http interface",
          "Advertise the https URL clients use; check X-Forwarded-Proto handling in the gateway."),
    Check("interface.no_credentials", _IFACE, _S, "The advertised URL carries no credentials (user:password@)",
          "Remove the userinfo from the advertised URL: the card is public, and clients authenticate with the "
          "card's security schemes (RFC 3986 §3.2.1 deprecates passwords in URLs)."),
    # --- invocation (SendMessage, GetTask)
    Check("invoke.transport", _LIFE, _M,
          "The advertised URL answers with the status its binding uses (JSON-RPC: HTTP 200; HTTP+JSON: 2xx or an "
          "A2A error status; gRPC: OK or an A2A error status)",
          "Route the advertised URL to the A2A handler of the binding the card names; a JSON-RPC endpoint answers "
          "HTTP 200 for every JSON-RPC response.", "FMT-02", side_effects=_W),
    Check("invoke.framing", _LIFE, _M,
          "The response is framed as its binding says: a JSON-RPC 2.0 envelope (jsonrpc \"2.0\", echoed id, one of "
          "result/error), an HTTP+JSON ProtoJSON body, or a gRPC message",
          "Answer JSON-RPC with {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\"|\"error\":…}; HTTP+JSON "
          "with the bare ProtoJSON object.",
          "FMT-02", side_effects=_W),
    Check("invoke.content_type", _LIFE, _S,
          "The answer's Content-Type is its binding's JSON media type (JSON-RPC: application/json; HTTP+JSON: "
          "application/a2a+json, or application/json as 1.0.0 and 0.3 name it)",
          "Answer JSON-RPC with Content-Type: application/json and HTTP+JSON with application/a2a+json (1.0.1; "
          "application/json in 1.0.0 and 0.3); a gateway that rewrites it to text/plain or text/html hides the "
          "answer from strict clients.", "FMT-02", side_effects=_W),
    Check("invoke.version_accepted", _LIFE, _M, "The agent accepts the A2A-Version of the advertised interface",
          "Accept the A2A-Version header for every version the card advertises.", "VER-01", side_effects=_W),
    Check("invoke.result_shape", _LIFE, _M,
          "SendMessage returns a Task (id, contextId, status.state) or a Message in the version's shape",
          "Return {\"task\":…} or {\"message\":…} (1.0) or a Task/Message with kind (0.3).", "SEND-01",
          side_effects=_W),
    Check("invoke.dialect", _LIFE, _M, "Enums and shapes match the advertised protocol version",
          "Use TASK_STATE_*/ROLE_* enums in 1.0 and lowercase states with kind in 0.3.", "FMT-01", side_effects=_W),
    Check("invoke.schema", _LIFE, _M,
          "The SendMessage result (and every GetTask answer) is valid against the version's official definitions",
          "Emit results the official clients can parse: field names and JSON types of the proto (1.0) or the 0.3 "
          "schema, enum names the version defines, RFC 3339 timestamps with a zone, valid base64.", "FMT-01",
          side_effects=_W),
    Check("invoke.required_fields", _LIFE, _M,
          "The answers carry every field the version's definitions mark REQUIRED (SendMessage, GetTask, stream)",
          "Set every REQUIRED field of the proto (messageId, role and parts of a Message, artifactId and parts of an "
          "Artifact, one content member of each Part, taskId/contextId/status of the update events); a required "
          "array holds at least one element.", "FMT-01", side_effects=_W),
    Check("invoke.timestamps_utc", _LIFE, _M,
          "Timestamps are UTC with 'Z', not another offset (SendMessage, GetTask and stream answers)",
          "Serialise timestamps as ProtoJSON does, in UTC with a 'Z' suffix (2025-10-28T10:30:00.000Z), not "
          "+00:00 or a local offset (Python's datetime.isoformat() writes +00:00: use protobuf's Timestamp, or "
          "strftime('%Y-%m-%dT%H:%M:%S.%fZ') on a UTC time).", "FMT-01", side_effects=_W),
    Check("invoke.camel_case", _LIFE, _M, "JSON field names are camelCase, not the proto's snake_case",
          "Serialise with ProtoJSON (lowerCamelCase names: contextId, not context_id).", "FMT-01", side_effects=_W),
    Check("invoke.blocking", _LIFE, _M,
          "A blocking SendMessage returns the task only in a terminal or interrupted state",
          "Without returnImmediately (1.0) / with blocking true (0.3), wait until the task is terminal or "
          "interrupted before answering SendMessage; clients that do not poll see an unfinished task.", "SEND-03",
          side_effects=_W),
    Check("invoke.polled_task", _LIFE, _M,
          "Every GetTask answer while polling is the task SendMessage created (its id and contextId)",
          "Answer GetTask with the task its id names, in the context SendMessage gave it: a client polling a task "
          "takes whatever comes back for that task.", "TASK-01", side_effects=_W),
    Check("invoke.no_error", _LIFE, _M, "SendMessage (and the GetTask polls) get a result, not a JSON-RPC error",
          "Answer a valid SendMessage with a Task or a Message; the JSON-RPC error in the report says what the "
          "agent refused.", "SEND-01", side_effects=_W),
    Check("invoke.task_completed", _LIFE, _M, "The task reaches COMPLETED before the deadline",
          "Check the task's status message: the agent failed, asked for input, or is too slow.", "SEND-03",
          side_effects=_W),
    Check("invoke.expected_text", _LIFE, _M, "The configured expected text appears in an artifact or the history",
          "Check the agent's answer, or the configured expected text.", side_effects=_W),
    # --- streaming (SendStreamingMessage)
    Check("stream.content_type", _STREAM, _M, "The stream is a stream: HTTP 200 text/event-stream (gRPC: a "
          "server stream)",
          "Answer SendStreamingMessage with Content-Type: text/event-stream; don't let a gateway buffer it.",
          "STRM-01", side_effects=_W),
    Check("stream.events_parse", _STREAM, _M,
          "Every stream event parses: a JSON-RPC response with the request's id (HTTP+JSON: a bare StreamResponse)",
          "Send each event as data: {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\":<StreamResponse>} "
          "(HTTP+JSON: data: <StreamResponse>).",
          "STRM-01", side_effects=_W),
    Check("stream.schema", _STREAM, _M, "Every event is valid against the version's official definitions",
          "Emit StreamResponse events (1.0) / Task, Message and update events (0.3) the official clients can parse.",
          "FMT-01", side_effects=_W),
    Check("stream.first_event", _STREAM, _M, "The first event is the Task (or a single Message)",
          "Start a task stream with the Task object, then send updates.", "STRM-02", side_effects=_W),
    Check("stream.consistent_ids", _STREAM, _M, "One taskId and contextId throughout the stream",
          "Keep every event's taskId and contextId equal to the Task's.", "STRM-04", side_effects=_W),
    Check("stream.no_regression", _STREAM, _M, "Task states never move backwards",
          "Never emit a status update after a terminal state, nor a state before the current one.", "STRM-03",
          side_effects=_W),
    Check("stream.terminal", _STREAM, _M, "A terminal state arrives before the stream ends",
          "Emit the terminal status update before closing the stream; check gateway idle timeouts.", "STRM-03",
          side_effects=_W),
    Check("stream.closes_after_terminal", _STREAM, _M, "The stream closes after the terminal event",
          "Close the stream right after the terminal status update.", "STRM-03", side_effects=_W),
    Check("stream.artifact_chunks", _STREAM, _M, "Artifact chunks are coherent (append only to a known artifact)",
          "Send append:true only for an artifactId already sent, and nothing after lastChunk:true.", "STRM-04",
          side_effects=_W),
    Check("stream.no_error", _STREAM, _M, "The stream carries events, not a JSON-RPC error",
          "Answer a valid SendStreamingMessage with its events; the error in the report says what the agent refused.",
          "STRM-01", side_effects=_W),
    Check("stream.task_completed", _STREAM, _M, "The streamed task ends COMPLETED",
          "Check the task's final status message in the report.", "STRM-03", side_effects=_W),
    Check("stream.expected_text", _STREAM, _M, "The configured expected text appears in the streamed artifacts",
          "Check the agent's answer, or the configured expected text.", side_effects=_W),
)

SUITE_CHECKS: tuple[Check, ...] = (
    # --- lifecycle, beyond the basic send of the invoke step
    Check("lifecycle.get_task", _LIFE, _M, "GetTask returns the task with its id and current state",
          "Implement GetTask (tasks/get in 0.3) for every task the agent created.", "TASK-01", side_effects=_W),
    Check("lifecycle.return_immediately", _LIFE, _M,
          "returnImmediately (0.3: blocking false) returns the task before it is terminal",
          "Return the Task right after creating it when the client asks not to block; let it poll or subscribe.",
          "SEND-03", side_effects=_W),
    Check("lifecycle.history_length", _LIFE, _M, "historyLength 0 returns no history, 1 at most one message",
          "Honour historyLength: 0 means no history; n means at most the n most recent messages.", "TASK-02",
          side_effects=_W),
    Check("lifecycle.history_omitted", _LIFE, _S,
          "historyLength 0 omits the history field (GetTask and SendMessage answers)",
          "Leave the history field out of a task asked for with historyLength 0, as ProtoJSON leaves an empty list "
          "out; do not send \"history\": [].", "TASK-02"),
    Check("lifecycle.cancel", _LIFE, _M, "CancelTask on a running task yields CANCELED",
          "Implement CancelTask for running tasks and report the task as CANCELED.", "TASK-04", side_effects=_W),
    Check("lifecycle.input_required", _LIFE, _M,
          "An INPUT_REQUIRED task continues with the same task id to completion",
          "Accept a follow-up message carrying the interrupted task's taskId and continue that task.", "SEND-08",
          side_effects=_W),
    Check("lifecycle.message_to_terminal", _LIFE, _M, "A message to a terminal task is rejected",
          "Reject messages to completed tasks with UnsupportedOperationError (-32004); follow-ups start a new task "
          "in the same contextId.", "SEND-04", side_effects=_W),
    Check("lifecycle.unknown_task_message", _LIFE, _M, "A message naming an unknown taskId is rejected",
          "Answer a message whose taskId does not exist with TaskNotFoundError (-32001).", "SEND-05"),
    Check("lifecycle.completed_artifact", _LIFE, _S, "A COMPLETED task carries its result as an artifact",
          "Return the task's output as an artifact before marking it COMPLETED (a status message alone is not a "
          "result).", "SEND-03"),
    Check("lifecycle.context_continuity", _LIFE, _M, "A follow-up in the same contextId keeps that contextId",
          "Keep the client's contextId on tasks created for messages that carry it.", "SEND-06", side_effects=_W),
    Check("lifecycle.list_tasks", _LIFE, _M,
          "ListTasks by contextId returns that context's tasks, newest first, without artifacts unless asked",
          "Implement ListTasks: filter by contextId and status, sort by status timestamp (most recent first), omit "
          "artifacts unless includeArtifacts is true, honour historyLength, and always send nextPageToken (\"\" on "
          "the last page).", "TASK-03", side_effects=_W),
    Check("lifecycle.list_pagination", _LIFE, _M,
          "ListTasks pages by pageSize and pageToken, ending with an empty nextPageToken",
          "Return at most pageSize tasks and a nextPageToken cursor that yields the next page; send \"\" as "
          "nextPageToken on the final page.", "TASK-03", side_effects=_W),
    Check("lifecycle.history_on_send", _LIFE, _M,
          "SendMessage's configuration.historyLength limits the history of the returned task",
          "Honour SendMessageConfiguration.historyLength: return at most that many of the most recent messages "
          "(none for 0).", "TASK-02", side_effects=_W),
    Check("lifecycle.history_kept", _LIFE, Severity.MAY, "A task's history holds the messages the client sent",
          "Persist the messages of a task in its history so clients can read them back with GetTask.", "TASK-02",
          side_effects=_W),
    Check("lifecycle.history_order", _LIFE, _S, "A task's history holds the messages as sent, in the order sent",
          "Append each message to the task's history as received (same messageId, role and parts), oldest first.",
          "TASK-02", side_effects=_W),
    Check("lifecycle.unique_task_ids", _LIFE, _M, "Every new task gets a task id of its own",
          "Generate a fresh, unique id (e.g. a UUID) for every task the agent creates; never reuse one.",
          "SEND-02", side_effects=_W),
    Check("lifecycle.context_inferred", _LIFE, _M,
          "A follow-up naming only the taskId continues that task in the task's contextId",
          "When a message names a taskId but no contextId, take the contextId from that task.", "SEND-06",
          side_effects=_W),
    Check("lifecycle.context_mismatch_rejected", _LIFE, _M,
          "A follow-up whose contextId differs from its task's contextId is rejected",
          "Reject a message whose contextId is not the contextId of the task it names (e.g. InvalidParamsError "
          "-32602); never move a task to another context.", "SEND-06", side_effects=_W),
    Check("lifecycle.schema", _LIFE, _M,
          "Every Task and result the suite reads back (GetTask, CancelTask, follow-ups) is valid for the version's "
          "official definitions: camelCase names, RFC 3339 timestamps with a zone, enum names",
          "Emit the version's official shapes everywhere, not only on the first send (see the field and value named): "
          "the official clients reject what their definitions do not allow.", "FMT-01"),
    Check("lifecycle.extensions_echoed", _LIFE, _S,
          "An answer names the required extensions the request activated in its A2A-Extensions header",
          "Echo the extensions you activated for a request in the response's A2A-Extensions header (0.3: "
          "X-A2A-Extensions), so clients know which ones applied.", "EXT-01", side_effects=_W,
          bindings=("jsonrpc", "http_json")),
    Check("lifecycle.unknown_fields_ignored", _LIFE, _S, "A request carrying fields the agent does not know is "
          "processed, the unknown fields ignored",
          "Parse requests leniently: ignore unrecognized fields (protobuf: ignore_unknown_fields) instead of "
          "rejecting the request, so newer clients keep working.", "FMT-01", side_effects=_W,
          bindings=("jsonrpc", "http_json")),
    # --- streaming, beyond the stream step
    Check("streaming.subscribe", _STREAM, _M,
          "SubscribeToTask on a running task starts with the Task and ends at its terminal state",
          "Implement SubscribeToTask (tasks/resubscribe in 0.3): send the current Task first, then live updates, "
          "and close at the terminal state.", "SUB-01", side_effects=_W),
    Check("streaming.subscribe_terminal", _STREAM, _M, "SubscribeToTask on a terminal task is rejected",
          "Answer SubscribeToTask on a terminal task with UnsupportedOperationError (-32004).", "SUB-01",
          side_effects=_W),
    Check("streaming.subscribe_unknown", _STREAM, _M, "SubscribeToTask for an unknown task id gets TaskNotFoundError",
          "Answer SubscribeToTask (0.3 tasks/resubscribe) naming a task that does not exist with -32001 "
          "(TaskNotFoundError), before opening a stream.", "SUB-01"),
    Check("streaming.not_declared", _STREAM, _M,
          "An agent without capabilities.streaming refuses streaming with UnsupportedOperationError",
          "Either declare capabilities.streaming: true, or answer SendStreamingMessage with -32004.", "STRM-05"),
    Check("streaming.multi_stream", _STREAM, _M,
          "Streams of one task all get its events in the same order to the terminal one; closing one ends neither "
          "the others nor the task",
          "Broadcast every event of a task to all of its open streams in the same order; when one stream closes "
          "(even the SendStreamingMessage that started the task) keep the task and the other streams running. "
          "Refusing a further stream is allowed: serving several is optional.", "SUB-01", side_effects=_W),
    # --- error handling
    Check("errors.parse_error", _ERR, _M, "Invalid JSON gets JSON-RPC -32700",
          "Answer a body that is not JSON with a JSON-RPC error -32700 (Parse error) and id null.", "ERR-01",
          bindings=JSONRPC),
    Check("errors.invalid_request", _ERR, _M, "A malformed JSON-RPC request gets -32600",
          "Answer a request without jsonrpc \"2.0\" or method with -32600 (Invalid Request).", "ERR-01",
          bindings=JSONRPC),
    Check("errors.unknown_method", _ERR, _M, "An unknown method gets -32601",
          "Answer unknown methods with -32601 (Method not found).", "ERR-01", bindings=JSONRPC),
    Check("errors.invalid_params", _ERR, _M, "SendMessage without a valid message gets -32602",
          "Validate params: a message needs messageId, role and parts; answer -32602 (Invalid params).", "SEND-07"),
    Check("errors.task_not_found", _ERR, _M, "GetTask with an unknown id gets TaskNotFoundError -32001",
          "Answer GetTask for an unknown id with -32001 (TaskNotFoundError).", "TASK-01"),
    Check("errors.cancel_unknown", _ERR, _M, "CancelTask with an unknown id gets TaskNotFoundError -32001",
          "Answer CancelTask for a task that does not exist with -32001 (TaskNotFoundError).", "TASK-04"),
    Check("errors.not_cancelable", _ERR, _M, "CancelTask on a completed task gets TaskNotCancelableError -32002",
          "Answer CancelTask on a terminal task with -32002 (TaskNotCancelableError).", "TASK-04", side_effects=_W),
    Check("errors.version_not_supported", _ERR, _M, "A2A-Version 99.0 gets VersionNotSupportedError -32009",
          "Reject protocol versions you don't implement with -32009 (VersionNotSupportedError).", "VER-01"),
    Check("errors.patch_version_ignored", _ERR, _M,
          "A2A-Version 1.0.1 is read as 1.0 (patch numbers are not negotiated)",
          "Compare only Major.Minor of the A2A-Version header: a patch number (1.0.1) never makes a version "
          "unsupported.", "VER-01"),
    Check("errors.push_not_supported", _ERR, _M,
          "Push-notification methods get -32003 when pushNotifications is not declared",
          "Answer push-notification config methods with -32003 when capabilities.pushNotifications is false.",
          "PUSH-01"),
    Check("errors.extended_card_not_declared", _ERR, _M,
          "GetExtendedAgentCard is refused when the card does not declare an extended card",
          "Answer GetExtendedAgentCard with UnsupportedOperationError (-32004) unless capabilities.extendedAgentCard "
          "is true.", "XCARD-01"),
    Check("errors.content_type_not_supported", _ERR, _S,
          "A message part of a media type the card does not accept gets ContentTypeNotSupportedError -32005",
          "Check every part's media type against the accepted input modes (defaultInputModes, the skill's "
          "inputModes) and answer ContentTypeNotSupportedError (-32005) for one you do not accept.", "ERR-01",
          side_effects=_W),
    Check("errors.extension_required", _ERR, _M,
          "A request that does not activate an extension the card declares required gets "
          "ExtensionSupportRequiredError -32008",
          "Answer requests whose A2A-Extensions (0.3: X-A2A-Extensions) header does not list a required extension "
          "with ExtensionSupportRequiredError (-32008; 0.3: an error).", "EXT-01", side_effects=_W),
    Check("errors.missing_version_is_0_3", _ERR, _M,
          "A request without A2A-Version is read as 0.3, not with 1.0 semantics",
          "Treat a request without the A2A-Version header as 0.3: serve it with 0.3 semantics where the interface "
          "speaks 0.3, else answer VersionNotSupportedError (-32009).", "VER-02"),
    Check("errors.error_info", _ERR, _S, "1.0 A2A errors carry an ErrorInfo with reason and domain a2a-protocol.org",
          "Put [{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"TASK_NOT_FOUND\","
          "\"domain\":\"a2a-protocol.org\"}] in error.data.", "ERR-02"),
    Check("errors.details_typed", _ERR, _M, "Every object in a 1.0 error's details carries an @type",
          "Send error details (JSON-RPC error.data, HTTP+JSON error.details) as an array of ProtoJSON Any objects, "
          "each with an \"@type\" such as \"type.googleapis.com/google.rpc.ErrorInfo\"; put free-form context in "
          "ErrorInfo.metadata.", "ERR-02", bindings=("jsonrpc", "http_json")),
    Check("errors.error_status", _ERR, _M,
          "A2A errors over HTTP+JSON and gRPC come with the status their version maps them to",
          "Answer each A2A error with the HTTP status (HTTP+JSON) or gRPC status of the spec's mapping table "
          "(1.0 §5.4; e.g. TaskNotFoundError: 404 / NOT_FOUND), not a generic 400, 500 or UNKNOWN.", "ERR-02",
          bindings=("http_json", "grpc")),
    Check("errors.response_id", _ERR, _M,
          "Every JSON-RPC error answer has an id member: null for an unparsable body, else the request's id",
          "Always write the response's \"id\": null when the request's id could not be read (Parse error, and "
          "Invalid Request where the id is unreadable), else the request's own id, on error answers too. A "
          "serializer that leaves out null members (Jackson NON_ABSENT/NON_NULL, Gson without serializeNulls, "
          "pydantic exclude_none) drops a null id with its name.", "FMT-02", bindings=JSONRPC),
    Check("errors.no_server_errors", _ERR, _M, "No request of the suite got a 5xx or a dropped connection",
          "Never crash on a bad request: answer with the JSON-RPC error, HTTP 200.", "ERR-01"),
    # --- security
    Check("security.credentials_match", _SEC, _S,
          "The configured credentials fit the security schemes and requirements the card declares",
          "Configure credentials for one of the card's security requirements (the message names the auth "
          "settings to add), or declare in the card the scheme the agent actually enforces."),
    Check("tls.cert_expiry", _SEC, _S, "No TLS certificate the agent presents expires within the warning window",
          "Renew the certificate before it expires (and automate renewal); the window is tls.expiry_window."),
    Check("tls.verified", _SEC, _S, "The agent's TLS certificate is verified (insecure_skip_verify is off)",
          "Give the agent a certificate that verifies, or trust its CA with tls.ca_bundle, and turn "
          "insecure_skip_verify off."),
    Check("security.unauthenticated_rejected", _SEC, _M,
          "With security declared, a call without credentials is rejected",
          "Authenticate every request to the interface; answer a request without credentials with 401 (or 403).",
          "AUTH-01"),
    Check("security.extended_card_auth", _SEC, _M,
          "The extended Agent Card the card declares is refused to a caller without credentials",
          "Authenticate GetExtendedAgentCard (0.3: agent/getAuthenticatedExtendedCard; 0.2: GET "
          "agent/authenticatedExtendedCard) with the card's security schemes; answer a call without credentials "
          "with HTTP 401 (and WWW-Authenticate) or 403.", "XCARD-01"),
    Check("security.challenge", _SEC, _S, "A 401 carries a WWW-Authenticate challenge",
          "Send WWW-Authenticate with 401 responses so clients know which scheme to use.", "AUTH-02"),
    Check("security.scoped_access", _SEC, _M,
          "Another caller can neither get, cancel, subscribe to or list a caller's task nor learn that it exists",
          "Check authorization on every operation and scope tasks to their caller (1.0 §13.1): answer another "
          "caller's task id exactly as an id that does not exist (TaskNotFoundError: HTTP 404, gRPC NOT_FOUND), "
          "never 403 / PERMISSION_DENIED, which tells it the task exists (§3.3.2), and leave it out of ListTasks.",
          "AUTH-SCOPE-001..003 (1.0 §13.1, §3.3.2)", side_effects=_W),
    # --- interop between two agents
    Check("interop.common_interface", _IOP, _M, "The two agents share a binding and protocol version",
          "Advertise at least one interface (binding and version) both agents speak, e.g. JSONRPC 1.0."),
    Check("interop.parse_each_other", _IOP, _M,
          "On the interface both agents speak, each one's answers are valid for the other's client",
          "Make both agents emit that version's official shapes (see invoke.schema of each): a peer's client "
          "rejects what its definitions do not allow.", side_effects=_W),
    Check("interop.both_callable", _IOP, _M, "Each agent's advertised interface answers a basic send",
          "Make both advertised interfaces reachable and able to complete a task.", side_effects=_W),
    Check("interop.no_cross_talk", _IOP, _M,
          "Concurrent tasks on both agents stay separate: distinct ids, each answer about its own message",
          "Keep task state per task and context; never mix messages between tasks.", side_effects=_W),
    Check("interop.delegation", _IOP, _S, "A delegation prompt to agent A produces agent B's answer",
          "Check agent A's client configuration for agent B (URL, version, credentials).", side_effects=_W),
    Check("interop.bindings_agree", _IOP, _M,
          "Every advertised interface of the agent gives the same verdict, terminal state, error names (GetTask of "
          "an unknown id, CancelTask of a finished task) and artifacts",
          "Route every advertised binding to the same agent: one binding passing while another fails means a "
          "gateway route or a binding handler is broken.", side_effects=_W),
    Check("interop.bindings_same_auth", _IOP, _M,
          "Every advertised interface enforces the security the card declares alike: a call without credentials "
          "refused on one is refused on each, the configured credentials accepted on one are accepted on each",
          "Put the same authentication in front of every binding (gateway route, middleware, gRPC interceptor): an "
          "interface that processes calls without credentials bypasses the schemes the card declares.",
          side_effects=_W),
    # --- push notifications (only where the card declares capabilities.pushNotifications)
    Check("push.config_create", _PUSH, _M,
          "CreateTaskPushNotificationConfig (0.3 tasks/pushNotificationConfig/set) stores the config and returns it "
          "with an id", "Implement the create method: store url, token and authentication for the task and return the "
          "config with a server-assigned id.", "PUSH-02 (1.0 §3.1.7, 0.3 §7.5)", side_effects=_W),
    Check("push.config_get", _PUSH, _M, "GetTaskPushNotificationConfig returns the created config",
          "Return the stored config by task id and config id.", "PUSH-02 (1.0 §3.1.8, 0.3 §7.6)", side_effects=_W),
    Check("push.config_list", _PUSH, _M, "ListTaskPushNotificationConfigs includes the created config",
          "Return every active config of the task (1.0: {configs: [...]}; 0.3: an array).",
          "PUSH-02 (1.0 §3.1.9, 0.3 §7.7)", side_effects=_W),
    Check("push.config_delete", _PUSH, _M,
          "DeleteTaskPushNotificationConfig removes the config, is idempotent, and a later get fails",
          "Delete the config; answer a repeated delete with success; fail a get of a deleted config.",
          "PUSH-02 (1.0 §3.1.10, 0.3 §7.8)", side_effects=_W),
    Check("push.unknown_task", _PUSH, _M, "A push config for an unknown task gets TaskNotFoundError -32001",
          "Answer push-config methods naming a task that does not exist with -32001 (TaskNotFoundError).",
          "PUSH-02 (1.0 §3.1.7)"),
    Check("push.delivered", _PUSH, _M,
          "A task sent with a push config delivers its updates to the receiver through the terminal state",
          "Deliver a notification for each status change through the terminal one. If nothing arrives, the agent "
          "could not reach the receiver URL: check egress network policy, the probe's public push URL, TLS trust, "
          "and whether the agent refuses private webhook URLs by policy.", "PUSH-03 (1.0 §4.3.3, 0.3 §9.5)",
          side_effects=_W),
    Check("push.in_order", _PUSH, _M, "Delivered states never move backwards and nothing follows the terminal one",
          "Queue a task's notifications and deliver them one at a time, in the order the states changed.",
          "PUSH-03 (1.0 §4.3.3)", side_effects=_W),
    Check("push.names_task", _PUSH, _M, "Every delivery names the task the config belongs to",
          "Put the task's id in every notification (task.id, statusUpdate.taskId).", "PUSH-03 (1.0 §4.3.3)",
          side_effects=_W),
    Check("push.authenticated", _PUSH, _M,
          "Every delivery carries Authorization: <scheme> <credentials> from the config's authentication",
          "Send the config's authentication as the Authorization header on every notification; the token alone "
          "(X-A2A-Notification-Token) does not authenticate the agent.", "PUSH-03 (1.0 §4.3.3, §13.2)",
          side_effects=_W),
    Check("push.payload", _PUSH, _M,
          "Every delivery is strict JSON in the version's payload shape (1.0: a StreamResponse)",
          "POST a StreamResponse ({\"statusUpdate\": …}, {\"task\": …}) as application/a2a+json (0.3: the Task or "
          "the event, as application/json).", "PUSH-03 (1.0 §4.3.3)", side_effects=_W),
)

PROBE_CHECKS: tuple[Check, ...] = (
    Check("probe.completed", Category.PROBE, _M, "The probe completed its run",
          "A probe error or the probe's own configuration stopped the run; this is not a verdict on the agent. "
          "Fix the configuration, or report the probe bug with the log line."),
)

ALL_CHECKS = CHECKS + SUITE_CHECKS + PROBE_CHECKS
BY_ID: dict[str, Check] = {c.id: c for c in ALL_CHECKS}
assert len(BY_ID) == len(ALL_CHECKS), "duplicate check id"


def get(check_id: str) -> Check:
    return BY_ID[check_id]


def from_problems(check_id: str, problems: list[str], ok_message: str = "", *, step: StepName | None = None,
                  listed: int = 8) -> CheckResult:
    """PASS when there are no problems, else FAIL listing them, so a person can fix them all in one pass."""
    if not problems:
        return make_check(check_id, Status.PASS, ok_message, step=step)
    more = f" … (+{len(problems) - listed} more)" if len(problems) > listed else ""
    return make_check(check_id, Status.FAIL, "; ".join(problems[:listed]) + more, step=step)


# the checks that compare the interfaces: judged across every run (engine.combine), never per interface
ACROSS_INTERFACES = ("interop.bindings_agree", "interop.bindings_same_auth")


def make_check(check_id: str, status: Status, message: str = "", *, step: StepName | None = None,
               recommendation: str | None = None, duration_ms: float = 0.0) -> CheckResult:
    """A result for a catalogued check; the catalogue supplies category, severity and the default advice."""
    spec = get(check_id)
    rec = "" if status is Status.PASS else (recommendation or spec.recommendation)
    # every field comes typed from the catalogue and our own enums: skip re-validation on the hot path
    return new_check(spec.id, spec.category, spec.severity, status, message or spec.title, rec, step, duration_ms)


# The engine records the same check results probe after probe ("card.public: read without credentials", an agent's
# "HTTP 200 from <its card URL>"): each is built and scrubbed once and shared by every result that records it.
# Shared results are never mutated (grading, the verdict's carrier and interface tagging copy them); only equal
# values share an object, so no result ever carries text another result did not record itself. The table admits
# new values while it has room and never starts over: the constant ones come first and stay; past the bound (a
# large fleet's per-agent messages) a result gets a check of its own, scrubbed by the walk, as without the table.
# A newly registered secret un-shares every entry: each is replaced by a newly scrubbed one on its next use.
MAX_SHARED_CHECKS = 4_096
_SHARED: dict[tuple[str, Status, str, StepName | None, str | None], CheckResult] = {}


def shared_check(check_id: str, status: Status, message: str = "", *, step: StepName | None = None,
                 recommendation: str | None = None) -> CheckResult:
    """`make_check`, as one shared, already scrubbed object per distinct value (see probe.redact.share)."""
    key = (check_id, status, message, step, recommendation)
    c = _SHARED.get(key)
    if c is not None and redact.is_shared(c):
        return c
    fresh = make_check(check_id, status, message, step=step, recommendation=recommendation)
    if c is None and len(_SHARED) >= MAX_SHARED_CHECKS:
        return fresh  # not shared: the result's own
    _SHARED[key] = redact.share(fresh)
    return fresh


def record_finding(result: ProbeResult, check_id: str, failure: str | None, *, seen: bool, passed: str,
                   none_seen: str) -> None:
    """A run-wide finding over the answers seen (invoke.timestamps_utc, invoke.required_fields), recorded in place
    of an earlier record of it (the suite's own calls add to the engine's): failed with `failure`, else passed when
    answers were seen, skipped when none was."""
    c = (make_check(check_id, Status.FAIL, failure, step=StepName.INVOKE) if failure is not None
         else shared_check(check_id, Status.PASS if seen else Status.SKIP, passed if seen else none_seen,
                           step=StepName.INVOKE))
    result.checks = [x for x in result.checks if x.id != check_id] + [c]
