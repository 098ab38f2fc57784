"""Every subcommand, fed what a person types by mistake: the documented exit code, one line on stderr that says
what is wrong, never a traceback, and stdout either empty or valid in the chosen format."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from probe import cli
from probe.demo import run as demo_run

SECRET = "s3cr3t-tok-9f8e7d"
USAGE, FAIL = cli.EXIT_USAGE, cli.EXIT_FAIL


@pytest.fixture(scope="module")
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound without listen(), so nobody else gets it meanwhile)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture
def busy_port() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield f"127.0.0.1:{s.getsockname()[1]}"


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse exits by itself (--help, usage errors)
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line(err: str, *fragments: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith("a2a-probe"), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in err


# argv, the text the one stderr line must hold
USAGE_ERRORS: dict[str, tuple[list[str], str]] = {
    "port out of range": (["check", "http://127.0.0.1:99999"], "URL port must be a number from 1 to 65535"),
    "non-numeric port": (["check", "http://127.0.0.1:abc"], "URL port must be a number from 1 to 65535"),
    "empty port": (["check", "http://127.0.0.1:/x"], "URL port must be a number"),
    "no scheme": (["check", "not-a-url"], "URL must start with http:// or https://"),
    "host:port without scheme": (["check", "127.0.0.1:9471"], "did you mean http://127.0.0.1:9471?"),
    "other scheme": (["check", "ftp://example.com/agent"], "URL must start with http:// or https://"),
    "space in URL": (["check", "http://127.0.0.1:9471/my agent"], "must not contain spaces"),
    "no host": (["check", "http:///agent"], "URL has no host"),
    "broken IPv6": (["check", "http://[::1/agent"], "URL is not valid"),
    "empty URL": (["check", ""], "URL is empty"),
    "bad card URL": (["check", "http://127.0.0.1:9", "--card-url", "card.json"], "--card-url: URL must start"),
    "bad peer URL": (["check", "http://127.0.0.1:9", "--suite", "full", "--peer", "peer:1"], "--peer: URL must"),
    "negative suite timeout": (["check", "http://127.0.0.1:9", "--suite-timeout", "-5"],
                               "--suite-timeout: must be a positive number"),
    "zero suite timeout": (["check", "http://127.0.0.1:9", "--suite-timeout", "0"], "--suite-timeout"),
    "nan timeout": (["check", "http://127.0.0.1:9", "--timeout", "nan"], "--timeout: must be a positive"),
    "word timeout": (["check", "http://127.0.0.1:9", "--timeout", "soon"], "is not a number of seconds"),
    "header without =": (["check", "http://127.0.0.1:9", "--header", f"Authorization: Bearer {SECRET}"],
                         "--header: expected K=V"),
    "token env unset": (["check", "http://127.0.0.1:9", "--bearer-token-env", "A2A_TEST_SURELY_UNSET"],
                        "A2A_TEST_SURELY_UNSET is not set"),
    "suite-only flag": (["check", "http://127.0.0.1:9", "--safe-only"], "need --suite full"),
    "second identity's header without =": (["check", "http://127.0.0.1:9", "--suite", "full", "--other-header",
                                            f"Authorization: Bearer {SECRET}"], "--other-header: expected K=V"),
    "second identity's token env unset": (["check", "http://127.0.0.1:9", "--suite", "full",
                                           "--other-bearer-token-env", "A2A_TEST_SURELY_UNSET"],
                                          "--other-bearer-token-env: environment variable A2A_TEST_SURELY_UNSET"),
    "second identity without the suite": (["check", "http://127.0.0.1:9", "--other-header", f"X-Api-Key={SECRET}"],
                                          "--other-bearer-token-env and --other-header need --suite full"),
    "second identity is the first": (["check", "http://127.0.0.1:9", "--suite", "full", "--header",
                                      f"Authorization=Bearer {SECRET}", "--other-header",
                                      f"Authorization=Bearer {SECRET}"], "give the same credentials as the first"),
    "unknown format": (["check", "http://127.0.0.1:9", "--format", "yaml"], "invalid choice: 'yaml'"),
    "missing URL": (["check"], "the following arguments are required: url"),
    "unknown option": (["check", "http://127.0.0.1:9", "--colour"], "unrecognized arguments: --colour"),
    "unknown command": (["chekc", "http://x"], "invalid choice: 'chekc'"),
    "run without config": (["run"], "no config file"),
    "run, config missing": (["run", "--config", "/nonexistent/probe.yaml"], "cannot read"),
    "run, bad listen address": (["run", "--config", "config/demo.yaml", "--listen-address", "nonsense"],
                                "is not host:port"),
    "run, zero concurrency": (["run", "--config", "config/demo.yaml", "--max-concurrency", "0"],
                              "--max-concurrency (A2A_PROBE_MAX_CONCURRENCY): Input should be greater than"),
    "run, bad shard": (["run", "--config", "config/demo.yaml", "--shard", "5/2"], "shard index 5 is outside 0-1"),
    "check, missing JWKS": (["check", "http://127.0.0.1:9", "--trusted-jwks", "/nonexistent/jwks.json"],
                            "--trusted-jwks: cannot read"),
    "validate, a directory": (["validate", "card", "/"], "cannot read /"),
    "config check, a directory": (["config", "check", "/"], "cannot read"),
    "config check, not a mapping": (["config", "check", "/dev/null"], "expected a mapping with 'agents'"),
    "demo, bad listen address": (["demo", "--listen-address", "localhost"], "is not host:port"),
    "run, bad log level": (["run", "--log-level", "loud"], "invalid choice: 'loud'"),
    "config check, missing file": (["config", "check", "/nonexistent/probe.yaml"], "cannot read"),
    "validate without kind": (["validate"], "required: {card,transcript}"),
    "validate, missing file": (["validate", "card", "/nonexistent/card.json"], "cannot read"),
    "validate, unknown version": (["validate", "transcript", "t.json", "--a2a-version", "2.0"],
                                  "invalid choice: '2.0'"),
    "validate, unknown format": (["validate", "card", "card.json", "--format", "pdf"], "invalid choice: 'pdf'"),
}


@pytest.mark.parametrize("case", sorted(USAGE_ERRORS))
def test_usage_errors_exit_2_with_one_line(case: str, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.delenv("A2A_PROBE_CONFIG_FILE", raising=False)
    argv, fragment = USAGE_ERRORS[case]
    code, out, err = run_main(argv, capsys)
    assert code == USAGE, (code, err)
    assert out == ""
    assert_one_line(err, fragment)
    assert SECRET not in err


@pytest.mark.parametrize("fmt", ["json", "junit", "markdown", "text"])
def test_unreachable_agent_is_exit_1_and_stdout_stays_in_format(fmt: str, closed_port: int,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["check", f"http://127.0.0.1:{closed_port}", "--format", fmt, "--timeout", "5"], capsys)
    assert code == FAIL
    assert "Traceback" not in out + err and err == ""
    if fmt == "json":
        assert json.loads(out)["reason"] == "card_unreachable"
    elif fmt == "junit":
        ElementTree.fromstring(out.encode())
    else:
        assert "card_unreachable" in out


@pytest.mark.parametrize("fmt", ["json", "junit"])
def test_validate_a_broken_card_is_exit_1_and_stdout_stays_in_format(fmt: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    card = tmp_path / "card.json"
    card.write_text('{"name": "x", "name": "y"')
    code, out, err = run_main(["validate", "card", str(card), "--format", fmt], capsys)
    assert code == FAIL and err == "" and "Traceback" not in out
    if fmt == "json":
        assert json.loads(out)["reason"] == "card_invalid"
    else:
        ElementTree.fromstring(out.encode())


def test_output_error_keeps_the_report_and_exits_2(closed_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["check", f"http://127.0.0.1:{closed_port}", "--format", "json",
                               "--output", "/nonexistent/dir/report.json"], capsys)
    assert code == USAGE
    assert json.loads(out)["success"] is False
    assert_one_line(err, "--output /nonexistent/dir/report.json")


@pytest.mark.parametrize("command", ["run", "demo"])
def test_busy_listen_port_is_one_line_and_exit_2(command: str, busy_port: str, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setattr(demo_run, "HEALTHY_PORT", 0)  # the demo's agents: ephemeral ports in tests
    monkeypatch.setattr(demo_run, "BROKEN_PORT", 0)
    argv = [command, "--listen-address", busy_port, "--log-format", "json"]
    if command == "run":
        argv += ["--config", "config/demo.yaml"]
    code, out, err = run_main(argv, capsys)
    assert code == USAGE
    assert "probe_cancelled" not in err and "Unclosed" not in err
    assert_one_line(err, f"cannot listen on {busy_port}", "address already in use")
    assert "a2a-probe demo is running" not in out


@pytest.mark.parametrize(("argv", "listed"), [([], "check"), (["config"], "check")])
def test_a_command_without_subcommand_lists_them(argv: list[str], listed: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(argv, capsys)
    assert code == USAGE and out == "" and "Traceback" not in err
    assert "commands:" in err and f"  {listed} " in err


def test_help_states_exit_codes_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["check", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "exit codes: 0 the agent passed; 1 the agent failed" in text and "2 usage or config error" in text
    assert "(default: 30.0)" in text and "(default: 120.0)" in text and "(default: text)" in text
    code, out, _ = run_main(["run", "--help"], capsys)
    assert code == 0 and "default 0.0.0.0:9470" in " ".join(out.split())
    code, out, _ = run_main(["demo", "--help"], capsys)
    assert code == 0 and f"default {cli.DEMO_LISTEN}" in " ".join(out.split())


def _config(tmp_path: Path, agent: str) -> str:
    path = tmp_path / "probe.yaml"
    path.write_text(f"agents:\n  - {agent}\n")
    return str(path)


def test_config_check_never_echoes_a_header_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path, f"{{name: a, url: 'http://127.0.0.1:9', headers: {{Authorization: 'Bearer {SECRET}'}}}}")
    code, out, err = run_main(["config", "check", cfg], capsys)
    assert code == USAGE and out == ""
    assert_one_line(err, "agents.0.headers: Authorization looks like a credential")
    assert SECRET not in err


def test_config_check_bad_url_is_the_cli_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["config", "check", _config(tmp_path, "{name: a, url: '127.0.0.1:9471'}")], capsys)
    assert code == USAGE
    assert_one_line(err, "agents.0.url: URL must start with http:// or https://")


def test_config_check_warns_about_missing_credentials_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A2A_TEST_MISSING_TOKEN", raising=False)
    monkeypatch.setenv("A2A_TEST_PRESENT_KEY", SECRET)
    secret_file = tmp_path / "absent-token"
    auth = ("{bearer_token: {env: A2A_TEST_MISSING_TOKEN}, "
            f"headers: {{X-API-Key: {{env: A2A_TEST_PRESENT_KEY}}, X-Other: {{file: {secret_file}}}}}}}")
    cfg = _config(tmp_path, f"{{name: a, url: 'http://127.0.0.1:9', auth: {auth}}}")
    code, out, err = run_main(["config", "check", cfg], capsys)
    assert code == 0 and "valid" in out
    warnings = err.splitlines()
    assert len(warnings) == 2, err
    assert any("auth.bearer_token: environment variable A2A_TEST_MISSING_TOKEN is not set" in w for w in warnings)
    assert any(f"auth.headers.X-Other: secret file {secret_file} does not exist" in w for w in warnings)
    assert SECRET not in out + err


def test_real_entry_point_bad_url_and_closed_pipe(closed_port: int) -> None:
    """As a shell runs it: `a2a-probe check BAD --format json`, and `a2a-probe check URL | head`."""
    exe = [sys.executable, "-m", "probe"]
    bad = subprocess.run([*exe, "check", "http://127.0.0.1:99999", "--format", "json"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == USAGE and bad.stdout == ""
    assert_one_line(bad.stderr, "URL port must be a number")
    proc = subprocess.Popen([*exe, "check", f"http://127.0.0.1:{closed_port}", "--format", "json", "-v"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away before the report was written, as `| head -0` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == FAIL
    assert "Traceback" not in err and "BrokenPipe" not in err, err
