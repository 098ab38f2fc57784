"""The requirement registry: what each check tests, in each protocol version's own words, sections and levels.

For every check id: the versions whose specification has the requirement ("1.0", "0.3", "0.2"), the section of
that version's `docs/specification.md` (tags v1.0.1 — numbered as v1.0.0 up to §5.7 —, v0.3.0, v0.2.5), the
level the text gives it (MUST / SHOULD / MAY), and the official TCK requirement ids it matches. A version that
is not listed does not have the requirement: the check is not graded for an agent probed in it.

`UNCOVERED` lists requirements of the texts that no check tests yet, with why; reports show them as
"not tested" for the probed version. Where 1.0.0 and 1.0.1 differ (the HTTP and gRPC error mappings, §5.4),
both are accepted: `probe.wire.a2a_errors` says which one an answer follows.

Where a version's text gives one requirement a different level on different bindings (e.g. ErrorInfo: a MUST in
§10.6 gRPC and §11.6 HTTP+JSON, a SHOULD in 1.0.1's §9.5 JSON-RPC), `Requirement.bindings` holds the rule of each
binding that differs, by version; `rules` holds the rule where the binding is not known (offline) or not listed.
The grading reads both (`probe.checks.grading.rule_for`): no binding is special-cased anywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from probe.checks.catalogue import Rule, Severity

VERSIONS = ("1.0", "0.3", "0.2")
_M, _S, _MAY = Severity.MUST, Severity.SHOULD, Severity.MAY


@dataclass(frozen=True, slots=True)
class Requirement:
    rules: Mapping[str, Rule]  # version family -> the rule; absent: that version has no such requirement
    tck: tuple[str, ...] = ()  # the official TCK's requirement ids this matches
    note: str = ""  # why a version is not listed, or how the check reads the text
    # version family -> binding (registry name: jsonrpc, http_json, grpc) -> the rule where that binding's text
    # differs from `rules`, or None where the text states it for other bindings only (§5.5's camelCase is about
    # JSON serializations: gRPC has none); a version or binding not listed here is graded by `rules`
    bindings: Mapping[str, Mapping[str, Rule | None]] = field(default_factory=dict)

    def rule(self, version: str, binding: str | None = None) -> Rule | None:
        """The rule of `version` (a family: "1.0") on `binding` (None: not known)."""
        rule = self.rules.get(version)
        if rule is None or binding is None:
            return rule
        return self.bindings.get(version, {}).get(binding, rule)


_JSON_ONLY = {"grpc": None}  # a rule of JSON serializations: gRPC sends protobuf binary


@dataclass(frozen=True, slots=True)
class Uncovered:
    """A requirement of the texts that no check tests yet."""

    id: str
    title: str
    rules: Mapping[str, Rule]
    why: str
    tck: tuple[str, ...] = field(default=())


def _r(level: Severity, section: str, words: str = "") -> Rule:
    return Rule(level, section, words)


def _all(level: Severity, v10: str, v03: str, v02: str | None = None, words: str = "") -> dict[str, Rule]:
    """The same requirement and level in 1.0, 0.3 and 0.2 (0.2.5 numbers its sections like 0.3 unless given)."""
    return {"1.0": _r(level, v10, words), "0.3": _r(level, v03, words), "0.2": _r(level, v02 or v03, words)}


_CARD_10, _CARD_03 = "§4.4.1 AgentCard", "§5.5 AgentCard Object Structure"
_JSONRPC_10, _JSONRPC_03, _JSONRPC_02 = "§9.1 JSON-RPC Protocol Requirements", "§3.2.1 JSON-RPC 2.0 Transport", \
    "§3.1 Transport Protocol"
_ERR_10 = "§3.3.2 Error Handling, §5.4 Error Code Mappings"
_ERR_03 = "§8.2 A2A-Specific Errors (servers SHOULD use these codes)"
_STD_ERR_03 = "§8.1 Standard JSON-RPC Errors, §11.1.5 Data Format Compliance"
# 0.3 words an A2A error's code a SHOULD on JSON-RPC (§8.2) and gRPC, but on HTTP+JSON a MUST that the error body maps
# to the A2A error type (§3.2.3 Error Format): the error a request can only get (a task that does not exist) is graded
# MUST there. The status the error comes with is errors.error_status's (§3.2.3 HTTP Status Codes); §3.2.2's gRPC
# "MUST map A2A error codes to appropriate gRPC status codes as defined in the proto annotations" is about the status
# alone (and the 0.3 proto has no such annotations: errors.error_status does not grade 0.3 gRPC), so gRPC keeps §8.2's
# SHOULD for the error itself
_ERR_BY_BINDING_03 = {
    "http_json": _r(_M, "§3.2.3 HTTP+JSON/REST Transport (Error Format)",
                    "MUST return error responses in a consistent JSON format that maps to A2A error types")}
_ERR_NOTE_03 = ("0.3 grades the error a SHOULD on JSON-RPC and gRPC (§8.2: \"Servers SHOULD use these codes where "
                "applicable\") and a MUST on HTTP+JSON (§3.2.3 Error Format: \"MUST return error responses in a "
                "consistent JSON format that maps to A2A error types\"); for a task that does not exist the error is "
                "the only right answer, so that level is the whole rule. The status is graded apart: "
                "errors.error_status (§3.2.3 HTTP Status Codes, MUST), so a named error at a wrong status fails that "
                "check only; gRPC's §3.2.2 status MUST is not this check's. The 0.3 TCK (a2a-tck branch 0.3.x, "
                "tests/mandatory: test_tasks_get_nonexistent, test_tasks_cancel_nonexistent) runs them as MUSTs citing "
                "§7.3 / §7.4, "
                "whose 0.3 text has no keyword for the error: §8.2's SHOULD is kept on JSON-RPC")

# 0.3's topics/streaming-and-async.md: "The A2A protocol itself does not strictly define the HTTP body payload"
_PUSH_BODY_03 = "§9.5 Push Notification Setup; topics/streaming-and-async (Notification Payload)"
_PUSH_BODY_WORDS_03 = "the body is not strictly defined; a Task, an event or a StreamResponse is read"
# 0.3 §3.5.6 and §7.3 list tasks/list for gRPC and REST only ("JSON-RPC: N/A"), with an empty payload, no rule
# and no rpc in the 0.3 proto; 0.2 has no such method
_NO_LIST = "0.3 lists tasks/list for gRPC/REST only (§3.5.6, §7.3), with no rule and no rpc in its proto; 0.2 has none"

# 0.3 / 0.2.5 put required extensions in topics/extensions.md, in lower-case words
_EXT_03 = "§5.5.2.1 AgentExtension Object; topics/extensions (Required Extensions)"
_EXT_ACT_03 = "§5.5.2.1 AgentExtension Object; topics/extensions (Extension Activation)"
_EXT_WORDS_03 = "agents should reject a request that does not activate a required extension (X-A2A-Extensions)"

REQUIREMENTS: dict[str, Requirement] = {
    # --- discovery and the card
    "card.discovered": Requirement(
        _all(_M, "§8.2 Discovery Mechanisms, §14.3 Well-Known URI", "§5.2 Discovery Mechanisms, §5.3",
             "§5.2 Discovery Mechanisms, §5.3", "servers MUST make an Agent Card available"),
        ("CARD-DISC-001",)),
    "card.well_known_path": Requirement(
        {"1.0": _r(_S, "§14.3 Well-Known URI Registration", "/.well-known/agent-card.json"),
         "0.3": _r(_S, "§5.3 Recommended Location", "recommended: /.well-known/agent-card.json")},
        note="0.2 recommends /.well-known/agent.json itself (0.2.5 §5.3): not graded there. 1.0 §8.2 lists the "
        "well-known URI among the discovery mechanisms with no RFC 2119 keyword: graded SHOULD. The TCK's "
        "CARD-DISC-001 (MUST, §8.1: a card is available) is card.discovered's, not this path's"),
    "card.no_cross_origin_redirect": Requirement(
        _all(_S, "§8.2 Discovery Mechanisms", "§5.4 Security of Agent Cards", words="clients refuse to follow a "
             "card to another origin (RFC 8615 well-known URIs are per origin)"),
        note="no sentence of the texts names redirects; graded SHOULD as the origin rule of RFC 8615"),
    "card.size": Requirement(_all(_M, _CARD_10, _CARD_03, words="a card a client can fetch and parse"),
                             note="the 1 MiB bound is the probe's (as the official clients bound bodies)"),
    "card.strict_json": Requirement(
        _all(_M, "§5.5 JSON Field Naming, §5.6", "§11.1.5 Data Format Compliance", "§3.2 Data Format",
             "the card is JSON (RFC 8259: unique names, finite numbers)"), ("CARD-STRUCT-001",)),
    "card.content_type": Requirement(
        _all(_S, "§14.1 Media Type Registration", "§5.2 Discovery Mechanisms", words="served as application/json"),
        note="the texts show application/json for the card; no RFC 2119 keyword: graded SHOULD"),
    "card.cache_headers": Requirement(
        {"1.0": _r(_S, "§8.6.1 Caching, Server Requirements",
                   "Agent Card endpoints SHOULD include Cache-Control with max-age and an ETag")},
        ("CARD-CACHE-001", "CARD-CACHE-002"), "0.3 and 0.2 say nothing about caching the card"),
    "card.not_modified": Requirement(
        {"1.0": _r(_S, "§8.6.2 Caching, Client Requirements", "clients SHOULD revalidate an expired card with "
                   "a conditional request (RFC 9111): a 304 must answer that request and identify the stored card")},
        note="0.3 and 0.2 say nothing about caching the card; observed when the daemon revalidates a cached card"),
    "card.last_modified": Requirement(
        {"1.0": _r(_MAY, "§8.6.1 Caching, Server Requirements", "Agent Card endpoints MAY include Last-Modified")},
        ("CARD-CACHE-003",), "0.3 and 0.2 say nothing about caching the card"),
    "card.protocol_version": Requirement(
        {"1.0": _r(_S, "§8.3 Protocol Declaration Requirements, §3.6 Versioning",
                   "the card declares the version it speaks; patch version numbers SHOULD NOT be used in Agent Cards"),
         "0.3": _r(_S, "§5.5 AgentCard (protocolVersion)", "the card declares the protocol version it speaks"),
         "0.2": _r(_S, "§5.5 AgentCard (protocolVersion)", "the card declares the protocol version it speaks")},
        note="a 0.2 card that declares its 0.2.x version meets 0.2.5 §5.5 and passes (an old version is no fault of "
        "its own text); one without protocolVersion fails; a 1.0 interface's "
        "\"1.0.0\" is read as 1.0, as both official clients read it"),
    "card.required_fields": Requirement(
        _all(_M, _CARD_10, _CARD_03, words="required fields present and typed"), ("CARD-STRUCT-001",)),
    "card.schema": Requirement(
        {"1.0": _r(_M, "§1.4 Normative Content, §5.5 JSON Field Naming, §5.7 Field Presence and Optionality",
                   "the proto is normative; REQUIRED fields MUST be present and set, required arrays MUST contain at "
                   "least one element"),
         "0.3": _r(_M, "§5.5 AgentCard Object Structure, §11.1.5 Data Format Compliance",
                   "the card follows the AgentCard definition of the 0.3 JSON schema")},
        ("CARD-STRUCT-001",), "0.2 and 0.1 cards are judged by the field checks alone (the probe ships no 0.2 "
        "models); 1.0 is parsed as a2a-sdk's resolver parses it: protobuf's json_format after its 0.3-form mapping"),
    "card.interfaces": Requirement(
        {"1.0": _r(_M, "§8.3.1 Supported Interfaces Declaration",
                   "supportedInterfaces: each with url, protocolBinding and protocolVersion"),
         "0.3": _r(_M, "§5.6 Transport Declaration and URL Relationships, §5.5.5 AgentInterface",
                   "url and preferredTransport MUST be present; additionalInterfaces well formed; transports "
                   "SHOULD be core values, additional values MAY be used")},
        ("CARD-PROTO-001", "CARD-PROTO-002"), "0.2 has a single url and no transport declaration"),
    "card.skills": Requirement(_all(_M, "§4.4.5 AgentSkill", "§5.5.4 AgentSkill Object"), ("CARD-STRUCT-001",)),
    "card.capabilities": Requirement(_all(_M, "§4.4.3 AgentCapabilities", "§5.5.2 AgentCapabilities Object"),
                                     ("CARD-STRUCT-001",)),
    "card.security": Requirement(
        _all(_M, "§4.5 Security Objects, §7.3", "§4.3 Client/User Identity & Authentication Process, §5.5",
             words="security requirements name declared schemes"), ("CARD-STRUCT-001",)),
    "card.https": Requirement(
        _all(_S, "§7.1 Protocol Security", "§4.1 Transport Security",
             words="production deployments MUST use HTTPS (graded SHOULD: the probe cannot tell production)"),
        ("AUTH-TLS-001", "GRPC-SVC-003"),
        "deliberately below the TCK's AUTH-TLS-001 (MUST): the text's MUST is for production deployments, and a "
        "probe cannot tell a production agent from a development one; the TCK's GRPC-SVC-003 (§10.1 gRPC over "
        "HTTP/2 with TLS) is the same rule for a gRPC interface"),
    "card.security_schemes": Requirement(
        _all(_M, "§4.5.1 SecurityScheme … §4.5.10", "§5.5.3 SecurityScheme Object", words="complete schemes"),
        ("CARD-STRUCT-001",)),
    "card.signature": Requirement(
        {"1.0": _r(_M, "§8.4.1 Canonicalization Requirements", "the card MUST be canonicalized (RFC 8785, the "
                   "proto's field presence, signatures excluded) before signing: a signature under the key its kid "
                   "names verifies over that form"),
         "0.3": _r(_S, "§5.5.6 AgentCardSignature Object", "signatures verify over the JCS-canonical card")},
        ("CARD-SIGN-001", "CARD-SIGN-002", "CARD-SIGN-003"),
        "Judged only when the card is signed with a kid the trusted JWKS has and an accepted algorithm: signing "
        "itself is a MAY (§8.4), and a key or algorithm the operator does not trust is card.signature_trusted's. "
        "0.3 names the object and no canonicalisation rule, so SHOULD there; 0.2 cards have no signatures"),
    "card.signature_trusted": Requirement(
        {"1.0": _r(_S, "§8.4 Agent Card Signing", "signatures let clients verify a card's authenticity"),
         "0.3": _r(_S, "§5.5.6 AgentCardSignature Object", "signatures verify the card's integrity")},
        (), "An operations rule on top of the texts' MAY: judged only when the operator configures a trusted JWKS "
        "(card_signatures), it fails an unsigned card, a kid no trusted key has, and an algorithm the probe does "
        "not accept (none, HMAC); a signature that does not verify is card.signature's. 0.2 cards have no "
        "signatures"),
    "card.public": Requirement(
        _all(_S, "§8.2 Discovery Mechanisms, §13.3", "§5.4 Security of Agent Cards",
             words="the public card is readable without credentials; sensitive details go to the extended card")),
    "card.extended": Requirement(
        {"1.0": _r(_S, "§3.1.11 Get Extended Agent Card, §13.3", "served to authenticated clients when declared"),
         "0.3": _r(_S, "§7.10 agent/getAuthenticatedExtendedCard", "available when supportsAuthenticatedExtendedCard"),
         "0.2": _r(_S, "§7.10 agent/authenticatedExtendedCard (HTTP GET)",
                   "available when supportsAuthenticatedExtendedCard")},
        ("CARD-EXT-001", "CARD-EXT-002"),
        "Deliberately below the TCK's CARD-EXT-001 and -002 (MUST, §3.1.11): CARD-EXT-001 is the client's \"MUST "
        "authenticate\" (the probe's own configuration, graded by security.credentials_match) and CARD-EXT-002 "
        "asks ExtendedAgentCardNotConfiguredError of an agent that declares an extended card it has not configured, "
        "an answer §3.1.11 lists as allowed; that a declared card is served has no keyword in the text: SHOULD"),
    "security.credentials_match": Requirement(
        _all(_S, "§7.3 Client Authentication Process", "§4.3 Client/User Identity & Authentication Process",
             words="clients authenticate with a scheme the card declares (the probe's own configuration)"),
        note="about the probe's configuration against the card, graded SHOULD"),
    "tls.cert_expiry": Requirement(
        _all(_S, "§7.1 Protocol Security", "§4.1 Transport Security", words="modern TLS; a certificate in date"),
        ("AUTH-TLS-002",), "an operations rule on top of the texts' TLS requirement"),
    "tls.verified": Requirement(
        _all(_S, "§7.2 Server Identity Verification", "§4.2 Server Identity Verification",
             words="clients SHOULD verify the server's identity by validating its TLS certificate"),
        ("AUTH-SERVER-001",)),
    # --- the advertised interface
    "interface.selected": Requirement(
        {"1.0": _r(_M, "§8.3.2 Client Protocol Selection", "an interface the client supports"),
         "0.3": _r(_M, "§5.6.3 Client Transport Selection Rules", "the preferredTransport is available at url"),
         "0.2": _r(_M, "§3.1 Transport Protocol", "JSON-RPC 2.0 over HTTP(S) at the card's url")},
        ("BIND-FIELD-001",)),
    "interface.no_path_repeat": Requirement(
        _all(_S, "§8.3.1 Supported Interfaces Declaration", "§5.6.4 Validation Requirements", "§5.5 AgentCard (url)",
             "the advertised URL is the one clients call"), note="a gateway fault; graded SHOULD"),
    "interface.routable_host": Requirement(
        _all(_S, "§8.3.1 Supported Interfaces Declaration", "§5.6.4 Validation Requirements", "§5.5 AgentCard (url)",
             "the advertised URL is reachable by the card's readers"), note="a deployment fault; graded SHOULD"),
    "interface.scheme": Requirement(
        _all(_S, "§7.1 Protocol Security", "§4.1 Transport Security"), ("AUTH-TLS-001",),
        "deliberately below the TCK's AUTH-TLS-001 (MUST): §7.1's MUST is for production deployments, which a probe "
        "cannot tell from development ones"),
    "interface.grpc_url": Requirement(
        {"1.0": _r(_S, "§4.4.6 AgentInterface, §10 gRPC Protocol Binding",
                   "a gRPC url may be host:port; TLS is required in production, so the scheme should say which")},
        note="gRPC interfaces only; 0.3 states no URL form for gRPC (its sample card uses https://…)"),
    "interface.no_credentials": Requirement(
        _all(_S, "§7.1 Protocol Security", "§4.1 Transport Security",
             words="credentials travel in the schemes the card declares, never in a public URL (RFC 3986 §3.2.1)")),
    # --- invocation
    "invoke.transport": Requirement(
        {"1.0": _r(_M, "§9.1 JSON-RPC, §11.6 HTTP+JSON Error Handling, §10.6 gRPC Error Handling",
                   "JSON-RPC answers HTTP 200; HTTP+JSON 2xx or the error's status; gRPC OK or the error's status"),
         "0.3": _r(_M, "§3.2.1 JSON-RPC 2.0 Transport, §3.2.3 HTTP+JSON/REST Transport",
                   "JSON-RPC answers HTTP 200 for every JSON-RPC response"),
         "0.2": _r(_M, _JSONRPC_02, "every JSON-RPC response is an HTTP 200 answer")},
        ("JSONRPC-FMT-001", "HTTP_JSON-URL-001", "HTTP_JSON-URL-002", "GRPC-SVC-001")),
    "invoke.framing": Requirement(
        {"1.0": _r(_M, "§9.1 JSON-RPC Protocol Requirements, §11.4 Request/Response Format",
                   "a JSON-RPC 2.0 envelope (jsonrpc \"2.0\", the request's id, one of result and error), or the "
                   "bare ProtoJSON object over HTTP+JSON"),
         "0.3": _r(_M, "§6.11 JSON-RPC Structures, §3.2.1", "jsonrpc \"2.0\", the request's id, one of result and "
                   "error"),
         "0.2": _r(_M, "§6.11 JSON-RPC Structures", "jsonrpc \"2.0\", the request's id, one of result and error")},
        ("JSONRPC-FMT-001", "JSONRPC-FMT-002", "GRPC-SVC-002")),
    "invoke.content_type": Requirement(
        {"1.0": _r(_S, "§9.1 Protocol Requirements",
                   "JSON-RPC: Content-Type: application/json for requests and responses (no RFC 2119 keyword)"),
         "0.3": _r(_M, "§3.2.1 JSON-RPC 2.0 Transport, §3.2.3 HTTP+JSON/REST Transport",
                   "The Content-Type header for HTTP requests and responses containing JSON-RPC payloads MUST be "
                   "application/json; REST: MUST use application/json for request and response bodies"),
         "0.2": _r(_M, "§3.1 Transport Protocol", "The Content-Type header for HTTP requests and responses "
                   "containing JSON-RPC payloads MUST be application/json")},
        ("JSONRPC-FMT-002", "HTTP_JSON-SVC-001"),
        "graded apart from invoke.framing, which failed the call for it before: a2a-sdk's clients read the body "
        "whatever its Content-Type (only a stream's text/event-stream is checked, stream.content_type). 1.0 words it "
        "below a MUST: §9.1 (JSON-RPC) states application/json with no keyword, 1.0.1 §11.1 (HTTP+JSON) "
        "\"application/a2a+json SHOULD be used\" where 1.0.0 §11.1 stated application/json: both accepted, as a card "
        "names no patch; 0.3 and 0.2 say MUST. gRPC has no JSON media type (application/grpc is the transport's "
        "own); the TCK's JSONRPC-FMT-002 and HTTP_JSON-SVC-001 run it as a MUST, from the 0.3 wording",
        bindings={"1.0": {"http_json": _r(_S, "§11.1 Protocol Requirements",
                                          "1.0.1: Content-Type: application/a2a+json SHOULD be used for requests "
                                          "and responses (1.0.0: application/json)"),
                          "grpc": None},
                  "0.3": {"grpc": None}}),
    "invoke.version_accepted": Requirement(
        {"1.0": _r(_M, "§3.6.2 Server Responsibilities", "servers MUST use the requested version's semantics")},
        ("VER-SERVER-001",), "0.3 and 0.2 have no A2A-Version header"),
    "invoke.result_shape": Requirement(
        _all(_M, "§3.1.1 Send Message, §4.1.1 Task", "§7.1 message/send, §6.1 Task Object",
             "§7.1 message/send, §6.1 Task Object", "the result is a Task or a Message"),
        ("CORE-SEND-001", "CORE-MULTI-001a")),
    "invoke.dialect": Requirement(
        {"1.0": _r(_M, "§5.5 JSON Field Naming Convention", "enum values are the proto names (TASK_STATE_*)"),
         "0.3": _r(_M, "§6.3 TaskState Enum, §6.4 Message Object", "lowercase states, kind discriminators"),
         "0.2": _r(_M, "§6.3 TaskState Enum, §6.4 Message Object", "lowercase states, kind discriminators")},
        ("DM-SERIAL-002", "DM-TASK-002", "DM-MSG-002", "DM-PART-001")),
    "invoke.schema": Requirement(
        {"1.0": _r(_M, "§1.4 Normative Content, §5.6 Data Type Conventions",
                   "the proto is normative; JSON is its ProtoJSON form; timestamps MUST be ISO 8601 in UTC"),
         "0.3": _r(_M, "§11.1.5 Data Format Compliance", "MUST use the data structures defined in Section 6"),
         "0.2": _r(_M, "§6 Protocol Data Objects", "objects follow the specification's schema")},
        ("DM-SERIAL-003", "CORE-SEND-001"),
        "a timestamp with an RFC 3339 offset is accepted, as both official parsers accept it; 1.0 §5.6.1's \"MUST "
        "NOT include timezone offsets other than 'Z'\" is invoke.timestamps_utc, a finding of its own"),
    "invoke.required_fields": Requirement(
        {"1.0": _r(_M, "§5.7 Field Presence and Optionality",
                   "Fields marked with [(google.api.field_behavior) = REQUIRED] indicate that the field MUST be "
                   "present and set … Arrays marked as required MUST contain at least one element"),
         "0.3": _r(_M, "§11.1.5 Data Format Compliance", "MUST use the data structures defined in Section 6")},
        ("DM-SERIAL-003", "DM-SERIAL-004", "DM-TASK-001", "DM-STATUS-001", "DM-MSG-001", "DM-ART-001",
         "DM-PART-001"),
        "Reported on its own, with the fields missing (SendMessage, GetTask, stream events, the suite's calls): "
        "a2a-sdk's client parses with protobuf's json_format, which does not enforce field_behavior (a missing "
        "messageId reads as \"\", a Part without content as an empty Part), so invoke.schema and stream.schema, "
        "which fail what the official parsers refuse, pass such an answer and the verdict stays; the finding counts "
        "for the level and --fail-on must. 0.3 over JSON-RPC: the 0.3 models refuse a missing required field, so it "
        "is invoke.schema's there. An Agent Card's REQUIRED fields stay card.schema's (docs/conformance-audit.md)"),
    "invoke.timestamps_utc": Requirement(
        {"1.0": _r(_M, "§5.6.1 Timestamps",
                   "Timestamps MUST NOT include timezone offsets other than 'Z' (all times are UTC)")},
        ("DM-SERIAL-003",),
        "0.3 has no such rule: TaskStatus.timestamp is \"An ISO 8601 datetime string\" (the 0.3 JSON schema; its own "
        "examples carry no zone), and 0.2.5 says \"UTC recommended\". Reported on its own, with the timestamps seen "
        "(TaskStatus.timestamp, the one Timestamp of the 1.0 proto an agent sends: SendMessage, GetTask, stream "
        "events, the suite's calls): invoke.schema and stream.schema accept an offset as the official parsers do, "
        "so the call is not failed and the verdict stays; the finding counts for the level and --fail-on must. Not "
        "graded on gRPC: §5.6.1 is about timestamps \"serialized to JSON (in JSON-RPC, HTTP/REST, or other "
        "JSON-based bindings)\"; a protobuf Timestamp is seconds and nanos, with no zone to get wrong",
        bindings={"1.0": _JSON_ONLY}),
    "invoke.camel_case": Requirement(
        {"1.0": _r(_M, "§5.5 JSON Field Naming Convention",
                   "all JSON serializations MUST use camelCase naming for field names")},
        ("DM-SERIAL-001",), "0.3 and 0.2 define camelCase names in their schema, with no rule about others; not "
        "graded on gRPC: §5.5 says \"All JSON serializations of the A2A protocol data model MUST use camelCase\", and "
        "gRPC sends protobuf binary (the probe's own rendering of it is camelCase whatever the agent does)",
        bindings={"1.0": _JSON_ONLY}),
    "invoke.blocking": Requirement(
        {"1.0": _r(_M, "§3.2.2 SendMessageConfiguration",
                   "blocking (returnImmediately false or unset) MUST wait until the task is terminal or interrupted"),
         "0.3": _r(_S, "§7.1.1 MessageSendParams (MessageSendConfiguration.blocking)",
                   "if true, the client will wait for the task to complete; the server may reject this (no MUST)"),
         "0.2": _r(_S, "§7.1.1 MessageSendParams (MessageSendConfiguration.blocking)",
                   "if true, the client will wait for the task to complete (no MUST)")},
        ("CORE-EXECUTION-MODE-001",)),
    "invoke.polled_task": Requirement(
        _all(_M, "§3.1.3 Get Task", "§7.3 tasks/get", words="the output is the requested task")),
    "invoke.no_error": Requirement(
        _all(_M, "§3.1.1 Send Message", "§7.1 message/send", words="a valid send gets a Task or a Message"),
        ("CORE-SEND-001", "JSONRPC-SVC-001")),
    "invoke.task_completed": Requirement(
        _all(_M, "§3.1.1 Send Message, §4.1.3 TaskState", "§7.1 message/send, §6.3 TaskState Enum",
             words="the task reaches a terminal state (the probe's prompt asks for COMPLETED)")),
    "invoke.expected_text": Requirement(
        _all(_M, "§4.1.7 Artifact", "§6.7 Artifact Object", words="the configured answer (the operator's own rule)"),
        note="not a rule of the texts: the operator's expectation, graded MUST as configured"),
    # --- streaming
    "stream.content_type": Requirement(
        _all(_M, "§9.4.2 SendStreamingMessage, §3.1.2", "§3.3.1 JSON-RPC 2.0 Streaming",
             "§3.3 Streaming Transport (Server-Sent Events)", "HTTP 200 with Content-Type text/event-stream"),
        ("JSONRPC-SSE-001", "HTTP_JSON-SSE-001", "GRPC-ERR-003")),
    "stream.events_parse": Requirement(
        _all(_M, "§9.4.2 SendStreamingMessage", "§3.3.1 JSON-RPC 2.0 Streaming, §7.2.1",
             "§3.3 Streaming Transport, §7.2.1", "each event's data is a JSON-RPC response with the request's id"),
        ("JSONRPC-SSE-001", "HTTP_JSON-SSE-001", "GRPC-ERR-003")),
    "stream.schema": Requirement(
        {"1.0": _r(_M, "§3.2.3 Stream Response, §5.6", "each event is a StreamResponse in ProtoJSON"),
         "0.3": _r(_M, "§7.2.1 SendStreamingMessageResponse, §11.1.5", "events use the data structures of §6"),
         "0.2": _r(_M, "§7.2.1 SendStreamingMessageResponse", "events follow the schema")},
        ("JSONRPC-SSE-001", "DM-SERIAL-003")),
    "stream.first_event": Requirement(
        {"1.0": _r(_M, "§3.1.2 Send Streaming Message", "the stream MUST begin with the Task object (or one Message)"),
         "0.3": _r(_S, "§7.2 message/stream, §9.3", "the first event is the Task (shown, no MUST)"),
         "0.2": _r(_S, "§7.2 message/stream, §9.3", "the first event is the Task (shown, no MUST)")},
        ("CORE-STREAM-001", "CORE-STREAM-003")),
    "stream.consistent_ids": Requirement(
        _all(_M, "§4.2.1 TaskStatusUpdateEvent, §4.2.2", "§7.2.2 TaskStatusUpdateEvent Object, §7.2.3",
             words="every event names the stream's task and context")),
    "stream.no_regression": Requirement(
        _all(_M, "§3.1.2, §4.1.3 TaskState", "§6.1 Task Object", words="a terminal task can't be restarted"),
        ("STREAM-ORDER-001",)),
    "stream.terminal": Requirement(
        {"1.0": _r(_M, "§3.1.2 Send Streaming Message", "the stream MUST close when the task reaches a terminal state"),
         "0.3": _r(_M, "§7.2.2 TaskStatusUpdateEvent Object", "final: true ends the stream"),
         "0.2": _r(_M, "§7.2.2 TaskStatusUpdateEvent Object", "final: true ends the stream")},
        ("CORE-STREAM-002",)),
    "stream.closes_after_terminal": Requirement(
        {"1.0": _r(_M, "§3.1.2 Send Streaming Message", "the stream MUST close when the task reaches a terminal state"),
         "0.3": _r(_S, "§7.2.2 TaskStatusUpdateEvent Object", "the server closes the stream after final: true"),
         "0.2": _r(_S, "§7.2.2 TaskStatusUpdateEvent Object", "the server closes the stream after final: true")},
        ("CORE-STREAM-002",)),
    "stream.artifact_chunks": Requirement(
        _all(_M, "§4.2.2 TaskArtifactUpdateEvent", "§7.2.3 TaskArtifactUpdateEvent Object",
             words="append only to a known artifact; nothing after lastChunk")),
    "stream.no_error": Requirement(_all(_M, "§3.1.2 Send Streaming Message", "§7.2 message/stream")),
    "stream.task_completed": Requirement(
        _all(_M, "§3.1.2, §4.1.3 TaskState", "§7.2 message/stream, §6.3",
             words="the streamed task ends (the probe's prompt asks for COMPLETED)")),
    "stream.expected_text": Requirement(
        _all(_M, "§4.1.7 Artifact", "§6.7 Artifact Object", words="the configured answer (the operator's own rule)"),
        note="not a rule of the texts: the operator's expectation"),
    # --- lifecycle (suite)
    "lifecycle.get_task": Requirement(_all(_M, "§3.1.3 Get Task", "§7.3 tasks/get"),
                                      ("CORE-GET-001", "HTTP_JSON-URL-001", "HTTP_JSON-URL-002")),
    "lifecycle.return_immediately": Requirement(
        {"1.0": _r(_M, "§3.2.2 SendMessageConfiguration",
                   "returnImmediately: true MUST return right after creating the task"),
         "0.3": _r(_MAY, "§7.1.1 MessageSendParams (blocking)", "blocking false: no behaviour is mandated"),
         "0.2": _r(_MAY, "§7.1.1 MessageSendParams (blocking)", "blocking false: no behaviour is mandated")},
        ("CORE-EXECUTION-MODE-002",)),
    "lifecycle.history_length": Requirement(
        {"1.0": _r(_M, "§3.2.4 History Length Semantics; a2a.proto GetTaskRequest.history_length (normative, §1.4)",
                   "The server MUST NOT return more messages than the provided value; a value of zero is a request "
                   "to not include any messages"),
         "0.3": _r(_S, "§7.3.1 TaskQueryParams Object", "historyLength: the number of recent messages to return"),
         "0.2": _r(_S, "§7.3.1 TaskQueryParams Object", "historyLength: the number of recent messages to return")},
        ("CORE-HIST-002", "HTTP_JSON-QP-001"),
        "The count is the proto's MUST (the TCK's CORE-HIST-002 too); §3.2.4's SHOULD that the history field be "
        "omitted at 0 (the TCK's CORE-HIST-001) is lifecycle.history_omitted's, so an empty history passes here"),
    "lifecycle.history_omitted": Requirement(
        {"1.0": _r(_S, "§3.2.4 History Length Semantics",
                   "0: no history should be returned; the history field SHOULD be omitted")},
        ("CORE-HIST-001", "CORE-HIST-003"),
        "Judged on the answers to GetTask and SendMessage with historyLength 0 (lifecycle.history_length, "
        "lifecycle.history_on_send): a history field present there, even empty, fails; how many messages it holds "
        "is those checks' MUST. Both official clients read an absent and an empty history alike, so SHOULD, as the "
        "text says. Not graded on gRPC (a protobuf repeated field has no absent state) nor in 0.3 and 0.2, which "
        "never fixed what 0 means", bindings={"1.0": _JSON_ONLY}),
    "lifecycle.cancel": Requirement(_all(_M, "§3.1.5 Cancel Task", "§7.4 tasks/cancel"), ("CORE-CANCEL-001",)),
    "lifecycle.input_required": Requirement(
        _all(_M, "§3.4.2 Task Identifier Semantics, §3.4.3", "§9.4 Multi-Turn Interaction",
             words="a follow-up with the interrupted task's id continues that task"),
        note="no TCK requirement covers the continuation (its CORE-MULTI-001, once listed here, is §3.4.1's MAY of "
        "generating a contextId)"),
    "lifecycle.message_to_terminal": Requirement(
        {"1.0": _r(_M, "§3.1.1 Send Message (errors)", "UnsupportedOperationError for a terminal task"),
         "0.3": _r(_M, "§7.1 message/send", "a terminal task can't be restarted: the send results in an error"),
         "0.2": _r(_M, "§7.1 message/send", "a terminal task can't be restarted")}, ("CORE-SEND-002",),
        "0.3/0.2 require an error, not a particular code"),
    "lifecycle.unknown_task_message": Requirement(
        {"1.0": _r(_M, "§3.4.2 Task Identifier Semantics, §3.1.1 Send Message (errors)",
                   "Agents MUST return a TaskNotFoundError if the provided taskId does not correspond to an existing "
                   "task"),
         "0.3": _r(_S, "§8.2 A2A-Specific Errors", "TaskNotFoundError where applicable"),
         "0.2": _r(_S, "§8.2 A2A-Specific Errors", "TaskNotFoundError where applicable")}, ("CORE-MULTI-004",),
        "0.3/0.2: §7.1 message/send has no keyword for an unknown taskId, so §8.2's \"Servers SHOULD use these codes "
        "where applicable\" is the level; the 0.3 TCK (branch 0.3.x) runs test_message_send_continue_nonexistent_task "
        "among its mandatory tests, citing no MUST of the 0.3 text"),
    "lifecycle.completed_artifact": Requirement(
        _all(_S, "§3.7 Messages and Artifacts", "§6.1 Task Object",
             words="tasks in completed state SHOULD use artifacts for the generated output")),
    "lifecycle.context_continuity": Requirement(
        {"1.0": _r(_M, "§3.4.1 Context Identifier Semantics", "a client's contextId is kept, or the send rejected"),
         "0.3": _r(_S, "§6.4 Message Object (contextId)", "messages with a contextId belong to that context"),
         "0.2": _r(_S, "§6.4 Message Object (contextId)", "messages with a contextId belong to that context")},
        ("CORE-MULTI-002a",),
        "§3.4.1: agents MAY accept a client's contextId (the TCK's CORE-MULTI-002, a MAY), but one that cannot "
        "MUST reject the request and MUST NOT generate a new contextId (CORE-MULTI-002a): kept or refused is the "
        "MUST graded"),
    "lifecycle.list_tasks": Requirement(
        {"1.0": _r(_M, "§3.1.4 List Tasks", "only the client's tasks; sorted by status timestamp, most recent "
                   "first; artifacts MUST be omitted unless includeArtifacts; nextPageToken MUST always be present")},
        ("CORE-LIST-001", "CORE-LIST-003", "CORE-LIST-004", "CORE-LIST-005", "HTTP_JSON-QP-001"),
        f"{_NO_LIST}; CORE-LIST-001 (only the caller's tasks) is checked as the contextId and status filters: "
        "visibility across clients would need a second identity"),
    "lifecycle.list_pagination": Requirement(
        {"1.0": _r(_M, "§3.1.4 List Tasks", "MUST use cursor-based pagination (pageToken/nextPageToken); "
                   "nextPageToken MUST be \"\" on the final page")}, ("CORE-LIST-002", "CORE-LIST-004"), _NO_LIST),
    "lifecycle.history_on_send": Requirement(
        {"1.0": _r(_M, "§3.2.2 SendMessageConfiguration (historyLength), §3.2.4",
                   "the server MUST NOT return more messages than the provided value; 0 asks for none"),
         "0.3": _r(_S, "§7.1.1 MessageSendParams (MessageSendConfiguration.historyLength)",
                   "the number of most recent messages to retrieve in the response (no MUST)"),
         "0.2": _r(_S, "§7.1.1 MessageSendParams (MessageSendConfiguration.historyLength)",
                   "the number of recent messages to be retrieved (no MUST)")},
        note="0.3/0.2: only historyLength=1 is graded, as 0.3 never fixed what 0 means. 1.0: the count is the "
        "proto's MUST (SendMessageConfiguration.history_length); §3.2.4's SHOULD that the history field be omitted "
        "at 0 (the TCK's CORE-HIST-003) is lifecycle.history_omitted's"),
    "lifecycle.history_kept": Requirement(
        {"1.0": _r(_MAY, "§3.7 Messages and Artifacts",
                   "agents MAY choose to persist all Messages that contain important information in the Task history"),
         "0.3": _r(_MAY, "§6.1 Task Object (history)", "history, optional: the messages exchanged during the task"),
         "0.2": _r(_MAY, "§6.1 Task Object (history)", "history, optional: recent messages exchanged")},
        ("CORE-HIST-004",)),
    "lifecycle.history_order": Requirement(
        {"1.0": _r(_S, "§3.2.4 History Length Semantics, §3.7",
                   "the history holds the messages exchanged, as exchanged; the n most recent are its last n"),
         "0.3": _r(_S, "§6.1 Task Object (history)", "the messages exchanged, representing the conversation history"),
         "0.2": _r(_S, "§6.1 Task Object (history)", "recent messages exchanged")},
        ("CORE-HIST-005", "CORE-HIST-006"),
        "no sentence gives the order a keyword; graded SHOULD, as the TCK does (CORE-HIST-005/006)"),
    # --- multi-turn and request tolerance (suite)
    "lifecycle.unique_task_ids": Requirement(
        {"1.0": _r(_M, "§3.4.2 Task Identifier Semantics",
                   "Agents MUST generate a unique taskId for each new task they create"),
         "0.3": _r(_M, "§6.1 Task Object", "id: a unique identifier for the task, generated by the server"),
         "0.2": _r(_M, "§6.1 Task Object", "id: a unique identifier for the task, generated by the server")},
        ("CORE-MULTI-003",)),
    "lifecycle.context_inferred": Requirement(
        {"1.0": _r(_M, "§3.4.3 Multi-Turn Conversation Patterns",
                   "Agents MUST infer contextId from the task if only taskId is provided")},
        ("CORE-MULTI-005",), "0.3 and 0.2 have no rule on a follow-up that names only the task"),
    "lifecycle.context_mismatch_rejected": Requirement(
        {"1.0": _r(_M, "§3.4.3 Multi-Turn Conversation Patterns",
                   "Agents MUST reject messages containing mismatching contextId and taskId")},
        ("CORE-MULTI-006",), "0.3 and 0.2 have no rule on a mismatching contextId"),
    "lifecycle.schema": Requirement(
        {"1.0": _r(_M, "§5.5 JSON Field Naming Convention, §5.6 Data Type Conventions",
                   "camelCase field names; timestamps ISO 8601 in UTC with a zone; enum values the proto names"),
         "0.3": _r(_M, "§11.1.5 Data Format Compliance", "MUST use the data structures defined in Section 6"),
         "0.2": _r(_M, "§6 Protocol Data Objects", "objects follow the specification's schema")},
        ("DM-SERIAL-001", "DM-SERIAL-002", "DM-SERIAL-003"),
        "the engine's invoke.schema / stream.schema judge the first send and stream; this, the suite's own calls "
        "(camelCase is a 1.0 rule only)"),
    "lifecycle.extensions_echoed": Requirement(
        {"1.0": _r(_S, "§3.2.6 Service Parameters (A2A-Extensions); topics/extensions (Extension Activation)",
                   "the response SHOULD include the A2A-Extensions header, listing all extensions that were activated"),
         "0.3": _r(_S, _EXT_ACT_03, "the response should include the X-A2A-Extensions header identifying all "
                   "extensions that were activated"),
         "0.2": _r(_S, _EXT_ACT_03, "the response should include the X-A2A-Extensions header identifying all "
                   "extensions that were activated")},
        note="run only when the card declares a required extension: a served request activated it, so it is echoed; "
        "the HTTP bindings only (gRPC response metadata is not read)"),
    "lifecycle.unknown_fields_ignored": Requirement(
        {"1.0": _r(_S, "§5.7 Field Presence and Optionality (Unrecognized Fields)",
                   "Implementations SHOULD ignore unrecognized fields in messages")},
        ("DM-SERIAL-005",), "0.3 and 0.2 say nothing about unknown request fields; sent in JSON bodies only (a "
        "gRPC message cannot carry a field its proto does not define)"),
    # --- streaming (suite)
    "streaming.subscribe": Requirement(
        {"1.0": _r(_M, "§3.1.6 Subscribe to Task", "first event the Task; the stream terminates at a terminal state"),
         "0.3": _r(_M, "§7.9 tasks/resubscribe", "resumes the task's SSE stream (first event not mandated)"),
         "0.2": _r(_M, "§7.9 tasks/resubscribe", "resumes the task's SSE stream (first event not mandated)")},
        ("STREAM-SUB-001", "STREAM-SUB-002")),
    "streaming.subscribe_terminal": Requirement(
        {"1.0": _r(_M, "§3.1.6 Subscribe to Task (errors)", "UnsupportedOperationError for a terminal task")},
        ("STREAM-SUB-003",), "0.3/0.2 define resubscribe for ongoing tasks only, with no error for others"),
    "streaming.subscribe_unknown": Requirement(
        {"1.0": _r(_M, "§3.1.6 Subscribe to Task (errors)", "TaskNotFoundError for a task that does not exist"),
         "0.3": _r(_S, _ERR_03, "TaskNotFoundError where applicable"),
         "0.2": _r(_S, _ERR_03, "TaskNotFoundError where applicable")}, ("STREAM-SUB-004",)),
    "streaming.not_declared": Requirement(
        {"1.0": _r(_M, "§3.3.4 Capability Validation", "streaming false: UnsupportedOperationError"),
         "0.3": _r(_S, "§7.2 message/stream, §8.2", "requires capabilities.streaming; A2A codes SHOULD be used"),
         "0.2": _r(_S, "§7.2 message/stream, §8.2", "requires capabilities.streaming; A2A codes SHOULD be used")},
        ("CORE-CAP-002",)),
    "streaming.multi_stream": Requirement(
        {"1.0": _r(_M, "§3.5.2 Streaming Event Delivery (Multiple Streams Per Task)",
                   "events MUST be broadcast to all active streams of a task, the same events in the same order; "
                   "closing one MUST NOT affect the others; the task's lifecycle is independent of any stream's "
                   "(serving several streams is MAY)")},
        ("STREAM-ORDER-002", "STREAM-ORDER-003", "STREAM-ORDER-004"),
        "0.3 and 0.2 say nothing about several streams of one task"),
    # --- errors (suite)
    "errors.parse_error": Requirement(_all(_M, "§9.5 Error Handling", _STD_ERR_03, "§8.1 Standard JSON-RPC Errors"),
                                      ("JSONRPC-ERR-001",)),
    "errors.invalid_request": Requirement(_all(_M, "§9.5 Error Handling", _STD_ERR_03,
                                               "§8.1 Standard JSON-RPC Errors"), ("CORE-ERR-002",)),
    "errors.unknown_method": Requirement(_all(_M, "§9.5 Error Handling", _STD_ERR_03,
                                              "§8.1 Standard JSON-RPC Errors"), ("JSONRPC-ERR-001",)),
    "errors.invalid_params": Requirement(_all(_M, "§3.3.2 Error Handling (validation)", _STD_ERR_03,
                                              "§8.1 Standard JSON-RPC Errors"), ("CORE-ERR-002",)),
    "errors.task_not_found": Requirement(
        {"1.0": _r(_M, _ERR_10, "TaskNotFoundError"), "0.3": _r(_S, _ERR_03), "0.2": _r(_S, _ERR_03)},
        ("CORE-GET-002", "JSONRPC-ERR-002", "JSONRPC-SSE-002"), _ERR_NOTE_03, bindings={"0.3": _ERR_BY_BINDING_03}),
    "errors.cancel_unknown": Requirement(
        {"1.0": _r(_M, "§3.1.5 Cancel Task (errors)", "TaskNotFoundError for a task that does not exist"),
         "0.3": _r(_S, _ERR_03, "TaskNotFoundError where applicable"),
         "0.2": _r(_S, _ERR_03, "TaskNotFoundError where applicable")},
        ("CORE-CANCEL-003", "JSONRPC-ERR-002", "JSONRPC-SSE-002"), _ERR_NOTE_03,
        bindings={"0.3": _ERR_BY_BINDING_03}),
    "errors.not_cancelable": Requirement(
        {"1.0": _r(_M, "§3.1.5 Cancel Task (errors)", "TaskNotCancelableError"), "0.3": _r(_S, _ERR_03),
         "0.2": _r(_S, _ERR_03)}, ("CORE-CANCEL-002", "JSONRPC-ERR-002", "JSONRPC-SSE-002")),
    "errors.version_not_supported": Requirement(
        {"1.0": _r(_M, "§3.6.2 Server Responsibilities", "an unsupported version MUST get VersionNotSupportedError")},
        ("VER-SERVER-002", "JSONRPC-ERR-002", "JSONRPC-SSE-002", "JSONRPC-SVC-002", "HTTP_JSON-SVC-002",
         "GRPC-META-001"), "0.3 and 0.2 have no A2A-Version"),
    "errors.patch_version_ignored": Requirement(
        {"1.0": _r(_M, "§3.6 Versioning", "Patch version numbers … MUST not be considered when clients and servers "
                   "negotiate protocol versions")}, ("VER-CLIENT-002",),
        "0.3 and 0.2 have no A2A-Version. Requests SHOULD NOT carry a patch number (§3.6), so GetTask for a missing "
        "task is sent with 1.0.1 once: only a refusal of the version fails (VersionNotSupportedError or a transport "
        "refusal); the answer itself is errors.task_not_found's"),
    "errors.push_not_supported": Requirement(
        {"1.0": _r(_M, "§3.3.4 Capability Validation", "push false: PushNotificationNotSupportedError"),
         "0.3": _r(_S, _ERR_03, "-32003 where applicable"), "0.2": _r(_S, _ERR_03, "-32003 where applicable")},
        ("CORE-CAP-001", "JSONRPC-ERR-002", "JSONRPC-SSE-002")),
    "errors.extended_card_not_declared": Requirement(
        {"1.0": _r(_M, "§3.3.4 Capability Validation", "extendedAgentCard false: UnsupportedOperationError"),
         "0.3": _r(_MAY, "§7.10 agent/getAuthenticatedExtendedCard",
                   "available only if supportsAuthenticatedExtendedCard; no error code is mandated")},
        ("CORE-CAP-003",), "0.2 serves the extended card by HTTP GET, not a JSON-RPC method (0.2.5 §7.10)"),
    "errors.content_type_not_supported": Requirement(
        # 1.0 names the error (§3.1.1) but words the rule itself as a SHOULD (§13.4); the TCK's CORE-SEND-003
        # runs it among its MUSTs, yet both official SDKs skip the check by default (validate_input_modes off)
        {"1.0": _r(_S, "§13.4 General Security Best Practices (Input Validation), §3.1.1 Send Message (errors)",
                   "Agents SHOULD sanitize or validate file content types and reject unexpected media types; "
                   "ContentTypeNotSupportedError: a Media Type in the message parts is not supported"),
         "0.3": _r(_S, _ERR_03, "-32005 ContentTypeNotSupportedError where applicable"),
         "0.2": _r(_S, _ERR_03, "-32005 ContentTypeNotSupportedError where applicable")},
        ("CORE-SEND-003",), "run only when the card's input modes do not cover the probe's media type. Deliberately "
        "below the TCK's CORE-SEND-003 (MUST): 1.0 names the error (§3.1.1) but words the rule itself a SHOULD "
        "(§13.4 \"Agents SHOULD ... reject unexpected media types\"), and both official SDKs skip the check by "
        "default (validate_input_modes / validateInputModes off)"),
    "errors.extension_required": Requirement(
        {"1.0": _r(_M, "§3.3.4 Capability Validation, §3.2.6 Service Parameters (A2A-Extensions)",
                   "a required: true extension the client does not declare: ExtensionSupportRequiredError"),
         "0.3": _r(_S, _EXT_03, _EXT_WORDS_03), "0.2": _r(_S, _EXT_03, _EXT_WORDS_03)},
        ("CORE-CAP-004",), "run only when the card declares a required extension"),
    "errors.missing_version_is_0_3": Requirement(
        {"1.0": _r(_M, "§3.6.2 Server Responsibilities, §3.6.1",
                   "Agents MUST interpret empty value as 0.3 version")},
        ("VER-SERVER-003",), "0.3 and 0.2 have no A2A-Version header; on gRPC the a2a-version metadata key (a 0.3 "
        "reading of lf.a2a.v1, a service 0.3 does not have, is a refusal)"),
    "errors.error_info": Requirement(
        # JSON-RPC (and an unknown binding): the lower of the two 1.0 texts. A 1.0 card says "1.0", never the patch
        # (§3.6: patch numbers MUST not be considered in negotiation), so the probe cannot tell a 1.0.0 agent, held
        # to 1.0.0's §9.5 MUST, from a 1.0.1 one, held to a SHOULD
        {"1.0": _r(_S, "§9.5 Error Handling (Error Detail Objects), §3.3.2",
                   "1.0.1: Implementations SHOULD use well-known types such as google.rpc.ErrorInfo (1.0.0: MUST "
                   "include an ErrorInfo in the data array)")},
        ("JSONRPC-ERR-003", "GRPC-ERR-001", "HTTP_JSON-ERR-002"),
        "0.3 error data is free-form. The texts differ by binding and patch: §10.6 (gRPC) and §11.6 (HTTP+JSON) say "
        "MUST in 1.0.0 and 1.0.1 (\"implementations MUST include a google.rpc.ErrorInfo\"); §9.5 (JSON-RPC) says "
        "MUST in 1.0.0 and, in 1.0.1, only \"Implementations SHOULD use well-known types such as "
        "google.rpc.ErrorInfo\". A card declares 1.0, not its patch, so JSON-RPC is graded SHOULD, the lower of the "
        "two; the HTTP/gRPC error-mapping evidence (errorMapping) is not used to raise it: the statuses that tell "
        "the mappings apart are other bindings' (often another server layer), few (409, 415, 502, UNIMPLEMENTED), "
        "and seen only when those errors were provoked, so the same JSON-RPC answer would be graded differently by "
        "which other calls ran. The TCK's JSONRPC-ERR-003 is a MUST, from the 1.0.0 wording",
        bindings={"1.0": {
            "grpc": _r(_M, "§10.6 Error Handling (A2A Error Representation)",
                       "For A2A-specific errors, implementations MUST include a google.rpc.ErrorInfo message in the "
                       "status.details array (reason, domain a2a-protocol.org)"),
            "http_json": _r(_M, "§11.6 Error Handling (A2A Error Representation)",
                            "implementations MUST include a google.rpc.ErrorInfo object in the details array for "
                            "A2A-specific errors (reason, domain a2a-protocol.org)")}}),
    "errors.details_typed": Requirement(
        {"1.0": _r(_M, "§3.3.2 Error Handling (Error Payload Structure), §9.5, §11.6",
                   "Each object in the data / details array MUST include a @type key that identifies the object's "
                   "type (ProtoJSON Any representation)")},
        ("JSONRPC-ERR-001", "HTTP_JSON-ERR-001"),
        "1.0.1 says it in so many words (§3.3.2, §9.5, §11.6); 1.0.0 says the same by its types: error.data and "
        "error.details are \"google.protobuf.Any messages, using ProtoJSON representation\", whose JSON form is "
        "an object with @type. gRPC details are binary Any, typed by construction (the catalogue limits the check to "
        "JSON-RPC and HTTP+JSON). 0.3 and 0.2 leave JSON-RPC error.data free-form (\"can be used to provide more "
        "structured details\") and give HTTP+JSON no format"),
    "errors.error_status": Requirement(
        {"1.0": _r(_M, "§5.4 Error Code Mappings",
                   "All A2A-specific errors MUST be mapped to binding-specific error representations (the table's "
                   "gRPC and HTTP statuses; 1.0.0's or 1.0.1's)"),
         "0.3": _r(_M, "§3.2.3 HTTP+JSON/REST Transport",
                   "MUST use appropriate HTTP status codes (200, 400, 401, 403, 404, 500, etc.) that correspond to "
                   "A2A error types")},
        ("GRPC-ERR-002", "HTTP_JSON-STATUS-001"),
        "Graded on the A2A-specific errors (-32001 to -32009) the agent answered over HTTP+JSON or gRPC during the "
        "run; JSON-RPC's own errors (-32700 to -32603) have categories, not a table. A card names 1.0, not its "
        "patch, so either 1.0 mapping passes (1.0.1 moved TaskNotCancelable 409 -> 400, ContentTypeNotSupported "
        "415 -> 400, InvalidAgentResponse 502 -> 500 and three errors UNIMPLEMENTED -> FAILED_PRECONDITION); the "
        "report's errorMapping says which one the agent follows (the TCK's GRPC-ERR-002 and HTTP_JSON-STATUS-001 hold "
        "1.0.0's table alone: UNIMPLEMENTED, 409, 415, 502). 0.3 HTTP+JSON: either 1.0 status or the one the "
        "official SDKs' 0.3 REST servers chose (probe.wire.a2a_errors.http_statuses_03). 0.3 gRPC is not graded: "
        "§3.2.2 refers to \"the proto annotations\", which the 0.3 proto does not have, and the official 0.3 "
        "servers differ (a2a-sdk 0.3 sends TaskNotCancelable as UNIMPLEMENTED). 0.2 gives no HTTP or gRPC error "
        "mapping",
        bindings={"0.3": {"grpc": None}}),  # JSON-RPC: the catalogue limits the check to HTTP+JSON and gRPC
    "errors.response_id": Requirement(
        {"1.0": _r(_M, "§9.1 Protocol Requirements, §9.5 Error Handling",
                   "JSON-RPC 2.0 over HTTP(S); errors use the standard JSON-RPC 2.0 error object (JSON-RPC 2.0 §5: "
                   "id is REQUIRED, the request's id, or null when it could not be detected)"),
         "0.3": _r(_M, "§6.11.2 JSONRPCResponse Object, §3.2.1, §11.1.5",
                   "id: This member is REQUIRED. It MUST be the same as the value of the id member in the Request "
                   "Object. If there was an error in detecting the id in the Request object (e.g. Parse "
                   "error/Invalid Request), it MUST be null"),
         "0.2": _r(_M, "§6.11.2 JSONRPCResponse Object, §3.2 Data Format",
                   "id: This member is REQUIRED. It MUST be the same as the value of the id member in the Request "
                   "Object. If there was an error in detecting the id in the Request object (e.g. Parse "
                   "error/Invalid Request), it MUST be null")},
        ("JSONRPC-FMT-001",),
        "Judged over every JSON-RPC error answer of the suite (the errors.*, lifecycle.* and streaming.* checks that "
        "provoke one): the id member present; null for the probe's unparsable body; else the request's id, or null "
        "with -32700/-32600 (the agent says it could not read the request, JSON-RPC 2.0 §5's \"e.g. Parse "
        "error/Invalid Request\"). 0.3 and 0.2 state the rule in their own words (§6.11.2; §3.2.1 / §3.2: \"server "
        "responses MUST adhere to the JSON-RPC 2.0 specification\"; the 0.3 and 0.2 JSON schemas' "
        "JSONRPCErrorResponse requires id); 1.0 does not restate it but makes the binding JSON-RPC 2.0 (§9.1) with "
        "\"the standard JSON-RPC 2.0 error object\" (§9.5), a MUST as invoke.framing's id. A finding, not a failed "
        "call nor a failed errors.* check: every official client reads such an error (a2a-sdk 1.x never reads the "
        "response id, its 0.3/0.2 models default it to None, @a2a-js/sdk 1.x reads a unary error before it compares "
        "ids; only @a2a-js/sdk 0.3 compares first, and refuses it). A result whose id is wrong stays a framing "
        "fault (invoke.framing, stream.events_parse)"),
    "errors.no_server_errors": Requirement(
        _all(_M, "§3.3.2 Error Handling", "§8 Error Handling",
             words="bad requests get errors, not crashes (a 5xx or a dropped connection)"), ("CORE-ERR-001",)),
    # --- security (suite)
    "security.unauthenticated_rejected": Requirement(
        _all(_M, "§7.4 Server Authentication Responsibilities", "§4.4 Server Responsibilities for Authentication",
             words="servers MUST authenticate every request"), ("AUTH-SERVER-002",)),
    "security.extended_card_auth": Requirement(
        {"1.0": _r(_M, "§13.3 Extended Agent Card Access Control, §3.1.11",
                   "The Get Extended Agent Card operation MUST require authentication"),
         # 0.3 and 0.2 put the MUST on the client ("The client MUST authenticate"); the server's refusal is only
         # implied by "401 Unauthorized: authentication failed", so it is graded a SHOULD there
         "0.3": _r(_S, "§7.10 agent/getAuthenticatedExtendedCard, §4.4",
                   "the client MUST authenticate the request; 401 Unauthorized for missing credentials"),
         "0.2": _r(_S, "§7.10 agent/authenticatedExtendedCard (HTTP GET), §4.4",
                   "the client MUST authenticate the request; 401 Unauthorized for missing credentials")},
        ("CARD-EXT-001",), "run only when the card declares an extended card"),
    "security.scoped_access": Requirement(
        {"1.0": _r(_M, "§13.1 Data Access and Authorization Scoping, §3.3.2 Error Handling (Authorization Errors)",
                   "MUST implement authorization checks on every operation; MUST scope results to the caller's "
                   "authorized access boundaries (List Tasks MUST only return tasks visible to the caller, Get Task, "
                   "Cancel and Subscribe MUST verify access); MUST NOT reveal the existence of resources the client "
                   "is not authorized to access")},
        ("AUTH-SCOPE-001", "AUTH-SCOPE-002", "AUTH-SCOPE-003"),
        "Run only with a second identity the operator configures (check --other-bearer-token-env / --other-header, "
        "the daemon's other_auth) as another caller the agent's authorization model must keep apart from the first: "
        "the model is the agent's (§13.1: \"not prescribed by the protocol\"), so the probe takes the operator's "
        "word that the two may not share tasks. The first identity's task (GetTask works for it: the positive "
        "control) must be, for the second, what an id that does not exist is: the same A2A error, HTTP status and "
        "gRPC status on GetTask, CancelTask, ListTaskPushNotificationConfigs (push notifications declared: "
        "\"every operation\"; its configs are the task's), SubscribeToTask (streaming declared) and ListTasks, "
        "never listed. "
        "0.3 and 0.2.5 (§4.6 Authorization) leave authorization \"implementation-specific\" (\"MAY be enforced "
        "based on … data access policies\"; \"servers should implement the principle of least privilege\", no "
        "RFC 2119 keyword) and say nothing of another caller's tasks or of revealing their existence: not graded "
        "there"),
    "security.challenge": Requirement(
        _all(_S, "§3.3.2 Error Handling (authentication)", "§4.4 Server Responsibilities for Authentication",
             words="a 401 SHOULD carry a WWW-Authenticate challenge")),
    # --- interop between two agents
    "interop.common_interface": Requirement(
        _all(_M, "§5.2 Protocol Selection and Negotiation", "§3.4.2 Transport Selection and Negotiation",
             "§3.1 Transport Protocol", "two agents can talk only over a binding and version both speak")),
    "interop.parse_each_other": Requirement(
        {"1.0": _r(_M, "§5.1 Functional Equivalence, §1.4 Normative Content",
                   "both sides use the proto's ProtoJSON form, which the other's client parses"),
         "0.3": _r(_M, "§11.1.5 Data Format Compliance", "both sides use the data structures of §6"),
         "0.2": _r(_M, "§6 Protocol Data Objects", "both sides follow the schema")}),
    "interop.both_callable": Requirement(_all(_M, "§3.1.1 Send Message", "§7.1 message/send")),
    "interop.no_cross_talk": Requirement(
        _all(_M, "§3.4.2 Task Identifier Semantics", "§6.1 Task Object", words="tasks are separate units of work")),
    "interop.delegation": Requirement(
        _all(_S, "§1.1 Key Goals of A2A", "§1.1 Key Goals of A2A", words="agents delegate to one another"),
        note="the operator's scenario, graded SHOULD"),
    "interop.bindings_agree": Requirement(
        {"1.0": _r(_M, "§5.1 Functional Equivalence Requirements",
                   "When an agent supports multiple protocols, all supported protocols MUST: provide the same set of "
                   "operations; return semantically equivalent results for the same requests; map errors "
                   "consistently"),
         "0.3": _r(_M, "§3.4.1 Functional Equivalence Requirements",
                   "When an agent supports multiple transports, all supported transports MUST: provide the same set "
                   "of operations; return semantically equivalent results for the same requests; map errors "
                   "consistently")},
        ("BIND-EQUIV-001", "BIND-EQUIV-002", "BIND-EQUIV-003"),
        "checked by `--binding all` across the card's interfaces; graded MUST as 1.0 §5.1 and 0.3 §3.4.1 word it "
        "(and the TCK's BIND-EQUIV-001..003). 0.2 has one transport (JSON-RPC)"),
    "interop.bindings_same_auth": Requirement(
        {"1.0": _r(_M, "§5.1 Functional Equivalence Requirements", "all supported protocols MUST: … Equivalent "
                   "Authentication: support the same authentication schemes declared in the AgentCard"),
         "0.3": _r(_M, "§3.4.1 Functional Equivalence Requirements", "all supported transports MUST: … Equivalent "
                   "Authentication: support the same authentication schemes declared in the AgentCard")},
        ("BIND-EQUIV-004",),
        "checked by `--binding all` and the suite on a card that declares security: a GetTask without credentials "
        "on each interface (refused or processed alike) and the invoke's credentials (accepted or refused alike). "
        "0.2 has one transport (JSON-RPC)"),
    # --- push notifications (issue 10); 0.2.5 numbers these sections as 0.3 does
    "push.config_create": Requirement(
        _all(_M, "§3.1.7 Create Push Notification Config", "§7.5 tasks/pushNotificationConfig/set"),
        ("PUSH-CREATE-001",)),
    "push.config_get": Requirement(
        _all(_M, "§3.1.8 Get Push Notification Config", "§7.6 tasks/pushNotificationConfig/get"), ("PUSH-GET-001",)),
    "push.config_list": Requirement(
        {"1.0": _r(_M, "§3.1.9 List Push Notification Configs"),
         "0.3": _r(_M, "§7.7 tasks/pushNotificationConfig/list")}, ("PUSH-LIST-001",), "0.2 has no list method"),
    "push.config_delete": Requirement(
        {"1.0": _r(_M, "§3.1.10 Delete Push Notification Config"),
         "0.3": _r(_M, "§7.8 tasks/pushNotificationConfig/delete")},
        ("PUSH-DEL-001", "PUSH-DEL-002", "PUSH-GET-002"),
        "0.2 has no delete method. The get after the deletes is PUSH-GET-002 (§3.1.8: get MUST fail for a config "
        "that does not exist); the second delete succeeding is PUSH-DEL-002 (§3.1.10: MUST be idempotent), graded on "
        "1.0 only: 0.3 §7.8 asks no idempotency (a refused second delete is reported, not graded)"),
    "push.unknown_task": Requirement(
        {"1.0": _r(_M, "§3.1.7 (errors)", "TaskNotFoundError"), "0.3": _r(_S, _ERR_03), "0.2": _r(_S, _ERR_03)}),
    "push.delivered": Requirement(
        _all(_M, "§3.5.3 Push Notification Delivery, §4.3.3", "§6.8 PushNotificationConfig, §9.5"),
        ("PUSH-DELIVER-002", "PUSH-CREATE-002")),
    "push.in_order": Requirement(
        {"1.0": _r(_M, "§3.5.3 Push Notification Delivery, §4.3.3"),
         "0.3": _r(_S, "§9.5 Push Notification Setup and Usage", "updates as the task changes (no MUST)"),
         "0.2": _r(_S, "§9.5 Push Notification Setup and Usage", "updates as the task changes (no MUST)")}),
    "push.names_task": Requirement(
        {"1.0": _r(_M, "§4.3.3 Push Notification Payload", "a StreamResponse of the task (clients MUST check the id)"),
         "0.3": _r(_S, _PUSH_BODY_03, "the notification SHOULD identify the Task ID and its new state"),
         "0.2": _r(_S, _PUSH_BODY_03, "the notification SHOULD identify the Task ID and its new state")}),
    "push.authenticated": Requirement(
        _all(_M, "§4.3.2 AuthenticationInfo, §13.2", "§6.9 PushNotificationAuthenticationInfo Object"),
        ("PUSH-DELIVER-001",)),
    "push.payload": Requirement(
        {"1.0": _r(_M, "§4.3.3 Push Notification Payload", "the body is a StreamResponse (application/a2a+json)"),
         "0.3": _r(_S, _PUSH_BODY_03, _PUSH_BODY_WORDS_03), "0.2": _r(_S, _PUSH_BODY_03, _PUSH_BODY_WORDS_03)},
        ("PUSH-DELIVER-003",), "0.3/0.2: strict JSON naming the task and its state is all that is graded"),
    # --- the probe itself
    "probe.completed": Requirement(
        _all(_M, "—", "—", words="not a rule of the texts: the probe ran (a failure here is never the agent's)"),
        note="carries probe_error / probe_config_error so JUnit and the exit code agree"),
}

# requirements of the texts that no check tests yet, with the official TCK's ids for them (a2a-tck 1.0-dev;
# tests/unit/test_tck_coverage.py holds every TCK id to a check, an entry here, or TCK_NOT_APPLICABLE)
UNCOVERED: tuple[Uncovered, ...] = (
    Uncovered(
        "lifecycle.auth_required", "An agent that needs authorization mid-task asks for it in the task "
        "(TASK_STATE_AUTH_REQUIRED with a status message) and keeps streams and messages open meanwhile",
        {"1.0": _r(_M, "§7.6.1 In-Task Authorization Agent Responsibilities", "MUST use a Task, MUST transition to "
                   "TASK_STATE_AUTH_REQUIRED, MUST include a TaskStatus message explaining it, MUST arrange to "
                   "receive credentials out-of-band; SHOULD keep streams and accept messages meanwhile")},
        "no request makes an arbitrary agent need in-task authorization: it would take an agent-specific prompt "
        "(as --input-prompt does for INPUT_REQUIRED), and how the agent receives the credential out-of-band is its "
        "own arrangement", tuple(f"AUTH-INTASK-00{i}" for i in range(1, 7))),
)

# the official TCK's requirement ids (a2a-tck 1.0-dev) that are no rule a server probe can grade, with why
TCK_NOT_APPLICABLE: Mapping[str, str] = {
    "CORE-MULTI-001": "a MAY (§3.4.1: agents MAY generate a contextId): generating one or not both conform; the "
    "MUST that it then be in the response (CORE-MULTI-001a) is invoke.result_shape's",
    "CORE-MULTI-002": "a MAY (§3.4.1: agents MAY accept a client's contextId): both conform; the MUST to refuse one "
    "without inventing another (CORE-MULTI-002a) is lifecycle.context_continuity's",
    "VER-CLIENT-001": "a client's MUST (§3.6.1 Client Responsibilities: send A2A-Version with each request); the "
    "probe sends it on every 1.0 request",
    "CARD-SIGN-004": "a verifier's MUST (§8.4.3: expired or revoked keys MUST NOT be used for verification): the "
    "client's rule; card.signature verifies only under the keys the operator trusts",
}


def requirement(check_id: str) -> Requirement:
    return REQUIREMENTS[check_id]


@dataclass(frozen=True, slots=True)
class NotTested:
    id: str
    title: str
    level: Severity
    section: str
    why: str


def not_tested(version: str | None, ran: Mapping[str, tuple[str, str]], *, suite: bool,
               binding: str | None = None) -> list[NotTested]:
    """Every requirement of `version` that no check ran, with why: `ran` is check id -> (status, message);
    `binding` the registry name of the binding probed (None: not known)."""
    from probe.checks.catalogue import BY_ID, SUITE_CHECKS

    fam = ".".join((version or "").split(".")[:2])
    if fam not in VERSIONS:
        return []
    suite_ids = {c.id for c in SUITE_CHECKS}
    out: list[NotTested] = []
    for check_id, req in REQUIREMENTS.items():
        rule = req.rule(fam, binding)
        if rule is None or check_id == "probe.completed":
            continue
        status, message = ran.get(check_id, ("", ""))
        if status in ("pass", "fail"):
            continue
        if status == "skip":
            why = message
        elif check_id in suite_ids and not suite:
            why = "runs with --suite full"
        else:
            why = "not reached: an earlier step stopped the run"
        out.append(NotTested(check_id, BY_ID[check_id].title, rule.level, rule.section, why))
    for gap in UNCOVERED:
        rule = gap.rules.get(fam)
        if rule is not None:
            out.append(NotTested(gap.id, gap.title, rule.level, rule.section, f"no check yet: {gap.why}"))
    return out
