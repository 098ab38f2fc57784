"""The requirement registry covers every check, and grading follows the probed version's text."""

from __future__ import annotations

import pytest

from probe.checks import grading
from probe.checks.catalogue import ALL_CHECKS, Severity, make_check
from probe.checks.registry import REQUIREMENTS, UNCOVERED, VERSIONS, not_tested
from probe.docs import checks_md
from probe.results import ProbeResult, Status


def test_the_registry_covers_every_check_and_nothing_else() -> None:
    assert set(REQUIREMENTS) == {c.id for c in ALL_CHECKS}


@pytest.mark.parametrize("check_id", sorted(REQUIREMENTS))
def test_every_rule_names_a_version_a_level_and_a_section(check_id: str) -> None:
    req = REQUIREMENTS[check_id]
    assert req.rules, f"{check_id} applies to no version"
    for version, rule in req.rules.items():
        assert version in VERSIONS
        assert isinstance(rule.level, Severity)
        assert rule.section.startswith("§") or check_id == "probe.completed", (check_id, version, rule.section)


def test_uncovered_requirements_are_not_also_checks() -> None:
    ids = [u.id for u in UNCOVERED]
    assert len(ids) == len(set(ids)) and not set(ids) & set(REQUIREMENTS)
    assert all(u.rules and u.why for u in UNCOVERED)


def test_the_generated_catalogue_shows_every_check_with_its_sections() -> None:
    doc = checks_md()
    for check_id, req in REQUIREMENTS.items():
        row = next(line for line in doc.splitlines() if line.startswith(f"| `{check_id}` |"))
        for rule in req.rules.values():
            assert f"{rule.level.value} {rule.section}" in row
    assert all(f"| `{u.id}` |" in doc for u in UNCOVERED)


def _result(version: str, *checks: tuple[str, Status, str]) -> ProbeResult:
    result = ProbeResult(agent="a", target_url="http://x", protocol_version=version)
    result.checks = [make_check(cid, status, msg) for cid, status, msg in checks]
    return result


def test_a_1_0_rule_is_not_graded_for_a_0_3_agent_and_says_what_was_seen() -> None:
    result = _result("0.3", ("card.cache_headers", Status.FAIL, "missing ETag"))
    grading.grade(result)
    (c,) = result.checks
    assert c.status is Status.SKIP and c.recommendation == ""
    assert c.message.startswith("not graded: A2A 0.3 has no such requirement (1.0 §8.6.1")
    assert c.message.endswith("observed: missing ETag")
    grading.grade(result)
    assert result.checks[0].message == c.message  # grading twice changes nothing


@pytest.mark.parametrize(("version", "level"), [("1.0", Severity.MUST), ("0.3", Severity.SHOULD),
                                                ("0.2.5", Severity.SHOULD)])
def test_levels_come_from_the_probed_version(version: str, level: Severity) -> None:
    result = _result(version, ("invoke.blocking", Status.FAIL, "returned WORKING"))
    grading.grade(result)
    assert result.checks[0].severity is level and result.checks[0].status is Status.FAIL


def test_the_0_2_extended_card_is_not_a_json_rpc_method() -> None:
    assert grading.level_of("errors.extended_card_not_declared", "0.2") is None
    assert grading.level_of("errors.extended_card_not_declared", "0.3") is Severity.MAY


def test_not_tested_lists_what_no_check_ran_with_why() -> None:
    listed = {n.id: n for n in not_tested("1.0", {"card.discovered": ("pass", ""),
                                                  "card.signature": ("skip", "no trusted JWKS")}, suite=False)}
    assert "card.discovered" not in listed
    assert listed["card.signature"].why == "no trusted JWKS"
    assert listed["lifecycle.cancel"].why == "runs with --suite full"
    for gap in (u.id for u in UNCOVERED if "1.0" in u.rules):  # requirements no check tests yet
        assert listed[gap].why.startswith("no check yet")
    assert listed["lifecycle.list_tasks"].level is Severity.MUST  # a check now, listed while it did not run
    assert "lifecycle.list_tasks" not in {n.id for n in not_tested("0.3", {}, suite=True)}  # a 1.0-only operation


