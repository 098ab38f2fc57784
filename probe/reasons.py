"""The one bounded list of failure reasons.

Every failed probe carries exactly one primary reason from this enum. Metrics use the values
as label values (so the list must stay small and fixed), logs and reports print them, and the
docs are generated from the table below.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    # discovery
    CARD_UNREACHABLE = "card_unreachable"
    CARD_HTTP_STATUS = "card_http_status"
    CARD_INVALID = "card_invalid"
    NO_USABLE_INTERFACE = "no_usable_interface"
    CARD_UNSIGNED = "card_unsigned"
    CARD_SIGNATURE_INVALID = "card_signature_invalid"
    CARD_SIGNATURE_UNTRUSTED = "card_signature_untrusted"
    # the advertised URL, diagnosed when invocation fails
    INTERFACE_PATH_DOUBLED = "interface_path_doubled"
    INTERFACE_URL_UNROUTABLE = "interface_url_unroutable"
    # invocation
    INVOKE_UNREACHABLE = "invoke_unreachable"
    INVOKE_PROTOCOL_ERROR = "invoke_protocol_error"
    INVOKE_TIMEOUT = "invoke_timeout"
    INVOKE_ROUTE_NOT_FOUND = "invoke_route_not_found"
    INVOKE_UNEXPECTED_STATUS = "invoke_unexpected_status"
    INVOKE_AUTH = "invoke_auth"
    INVOKE_NOT_A2A = "invoke_not_a2a"
    INVOKE_A2A_ERROR = "invoke_a2a_error"
    INVOKE_VERSION_UNSUPPORTED = "invoke_version_unsupported"
    INVOKE_LEGACY_PROTOCOL = "invoke_legacy_protocol"
    INVOKE_BAD_RESULT = "invoke_bad_result"
    INVOKE_NOT_BLOCKING = "invoke_not_blocking"
    # task outcome
    # a gateway or proxy in front of the agent failed or changed the call itself; not the agent's answer
    INVOKE_GATEWAY_ERROR = "invoke_gateway_error"
    # the agent or a gateway refused the request as over a rate limit (HTTP 429, gRPC RESOURCE_EXHAUSTED)
    RATE_LIMITED = "rate_limited"
    TASK_FAILED = "task_failed"
    TASK_TIMEOUT = "task_timeout"
    EXPECTED_TEXT_MISSING = "expected_text_missing"
    # streaming
    STREAM_NOT_A_STREAM = "stream_not_a_stream"
    STREAM_NO_TERMINAL = "stream_no_terminal"
    STREAM_STATE_REGRESSION = "stream_state_regression"
    STREAM_PROTOCOL_VIOLATION = "stream_protocol_violation"
    # push notifications (binding-neutral: the same on JSON-RPC, REST and gRPC)
    PUSH_NOT_SUPPORTED = "push_not_supported"
    PUSH_CONFIG_FAILED = "push_config_failed"
    PUSH_NOT_DELIVERED = "push_not_delivered"
    PUSH_NO_TERMINAL = "push_no_terminal"
    PUSH_OUT_OF_ORDER = "push_out_of_order"
    PUSH_UNAUTHENTICATED = "push_unauthenticated"
    PUSH_BAD_PAYLOAD = "push_bad_payload"
    STREAM_RESET = "stream_reset"
    # a bound on the probe's work (events, bytes, artifacts): the agent sent more than any client should read
    WORK_LIMIT_EXCEEDED = "work_limit_exceeded"
    # trust: the probe's own token exchange, and TLS
    AUTH_TOKEN_FAILED = "auth_token_failed"
    TLS_CERTIFICATE_INVALID = "tls_certificate_invalid"
    TLS_CLIENT_CERT_REFUSED = "tls_client_cert_refused"
    # the probe itself: its own config (e.g. a credential it cannot read) or a bug; never blamed on the agent
    PROBE_CONFIG_ERROR = "probe_config_error"
    PROBE_ERROR = "probe_error"
    TARGET_NOT_ALLOWED = "target_not_allowed"
    # the probe had no free slot before the run's start deadline (or no file descriptor for a socket): a skipped
    # run, never the agent's failure
    PROBE_OVERLOADED = "probe_overloaded"


# reason -> (what it means, what to do). The recommendation is the default; checks may give a sharper one.
REASON_TEXT: dict[Reason, tuple[str, str]] = {
    Reason.CARD_UNREACHABLE: (
        "The Agent Card could not be fetched: connection refused, DNS failure, timeout, or a refused redirect.",
        "Check that the base URL is right and the agent (or gateway route) is up and reachable from the probe.",
    ),
    Reason.CARD_HTTP_STATUS: (
        "The well-known card path answered with a non-success HTTP status.",
        "Serve the card at <base>/.well-known/agent-card.json with HTTP 200 and no authentication.",
    ),
    Reason.CARD_INVALID: (
        "The Agent Card is not valid: bad or non-strict JSON, too large, or refused by the official clients' "
        "parsers (a field of the wrong type; a 0.2 card without its required fields). A MUST of the card they read "
        "past (a REQUIRED field absent) is a finding of its check, not this reason: the agent is still called.",
        "Fix the card so it parses as strict JSON under 1 MiB, in the version's schema, with every required field.",
    ),
    Reason.NO_USABLE_INTERFACE: (
        "The card advertises no interface with a binding and protocol version the probe can call.",
        "Advertise a JSONRPC, HTTP+JSON or GRPC interface with protocolVersion 1.0 or 0.3, or override "
        "binding/version.",
    ),
    Reason.CARD_UNSIGNED: (
        "The policy requires a signed Agent Card, and the card carries no signatures.",
        "Sign the card (JWS over its RFC 8785 form, A2A 1.0 §8.4) with a key in the probe's trusted JWKS, "
        "or relax the agent's signature policy to verify.",
    ),
    Reason.CARD_SIGNATURE_INVALID: (
        "The policy requires a signed Agent Card, and its signature does not verify under the trusted key it "
        "names: the card was changed after signing, or signed over another form than its RFC 8785 one (A2A 1.0 "
        "§8.4.1).",
        "Re-sign the card as served (the proto's fields, required empties kept, signatures excluded, RFC 8785); "
        "if the agent's key changed under the same kid, update the trusted JWKS.",
    ),
    Reason.CARD_SIGNATURE_UNTRUSTED: (
        "The policy requires a card signed under a trusted key, and its signatures name no key of the trusted "
        "JWKS, or use an algorithm the probe does not accept (none, HMAC).",
        "Sign with a key in the trusted JWKS and an asymmetric algorithm (ES256, RS256, EdDSA, ...); if the keys "
        "rotated, add the new public key to the trusted JWKS.",
    ),
    Reason.INTERFACE_PATH_DOUBLED: (
        "The advertised interface URL repeats a path prefix of the card URL, and calling it failed.",
        "The gateway's base-URL setting should hold only scheme and host; it must not include the route prefix.",
    ),
    Reason.INTERFACE_URL_UNROUTABLE: (
        "The advertised interface URL points at an in-cluster, loopback or private host, and calling it failed.",
        "Set the agent's (or gateway's) public base URL so the card advertises an address clients can reach.",
    ),
    Reason.INVOKE_UNREACHABLE: (
        "The advertised interface URL could not be connected to.",
        "Check that the URL in the card is reachable from clients: host, port, TLS and network policy.",
    ),
    Reason.INVOKE_PROTOCOL_ERROR: (
        "The advertised interface answered with broken HTTP: a bad status line, malformed or too many headers, "
        "bad chunk framing, or a body cut short.",
        "Look at the bytes quoted in the report; a proxy or server in front of the agent is mangling responses.",
    ),
    Reason.INVOKE_TIMEOUT: (
        "The advertised interface did not answer within the probe deadline.",
        "Check the agent's latency and the gateway's timeouts, or raise the probe timeout.",
    ),
    Reason.INVOKE_ROUTE_NOT_FOUND: (
        "The advertised interface has no A2A route there: HTTP 404 without an A2A error body, or gRPC "
        "UNIMPLEMENTED for the A2A service.",
        "Make the card advertise the URL the agent actually serves; check gateway route prefixes.",
    ),
    Reason.INVOKE_UNEXPECTED_STATUS: (
        "The advertised interface answered with a transport status its binding does not use for this answer "
        "(an HTTP status, a gRPC status, or a redirect).",
        "A JSON-RPC endpoint answers HTTP 200 for every JSON-RPC response, errors included; HTTP+JSON and gRPC "
        "use the status the spec maps to each A2A error.",
    ),
    Reason.INVOKE_AUTH: (
        "The advertised interface rejected the probe's credentials (HTTP 401/403, gRPC UNAUTHENTICATED or "
        "PERMISSION_DENIED).",
        "Give the probe valid credentials for the scheme the card declares.",
    ),
    Reason.INVOKE_NOT_A2A: (
        "The advertised interface did not answer in its binding's framing (a JSON-RPC 2.0 envelope, an HTTP+JSON "
        "ProtoJSON body, or a gRPC message).",
        "Route the advertised URL to the A2A handler of the binding the card names, not to a web page or another "
        "service.",
    ),
    Reason.INVOKE_A2A_ERROR: (
        "The agent answered the call with an A2A error (a JSON-RPC error, a google.rpc.Status body or a gRPC "
        "status).",
        "Look at the error name and message in the report; the agent rejected a valid request.",
    ),
    Reason.INVOKE_VERSION_UNSUPPORTED: (
        "The agent did not accept the protocol version the card advertises for this interface.",
        "Make the card's protocolVersion match what the server speaks, and accept the A2A-Version header.",
    ),
    Reason.INVOKE_LEGACY_PROTOCOL: (
        "The agent speaks a pre-0.3 A2A dialect (0.1/0.2) that the probe detects but does not invoke.",
        "Upgrade the agent to A2A 1.0 (or at least 0.3).",
    ),
    Reason.INVOKE_BAD_RESULT: (
        "The result is not a valid Task or Message for the protocol version.",
        "Return a Task (with id, contextId and status.state) or a Message, in the advertised version's shape.",
    ),
    Reason.INVOKE_NOT_BLOCKING: (
        "A blocking SendMessage (1.0: no returnImmediately) returned a task that was not yet terminal or "
        "interrupted; clients that trust the answer see an unfinished task.",
        "Wait for the task to reach a terminal or interrupted state before answering a blocking SendMessage "
        "(A2A 1.0 §3.2.2).",
    ),
    Reason.INVOKE_GATEWAY_ERROR: (
        "A gateway or proxy in front of the agent failed the call itself instead of passing it on: it answered "
        "HTTP 502, 503 or 504 with its own page (it could not reach the agent, or the agent did not answer within "
        "the gateway's timeout), refused the request's size (413 for the body; 431, or 400 for a header too "
        "large), or did not pass on the A2A-Version header the probe sent (the agent saw another version).",
        "Fix the gateway's route, not the agent: its upstream (the agent's Service, port and pods) and read timeout "
        "against the agent's latency (nginx proxy_read_timeout), its body and header limits (client_max_body_size, "
        "large_client_header_buffers), and that it forwards the A2A-Version header unchanged; the report quotes "
        "the gateway's answer.",
    ),
    Reason.RATE_LIMITED: (
        "The agent, or a gateway in front of it, refused the probe's request as over a rate limit (HTTP 429 Too "
        "Many Requests, RFC 6585 §4; gRPC RESOURCE_EXHAUSTED from the server): the card or the call was not "
        "answered, and the agent's conformance was not judged. The daemon waits out the Retry-After it names "
        "(at most an hour) before probing that agent again.",
        "Check the agent's or the gateway's rate limit against its real clients' rate and the probe's (one "
        "request a step per interval, more with --suite full); give the probe its own quota or a lower frequency. "
        "If every client is refused, the agent is unavailable to them as well.",
    ),
    Reason.TASK_FAILED: (
        "The task ended in a state other than COMPLETED (failed, rejected, canceled or interrupted).",
        "Look at the task's status message in the report: the agent itself reported the failure.",
    ),
    Reason.TASK_TIMEOUT: (
        "The task did not reach a terminal state before the probe deadline.",
        "Check whether the agent is stuck, or raise the probe timeout for slow agents.",
    ),
    Reason.EXPECTED_TEXT_MISSING: (
        "The task completed, but the expected text was found in neither its artifacts nor its history.",
        "Check the agent's answer in the report, or the configured expected text.",
    ),
    Reason.STREAM_NOT_A_STREAM: (
        "SendStreamingMessage did not answer with a stream (HTTP 200 text/event-stream, or a gRPC server stream).",
        "Serve streaming responses as Server-Sent Events (Content-Type: text/event-stream); "
        "make sure the gateway does not buffer or rewrite them.",
    ),
    Reason.STREAM_NO_TERMINAL: (
        "The stream ended, or the deadline passed, before a terminal task state was received.",
        "Emit a final status update (COMPLETED, FAILED, CANCELED or REJECTED) before closing the stream; "
        "check gateway idle timeouts.",
    ),
    Reason.STREAM_STATE_REGRESSION: (
        "A task state in the stream moved backwards (for example WORKING after COMPLETED).",
        "A terminal task never restarts: send no status updates after the terminal one.",
    ),
    Reason.STREAM_PROTOCOL_VIOLATION: (
        "The stream broke an ordering or identity rule: first event, task/context ids, artifact chunks, "
        "or events after the terminal one.",
        "Follow the A2A streaming rules: first event is the Task, one taskId/contextId throughout, "
        "close after terminal.",
    ),
    Reason.PUSH_NOT_SUPPORTED: (
        "The card declares capabilities.pushNotifications, but the agent refused the push config with "
        "PushNotificationNotSupportedError.",
        "Either wire a push-config store and a push sender into the agent, or set capabilities.pushNotifications "
        "to false in the card.",
    ),
    Reason.PUSH_CONFIG_FAILED: (
        "A push-notification config method (create, get, list or delete) failed or answered the wrong shape.",
        "Implement the four push config methods for every task the agent created; see the failing check in the "
        "report for the method and the answer.",
    ),
    Reason.PUSH_NOT_DELIVERED: (
        "The agent accepted the push config, but no notification reached the probe's receiver before the "
        "deadline.",
        "The agent could not reach the receiver URL: check the egress network policy from the agent to the probe, "
        "the probe's public push URL (push_public_url / --push-url must be the address agents can reach), TLS "
        "trust for an https URL, and whether the agent refuses private or loopback webhook URLs by policy.",
    ),
    Reason.PUSH_NO_TERMINAL: (
        "Push notifications arrived, but not the one for the terminal state before the deadline.",
        "Send a notification for every status change through the terminal one (COMPLETED, FAILED, CANCELED, "
        "REJECTED); check that delivery retries are not given up early.",
    ),
    Reason.PUSH_OUT_OF_ORDER: (
        "Push notifications arrived out of order: a task state moved backwards or came after the terminal one.",
        "Deliver a task's notifications one at a time, in the order the states changed (queue them per task).",
    ),
    Reason.PUSH_UNAUTHENTICATED: (
        "A push notification came without the Authorization the config asked for (scheme and credentials).",
        "Send Authorization: <scheme> <credentials> from the config's authentication on every notification; "
        "the token alone does not authenticate the agent.",
    ),
    Reason.PUSH_BAD_PAYLOAD: (
        "A push notification body was not strict JSON, not the version's payload (1.0: a StreamResponse), or "
        "named another task.",
        "POST a StreamResponse ({\"statusUpdate\": …}) as application/a2a+json (0.3: the Task) that names the task "
        "the config belongs to.",
    ),
    Reason.STREAM_RESET: (
        "The streaming response was cut: the connection was reset or closed mid-stream, before a terminal event.",
        "Check the agent and every proxy on the way for crashes, idle timeouts and connection limits on "
        "long-lived responses.",
    ),
    Reason.WORK_LIMIT_EXCEEDED: (
        "The agent sent more than the probe's per-probe bounds allow: answer bytes (4 MiB, decompressed), JSON "
        "values in one answer or event (50,000), or events, bytes or artifacts per stream.",
        "Check why the agent streams so much for a health-check message, or raise the module's limits.",
    ),
    Reason.TARGET_NOT_ALLOWED: (
        "The probe's target policy refused a URL of this caller-chosen probe (the target, a redirect or the "
        "advertised interface): its pattern or resolved address is not allowed.",
        "Probe configured agents (agent=NAME), or allow the URL in probe_target_pattern/probe_target_networks.",
    ),
    Reason.AUTH_TOKEN_FAILED: (
        "The probe could not get a token from the identity provider (OAuth2 client credentials, or OpenID "
        "Connect discovery): its own exchange failed before the agent was called; not a verdict on the agent.",
        "Check the token URL, client id and secret, scopes and the identity provider's availability; the "
        "report names the endpoint and the HTTP status or OAuth2 error.",
    ),
    Reason.TLS_CERTIFICATE_INVALID: (
        "The agent's TLS certificate did not verify: expired, issued for another host, or by a CA the probe "
        "does not trust.",
        "Renew or fix the certificate (its names must cover the host clients use); for a private CA set "
        "tls.ca_bundle for this agent.",
    ),
    Reason.TLS_CLIENT_CERT_REFUSED: (
        "The agent asked for a TLS client certificate (mTLS) and closed the connection: none is configured, "
        "or the one configured was refused.",
        "Configure tls.client_cert (and client_key) for this agent with a certificate its CA accepts.",
    ),
    Reason.PROBE_CONFIG_ERROR: (
        "The probe could not prepare the request: a credential reference (env or file) could not be resolved.",
        "Fix the agent's auth settings in the probe config, or provide the named environment variable or file.",
    ),
    Reason.PROBE_ERROR: (
        "The probe itself failed unexpectedly; this is a probe bug, not a verdict on the agent.",
        "Report it with the log line; the agent's state is unknown.",
    ),
    Reason.PROBE_OVERLOADED: (
        "The probe had no free concurrency slot in time, so the agent was not called, or the run ran into its "
        "deadline while the probe's own event loop stood still for a quarter of its budget or more, or while its "
        "request waited for a free connection in the probe's own pool (max_connections, "
        "max_connections_per_origin), or the probe could not open a socket because it is out of file descriptors "
        "(EMFILE/ENFILE); the run is "
        "counted as skipped (a2a_probe_scheduler_missed_runs_total{cause=\"overloaded\"}), never as the agent's "
        "failure.",
        "The probe itself is overloaded: raise max_concurrency (max_connections for pool waits), lengthen "
        "intervals, or shard the fleet "
        "(docs/runbook.md, A2AProbeOverloaded).",
    ),
}

assert set(REASON_TEXT) == set(Reason), "every reason needs a description"


def describe(reason: Reason) -> str:
    return REASON_TEXT[reason][0]


def recommend(reason: Reason) -> str:
    return REASON_TEXT[reason][1]
