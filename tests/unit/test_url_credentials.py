"""A credential in a configured URL's query string (`?api_key=...`) is never printed: registered like any other."""

from __future__ import annotations

import json
import socket

import pytest

from probe import config, redact
from probe.cli import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_credential_named_parameters_are_registered_and_others_not() -> None:
    redact.register_url("http://127.0.0.1:1/a2a?api_key=Zq9-url-cred-77&tenant=defaultish&sig=Kx4-url-sig-88")
    out = redact.text("card at ...?api_key=Zq9-url-cred-77 sig Kx4-url-sig-88 tenant defaultish")
    assert "Zq9-url-cred-77" not in out and "Kx4-url-sig-88" not in out
    assert "defaultish" in out  # a parameter not named like a credential is an ordinary value


def test_a_loaded_config_registers_its_agents_url_credentials() -> None:
    raw = b"agents:\n  - name: gw\n    url: http://127.0.0.1:1/a2a?access_token=Pw7-cfg-token-31\n"
    config.parse(raw, "test.yaml")
    assert "Pw7-cfg-token-31" not in redact.text("GET http://127.0.0.1:1/a2a?access_token=Pw7-cfg-token-31 failed")


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "text"])
def test_check_never_prints_the_urls_token(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    secret = f"Hq2-cli-{fmt}-token-55"
    url = f"http://127.0.0.1:{_closed_port()}/a2a?token={secret}"
    code = main(["check", url, "--format", fmt, "--timeout", "2"])
    out, err = capsys.readouterr()
    assert code != 0  # nothing listens there: the check fails, and says where it looked
    assert secret not in out and secret not in err
    assert secret[:8] not in out + err
    if fmt == "json":
        json.loads(out)  # still a valid report