# errors.error_info: 1.0.0 and 1.0.1 §10.6 (gRPC) "implementations MUST include a google.rpc.ErrorInfo message in the
# status.details array", §11.6 (HTTP+JSON) the same MUST; §9.5 (JSON-RPC) MUST in 1.0.0, in 1.0.1 "Implementations
# SHOULD use well-known types such as google.rpc.ErrorInfo": the lower of the two, as a card names no patch
@pytest.mark.parametrize(("binding", "level"), [("GRPC", Severity.MUST), ("HTTP+JSON", Severity.MUST),
                                                ("grpc", Severity.MUST), ("http_json", Severity.MUST),
                                                ("JSONRPC", Severity.SHOULD), (None, Severity.SHOULD)])
def test_error_info_is_graded_by_the_binding_it_ran_on(binding: str | None, level: Severity) -> None:
    result = _result("1.0", ("errors.error_info", Status.FAIL, "ErrorInfo entries: []"))
    result.binding = binding
    grading.grade(result)
    assert result.checks[0].severity is level
    assert grading.level_of("errors.error_info", "1.0.1", binding) is level


def test_a_tagged_check_is_graded_by_its_own_interface_binding() -> None:
    """`--binding all`: the top-level binding is the first interface's; each check names its own."""
    result = _result("1.0", ("errors.error_info", Status.FAIL, "no ErrorInfo"), ("errors.error_info", Status.FAIL, "x"))
    result.binding = "JSONRPC"
    result.checks[0] = result.checks[0].model_copy(update={"interface": "grpc 1.0"})
    grading.grade(result)
    assert [c.severity for c in result.checks] == [Severity.MUST, Severity.SHOULD]


def test_the_binding_rule_is_the_one_reports_quote() -> None:
    from probe.report import to_dict

    result = _result("1.0", ("errors.error_info", Status.FAIL, "no ErrorInfo"))
    result.binding = "GRPC"
    grading.grade(result)
    (row,) = to_dict(result)["results"]
    assert row["severity"] == "MUST" and row["requirement"]["level"] == "MUST"
    assert row["requirement"]["section"].startswith("§10.6")
    rpc = {n.id: n for n in not_tested("1.0", {}, suite=True, binding="jsonrpc")}
    grpc = {n.id: n for n in not_tested("1.0", {}, suite=True, binding="grpc")}
    assert rpc["errors.error_info"].level is Severity.SHOULD and grpc["errors.error_info"].level is Severity.MUST
    row_md = next(line for line in checks_md().splitlines() if line.startswith("| `errors.error_info` |"))
    assert "grpc: MUST §10.6" in row_md and "http_json: MUST §11.6" in row_md


def test_binding_rules_name_known_bindings_of_listed_versions() -> None:
    for check_id, req in REQUIREMENTS.items():
        for version, by_binding in req.bindings.items():
            assert version in req.rules, (check_id, version)
            assert set(by_binding) <= {"jsonrpc", "http_json", "grpc"}, (check_id, by_binding)


# 1.0 §5.5 "All JSON serializations of the A2A protocol data model MUST use camelCase"; §5.6.1 timestamps "serialized
# to JSON (in JSON-RPC, HTTP/REST, or other JSON-based bindings)": gRPC sends protobuf binary, the probe renders it
@pytest.mark.parametrize("check_id", ["invoke.camel_case", "invoke.timestamps_utc"])
def test_json_serialization_rules_are_not_graded_on_grpc(check_id: str) -> None:
    result = _result("1.0", (check_id, Status.PASS, "seen"))
    result.binding = "GRPC"
    grading.grade(result)
    (c,) = result.checks
    assert c.status is Status.SKIP
    assert c.message.startswith("not graded: A2A 1.0 states it for other bindings than grpc")
    assert grading.level_of(check_id, "1.0", "HTTP+JSON") is Severity.MUST
    assert check_id not in {n.id for n in not_tested("1.0", {}, suite=True, binding="grpc")}
    assert check_id in {n.id for n in not_tested("1.0", {}, suite=True, binding="jsonrpc")}


