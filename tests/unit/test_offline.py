"""Offline validation (`probe.offline`): every fixture under tests/fixtures/offline declares its verdict.

Each fixture `<name>` has a sidecar `<name>.expect.json`:
`{"exit": 0|1, "reason": null (optional), "fail": {"<check id>": ["fragment", …]}, "pass": [...], "skip": [...]}`.
A declared failing check must fail with every fragment in its message, declared passing/skipped checks
must pass/skip, no undeclared check may fail, and the CLI exit code must match. Adding a fixture file
(with its sidecar) adds a test.
"""

from __future__ import annotations

import argparse
import json
import socket
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from probe import offline
from probe.checks.catalogue import BY_ID
from probe.results import ProbeResult, Status
from probe.wire.dialects import V03, V1

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "offline"
EXPECT = ".expect.json"


def _fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.name.startswith(("card-", "transcript-"))
                  and not p.name.endswith(EXPECT) and p.suffix in (".json", ".sse"))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="a2a-probe")
    sub = p.add_subparsers(dest="command", required=True)
    offline.add_parser(sub)
    return p


def _run(*argv: str) -> int:
    args = _parser().parse_args(["validate", *argv])
    assert args.command == "validate"
    return offline.cmd_validate(args)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline means offline: any attempt to open a connection fails the test."""
    def refuse(*_a: Any, **_k: Any) -> None:
        raise AssertionError("offline validation tried to use the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# ---- the fixture corpus


@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda p: p.name)
def test_fixture_verdict(fixture: Path, tmp_path: Path) -> None:
    expect = json.loads((fixture.parent / (fixture.name + EXPECT)).read_text())
    kind = "card" if fixture.name.startswith("card-") else "transcript"
    out = tmp_path / "report.json"
    code = _run(kind, str(fixture), "--format", "json", "--output", str(out))
    report = json.loads(out.read_text())
    ids = [r["test"] for r in report["results"]]
    assert len(ids) == len(set(ids)), f"a check id is recorded twice: {ids}"
    assert set(ids) <= set(BY_ID)
    results = {r["test"]: r for r in report["results"]}
    failed = {cid for cid, r in results.items() if r["status"] == "fail"}
    assert failed == set(expect["fail"]), {cid: results[cid]["message"] for cid in failed}
    for cid, fragments in expect["fail"].items():
        for fragment in fragments:
            assert fragment in results[cid]["message"], (cid, fragment, results[cid]["message"])
    for cid in expect["pass"]:
        assert cid in results and results[cid]["status"] == "pass", (cid, results.get(cid))
    for cid in expect.get("skip", []):
        assert cid in results and results[cid]["status"] == "skip", (cid, results.get(cid))
    assert code == expect["exit"]
    assert report["success"] is (code == 0)
    assert report["agent"] == fixture.name
    if "reason" in expect:  # null: a MUST the official clients read past fails the file, and names no reason
        assert report["reason"] == expect["reason"]
    elif expect["exit"] == 1:
        assert report["reason"], "a MUST failure the official clients do not read past names a primary reason"


def test_every_fixture_has_an_expectation_and_vice_versa() -> None:
    fixtures = {p.name for p in _fixtures()}
    sidecars = {p.name[: -len(EXPECT)] for p in FIXTURES.glob("*" + EXPECT)}
    assert fixtures == sidecars
    assert len(fixtures) >= 20


def test_line_endings_of_the_sse_fixtures_are_what_they_claim() -> None:
    crlf = (FIXTURES / "transcript-valid-0.3.sse").read_bytes()
    lf = (FIXTURES / "transcript-valid-1.0.sse").read_bytes()
    assert crlf.count(b"\r\n") == crlf.count(b"\n") > 0
    assert b"\r" not in lf
    detail = {name: offline.validate_transcript_file(FIXTURES / name).steps[0].detail
              for name in ("transcript-valid-0.3.sse", "transcript-valid-1.0.sse")}
    assert detail["transcript-valid-0.3.sse"].endswith(", CRLF line endings")
    assert detail["transcript-valid-1.0.sse"].endswith(", LF line endings")


def test_primary_reasons() -> None:
    reason = {name: offline.validate_transcript_file(FIXTURES / name).reason for name in (
        "transcript-part-text-and-raw.json", "transcript-terminal-regression.json",
        "transcript-terminal-regression.sse", "transcript-task-id-changes.sse", "transcript-no-terminal.sse",
        "transcript-completed-without-artifact.json")}
    assert reason == {"transcript-part-text-and-raw.json": "invoke_bad_result",
                      "transcript-terminal-regression.json": "stream_state_regression",
                      "transcript-terminal-regression.sse": "stream_state_regression",
                      "transcript-task-id-changes.sse": "stream_protocol_violation",
                      "transcript-no-terminal.sse": "stream_no_terminal",
                      "transcript-completed-without-artifact.json": None}  # SHOULD only: reported, not failed
    assert offline.validate_card_file(FIXTURES / "card-nan.json").reason == "card_invalid"
    assert offline.validate_card_file(FIXTURES / "card-legacy-0.1.json").reason is None


# ---- cards beyond the corpus


def test_card_over_one_mebibyte_fails_card_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b'{"name": "' + b"x" * (1 << 20) + b'"}')
    r = offline.validate_card_file(big)
    size = r.check("card.size")
    assert size is not None and size.status is Status.FAIL
    assert "over the 1 MiB limit" in size.message and str(big.stat().st_size) in size.message
    assert r.check("card.strict_json") is None
    assert offline.exit_code(r) == 1 and r.reason == "card_invalid"


def test_card_that_is_not_an_object(tmp_path: Path) -> None:
    f = tmp_path / "list.json"
    f.write_text("[]")
    c = offline.validate_card_file(f).check("card.strict_json")
    assert c is not None and c.status is Status.FAIL and "a JSON list, not an object" in c.message


def test_card_report_names_the_file_and_the_card() -> None:
    r = offline.validate_card_file(FIXTURES / "card-valid-hybrid.json")
    assert (r.agent, r.card_name, r.card_version, r.protocol_version) == (
        "card-valid-hybrid.json", "Travel Agent", "2.0.0", "1.0")
    assert "hybrid" in r.steps[-1].detail


# ---- transcripts beyond the corpus


def _write(tmp_path: Path, name: str, doc: Any) -> Path:
    f = tmp_path / name
    f.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return f


def _task(state: str, **extra: Any) -> dict[str, Any]:
    return {"id": "t", "contextId": "c", "status": {"state": state}, **extra}


def test_a2a_version_overrides_the_file(tmp_path: Path) -> None:
    r = offline.validate_transcript_file(FIXTURES / "transcript-valid-0.3.json", "1.0")
    dialect = r.check("invoke.dialect")
    assert dialect is not None and dialect.status is Status.FAIL and "that is the 0.3 spelling" in dialect.message
    assert r.protocol_version == "1.0" and "--a2a-version" in r.steps[0].detail
    assert _run("transcript", str(FIXTURES / "transcript-valid-0.3.json"), "--a2a-version", "1.0") == 1


def test_snapshots_may_be_wrapped_sendmessage_results(tmp_path: Path) -> None:
    art = {"artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}]}
    f = _write(tmp_path, "t.json", [{"task": _task("TASK_STATE_WORKING")}, _task("TASK_STATE_COMPLETED", **art)])
    r = offline.validate_transcript_file(f)
    assert r.protocol_version == "1.0" and not r.failed_checks()


def test_unsniffable_snapshots_are_judged_as_1_0_and_say_so(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.json", [{"id": "t", "contextId": "c", "status": {"state": 3}}])
    r = offline.validate_transcript_file(f)
    assert "not detectable, judged as 1.0" in r.steps[0].detail
    dialect = r.check("invoke.dialect")
    assert dialect is not None and "status.state 3 is the enum's number" in dialect.message


def test_repeated_terminal_snapshots_are_not_a_regression(tmp_path: Path) -> None:
    art = {"artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}]}
    f = _write(tmp_path, "t.json", {"protocolVersion": "1.0", "snapshots": [
        _task("TASK_STATE_INPUT_REQUIRED"), _task("TASK_STATE_WORKING"), _task("TASK_STATE_COMPLETED", **art),
        _task("TASK_STATE_COMPLETED", **art)]})
    r = offline.validate_transcript_file(f)
    c = r.check("stream.no_regression")
    assert c is not None and c.status is Status.PASS
    assert c.message == "INPUT_REQUIRED -> WORKING -> COMPLETED"


def test_terminal_to_another_terminal_is_a_regression(tmp_path: Path) -> None:
    f = _write(tmp_path, "t.json", {"protocolVersion": "1.0", "snapshots": [
        _task("TASK_STATE_FAILED"), _task("TASK_STATE_CANCELED")]})
    c = offline.validate_transcript_file(f).check("stream.no_regression")
    assert c is not None and c.status is Status.FAIL and "FAILED -> CANCELED" in c.message


def test_sse_with_a_byte_order_mark_and_no_sse_suffix(tmp_path: Path) -> None:
    body = (FIXTURES / "transcript-valid-1.0.sse").read_bytes()
    f = tmp_path / "recording.txt"
    f.write_bytes(b"\xef\xbb\xbf" + body.split(b"\n", 1)[1])  # starts with data: after the BOM
    r = offline.validate_transcript_file(f)
    assert r.binding == "JSONRPC" and not r.failed_checks() and r.success


def test_sse_ending_mid_event(tmp_path: Path) -> None:
    body = (FIXTURES / "transcript-valid-1.0.sse").read_bytes()
    f = tmp_path / "cut.sse"
    f.write_bytes(body + b'data: {"jsonrpc":"2.0"')
    c = offline.validate_transcript_file(f).check("stream.events_parse")
    assert c is not None and c.status is Status.FAIL and "ended in the middle of an event" in c.message


def test_sse_error_event_ends_the_stream_as_live(tmp_path: Path) -> None:
    err = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "streaming is not supported"}}
    f = _write(tmp_path, "err.sse", f"data: {json.dumps(err)}\n\n")
    r = offline.validate_transcript_file(f)
    assert r.reason == "invoke_a2a_error" and offline.exit_code(r) == 1
    assert "UnsupportedOperationError -32004" in r.steps[0].detail


def test_sse_artifacts_on_the_final_task_snapshot_count(tmp_path: Path) -> None:
    events = [{"task": _task("TASK_STATE_WORKING")},
              {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}},
              {"task": _task("TASK_STATE_COMPLETED", artifacts=[{"artifactId": "a", "parts": [{"text": "x"}]}])}]
    f = _write(tmp_path, "rest.sse", "".join(f"data: {json.dumps(e)}\n\n" for e in events))
    r = offline.validate_transcript_file(f)
    c = r.check("lifecycle.completed_artifact")
    assert c is not None and c.status is Status.PASS and not r.failed_checks()


def test_empty_sse_recording(tmp_path: Path) -> None:
    r = offline.validate_transcript_file(_write(tmp_path, "empty.sse", ""))
    first = r.check("stream.first_event")
    assert first is not None and "carried no events" in first.message
    assert offline.exit_code(r) == 1


@pytest.mark.parametrize(("content", "fragment"), [
    ("hello", "not a transcript"),
    ('{"protocolVersion": "1.0", "snapshots": [], "snapshots": []}', "duplicate key 'snapshots'"),
    ('{"protocolVersion": "1.0", "snapshots": []}', "no snapshots"),
    ('{"protocolVersion": "0.1", "snapshots": [{}]}', "protocolVersion '0.1' is not supported offline"),
    ('{"tasks": []}', "expected {\"protocolVersion\""),
])
def test_transcripts_that_cannot_be_judged_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  content: str, fragment: str) -> None:
    f = _write(tmp_path, "t.json", content)
    with pytest.raises(offline.OfflineInputError) as exc:
        offline.validate_transcript_file(f)
    assert fragment in str(exc.value)
    assert _run("transcript", str(f)) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_unsupported_version_argument() -> None:
    with pytest.raises(offline.OfflineInputError, match=r"'2\.0' is not supported offline"):
        offline.validate_transcript_file(FIXTURES / "transcript-valid-1.0.json", "2.0")
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["validate", "transcript", "x.json", "--a2a-version", "0.2"])
    assert exc.value.code == 2


# ---- the command line


@pytest.mark.parametrize("kind", ["card", "transcript"])
def test_unreadable_file_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   kind: str) -> None:
    assert _run(kind, str(tmp_path / "missing.json")) == 2
    err = capsys.readouterr().err
    assert err.startswith("a2a-probe: error: cannot read") and "No such file" in err and "Traceback" not in err
    assert _run(kind, str(tmp_path)) == 2  # a directory
    assert "cannot read" in capsys.readouterr().err


def test_text_format_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("card", str(FIXTURES / "card-skill-without-tags.json")) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  card-skill-without-tags.json")
    assert "card.skills (1.0 §4.4.5 AgentSkill): skills[0].tags is missing" in out
    assert _run("transcript", str(FIXTURES / "transcript-valid-1.0.sse"), "-v") == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "stream.artifact_chunks" in out


def test_markdown_and_junit(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("transcript", str(FIXTURES / "transcript-terminal-regression.sse"), "--format", "markdown") == 1
    md = capsys.readouterr().out
    assert "# A2A probe report: transcript-terminal-regression.sse" in md and "COMPLETED -> WORKING" in md
    assert _run("card", str(FIXTURES / "card-nan.json"), "--format", "junit") == 1
    root = ET.fromstring(capsys.readouterr().out.split("?>", 1)[1])
    failures = [f.get("message") or "" for f in root.iter("failure")]
    assert any("NaN is not valid JSON" in m for m in failures)


def test_unwritable_output_exits_2_but_keeps_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _run("card", str(FIXTURES / "card-valid-1.0.json"), "--output", str(tmp_path / "no" / "such" / "dir"))
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("PASS") and "--output" in captured.err


def test_validate_requires_a_kind() -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["validate"])
    assert exc.value.code == 2


# ---- base64 in parts (probe.wire.dialects), shared with the live probe


def _v1_artifact(part: dict[str, Any]) -> list[str]:
    return V1.result_item({"task": _task("TASK_STATE_COMPLETED", artifacts=[
        {"artifactId": "a", "parts": [part]}])}).problems


@pytest.mark.parametrize("raw", ["aGVsbG8=", "aGVsbG8", "aGk-_w", "aGk+/w==", ""])
def test_protojson_bytes_accept_standard_and_url_safe_padded_or_not(raw: str) -> None:
    assert _v1_artifact({"raw": raw}) == []


@pytest.mark.parametrize(("raw", "why"), [
    ("not base64!", "character ' ' at offset 3"),
    ("aGk==", "bad '=' padding"),
    ("aGVsbG8x=", "bad '=' padding"),
    ("a", "length 1 is one more than a multiple of 4"),
    ("aGk-/w", "character '/' at offset 4"),  # one alphabet per value
    (42, "not a base64 string (got int)"),
])
def test_invalid_base64_raw(raw: Any, why: str) -> None:
    problems = _v1_artifact({"raw": raw})
    assert len(problems) == 1 and "raw" in problems[0] and why in problems[0]
    assert "1.0" not in problems[0] and "state" not in problems[0]  # a shape problem, not a dialect one


def test_invalid_base64_in_a_0_3_file_part() -> None:
    task = {"kind": "task", **_task("completed", artifacts=[{"artifactId": "a", "parts": [
        {"kind": "file", "file": {"bytes": "%%%%", "mimeType": "application/pdf"}},
        {"kind": "file", "file": {"uri": "https://example.com/x.pdf"}}]}])}
    assert V03.result_item(task).problems == ["a part's file.bytes is invalid base64: character '%' at offset 0"]


def test_results_are_probe_results() -> None:
    r = offline.validate_transcript_file(FIXTURES / "transcript-valid-rest-1.0.sse")
    assert isinstance(r, ProbeResult) and r.binding == "HTTP+JSON" and r.target_url.endswith(".sse")
    content_type = r.check("stream.content_type")
    assert content_type is not None and content_type.status is Status.SKIP


def test_validate_is_wired_into_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from probe.cli import main

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "offline"
    assert main(["validate", "card", str(fixtures / "card-valid-1.0.json"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["conformanceLevel"] == "full"
    assert main(["validate", "transcript", str(fixtures / "transcript-terminal-regression.sse")]) == 1
    assert "COMPLETED -> WORKING" in capsys.readouterr().out