# 0.3 §8.2 "Servers SHOULD use these codes where applicable" (JSON-RPC, gRPC); §3.2.3 (REST) Error Format "MUST return
# error responses in a consistent JSON format that maps to A2A error types". The status is errors.error_status's:
# §3.2.3 "MUST use appropriate HTTP status codes … that correspond to A2A error types"; §3.2.2's gRPC "MUST map A2A
# error codes to appropriate gRPC status codes as defined in the proto annotations" is about the status alone
@pytest.mark.parametrize("check_id", ["errors.task_not_found", "errors.cancel_unknown"])
@pytest.mark.parametrize(("binding", "level"), [("JSONRPC", Severity.SHOULD), ("HTTP+JSON", Severity.MUST),
                                                ("GRPC", Severity.SHOULD), (None, Severity.SHOULD)])
def test_a_0_3_unknown_task_error_is_a_must_on_http_json_only(check_id: str, binding: str | None,
                                                              level: Severity) -> None:
    result = _result("0.3", (check_id, Status.FAIL, "HTTP 500"))
    result.binding = binding
    grading.grade(result)
    assert result.checks[0].severity is level
    assert grading.level_of(check_id, "1.0", binding) is Severity.MUST  # 1.0: MUST on every binding


# the status is graded apart from the error's name: 0.3 HTTP+JSON MUST (§3.2.3), 0.3 gRPC not graded (§3.2.2 names
# proto annotations the 0.3 proto does not have), 1.0 MUST on both (§5.4)
@pytest.mark.parametrize(("version", "binding", "level"), [
    ("1.0", "HTTP+JSON", Severity.MUST), ("1.0", "GRPC", Severity.MUST),
    ("0.3", "HTTP+JSON", Severity.MUST), ("0.3", "GRPC", None)])
def test_error_status_levels_apart_from_the_error(version: str, binding: str, level: Severity | None) -> None:
    assert grading.level_of("errors.error_status", version, binding) is level


# where a check is graded below the TCK requirement it names, the entry says why (a2a-tck 1.0-dev, tck/requirements)
def test_tck_level_differences_are_explained() -> None:
    below = {"card.extended": "CARD-EXT-002", "card.https": "AUTH-TLS-001",
             "interface.scheme": "AUTH-TLS-001", "errors.error_info": "JSONRPC-ERR-003",
             "errors.content_type_not_supported": "CORE-SEND-003", "invoke.content_type": "JSONRPC-FMT-002"}
    for check_id, tck in below.items():
        req = REQUIREMENTS[check_id]
        assert tck in req.tck and ("TCK" in req.note or "TCK" in str(req.rules)), check_id
    # a signed card is held to the TCK's CARD-SIGN MUSTs; whether it is signed at all is the operator's SHOULD
    assert grading.level_of("card.signature", "1.0", "JSONRPC") is Severity.MUST
    assert grading.level_of("card.signature_trusted", "1.0", "JSONRPC") is Severity.SHOULD
    # mis-mappings fixed against the TCK's requirement texts (a2a-tck 1.0-dev, tck/requirements)
    assert REQUIREMENTS["card.well_known_path"].tck == ()  # CARD-DISC-001 is "an Agent Card is available"
    assert REQUIREMENTS["lifecycle.input_required"].tck == ()  # CORE-MULTI-001 is the MAY of generating a contextId
    assert REQUIREMENTS["lifecycle.context_continuity"].tck == ("CORE-MULTI-002a",)  # keep or reject: the MUST
    assert REQUIREMENTS["lifecycle.unknown_task_message"].tck == ("CORE-MULTI-004",)


# 1.0 §5.1 "When an agent supports multiple protocols, all supported protocols MUST: … Consistent Behavior … Same
# Error Handling" (the TCK's BIND-EQUIV-001..003): graded MUST, not SHOULD
def test_bindings_agree_is_a_must() -> None:
    assert grading.level_of("interop.bindings_agree", "1.0", None) is Severity.MUST
    assert REQUIREMENTS["interop.bindings_agree"].rule("1.0").section.startswith("§5.1")
