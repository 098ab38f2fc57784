"""The one redaction: every registered secret in every form it may be echoed in, and nothing else."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

import pytest

from probe import redact
from probe.checks.catalogue import make_check
from probe.reasons import Reason
from probe.results import InterfaceResult, ProbeResult, PushDelivery, Status, StepName, StepResult

TOKEN = "tok-Zq8+/w=secret!&"
PAIR = "probe-user:pa55-w0rd#x"


@pytest.fixture(autouse=True, scope="module")
def _registered() -> Iterator[None]:
    """The module's secrets, and afterwards the registry as it was: the words registered here ("second-tok-...")
    would otherwise mask text that later modules' tests read (test_bindings_agree's 'second' artifact)."""
    before = dict(redact._secrets), dict(redact._ephemeral)
    redact.register(f"Bearer {TOKEN}")
    redact.register("Basic " + base64.b64encode(PAIR.encode()).decode())
    yield
    for table, kept in zip((redact._secrets, redact._ephemeral), before, strict=True):
        table.clear()
        table.update(kept)
    redact._text_cached.cache_clear()
    redact._unshare()
    redact._index()


@pytest.mark.parametrize("form", [
    TOKEN, f"Bearer {TOKEN}", quote(TOKEN, safe=""), quote_plus(TOKEN), quote(TOKEN),
    base64.b64encode(TOKEN.encode()).decode(), base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="),
    json.dumps(TOKEN)[1:-1], html.escape(TOKEN),
    PAIR, "pa55-w0rd#x", base64.b64encode(PAIR.encode()).decode(), quote(PAIR, safe=""),
    # cheap transforms an agent may echo: reversed, re-cased, PHP's JSON (a slash escaped), lower-case hex escapes
    TOKEN[::-1], TOKEN.upper(), TOKEN.lower(), PAIR[::-1], PAIR.upper(), json.dumps(TOKEN)[1:-1].replace("/", "\\/"),
    quote(TOKEN, safe="").replace("%2B", "%2b").replace("%2F", "%2f").replace("%3D", "%3d"),
])
def test_every_form_of_a_registered_secret_is_masked(form: str) -> None:
    out = redact.text(f"the agent said: {form} (echoed)")
    assert form not in out and redact.REDACTED in out
    assert out.startswith("the agent said: ") and out.endswith(" (echoed)")


@pytest.mark.parametrize("cut", [6, 9, len(TOKEN) - 1])
def test_a_truncated_secret_is_masked(cut: int) -> None:
    assert TOKEN[:cut] not in redact.text(f"error: {TOKEN[:cut]}…")
    assert TOKEN[:cut] not in redact.text(f"id {TOKEN[:cut]!r} does not echo")


def test_unregistered_credentials_and_userinfo_are_masked_too() -> None:
    out = redact.text("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x.y at https://bob:hunter22@h.example/a2a")
    assert "eyJhbGci" not in out and "hunter22" not in out and "bob" not in out
    assert "https://<redacted>@h.example/a2a" in out


def test_ordinary_text_is_left_alone() -> None:
    text = "basic conformance: the basic probe passed; Bearer scheme declared; mail me@example.org"
    assert redact.text(text) == text


def test_result_is_scrubbed_in_place() -> None:
    r = ProbeResult(agent="a", target_url="http://h/", card_name=f"echo {TOKEN}",
                    interface_url="http://u:pa55-w0rd#x@h/rpc")
    r.steps.append(StepResult(name=StepName.PING, detail=f"JSON-RPC error: got header Bearer {TOKEN}"))
    r.checks.append(make_check("invoke.transport", Status.FAIL, f"body {base64.b64encode(TOKEN.encode()).decode()}",
                               step=StepName.INVOKE))
    dumped = redact.result(r).model_dump_json()
    assert TOKEN not in dumped and "pa55" not in dumped and base64.b64encode(TOKEN.encode()).decode() not in dumped


def test_every_string_field_of_a_result_is_scrubbed_and_enums_stay_enums() -> None:
    """Not a list of fields: the extended card's additions, per-interface entries, push problems — all of it."""
    r = ProbeResult(agent="a", target_url="http://h/", reason=Reason.INVOKE_AUTH,
                    extended_card={"skills": [f"skill {TOKEN}"], "fields": ["securitySchemes"]},
                    interfaces=[InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC",
                                                interface_url=f"http://h/rpc?k={quote(TOKEN, safe='')}",
                                                final_state=f"echo {TOKEN}", reason=Reason.INVOKE_AUTH)],
                    push=PushDelivery(problems=[f"said {TOKEN}"]))
    r.steps.append(StepResult(name=StepName.INVOKE, status=Status.FAIL, reason=Reason.INVOKE_AUTH))
    dumped = redact.result(r).model_dump_json()
    assert TOKEN not in dumped and quote(TOKEN, safe="") not in dumped, dumped
    assert r.extended_card == {"skills": [f"skill {redact.REDACTED}"], "fields": ["securitySchemes"]}
    assert r.reason is Reason.INVOKE_AUTH and r.interfaces[0].reason is Reason.INVOKE_AUTH
    assert r.steps[0].status is Status.FAIL and r.steps[0].name is StepName.INVOKE


def test_the_registry_is_bounded() -> None:
    for i in range(1100):
        redact.register(f"rotated-credential-{i:05d}")
    assert len(redact.registered()) <= 1000
    assert "rotated-credential-01099" in redact.registered()
    redact.register(f"Bearer {TOKEN}")  # still masked after rotation noise
    assert TOKEN not in redact.text(TOKEN)


def test_a_word_that_starts_like_a_secret_is_left_alone_and_a_cut_secret_is_not() -> None:
    secret = "second-tok-Zq81"
    redact.register(secret)
    assert redact.text("probe_duration_seconds 0.25") == "probe_duration_seconds 0.25"  # 6 alike, then a letter
    assert redact.text("took 2 seconds") == "took 2 seconds"
    for cut in ("second", "second-", "second-to"):
        for wrapped in (f"error: {cut}…", f"id {cut!r}", f"tail {cut}"):
            assert cut not in redact.text(wrapped), wrapped  # what a truncation leaves, wrapped or at the end
    assert "second-to" not in redact.text("echo second-toX")  # 8 or more alike: masked whatever follows


@pytest.fixture
def _fresh() -> None:
    """The module's secrets registered again (a test above fills the bounded registry and evicts them)."""
    redact.register(f"Bearer {TOKEN}")
    redact.register("Basic " + base64.b64encode(PAIR.encode()).decode())


def _shifted_b64(value: str, offset: int, *, urlsafe: bool = False) -> str:
    """`value` base64-encoded inside a longer string: `offset` bytes before it, more after (an echoed blob)."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(b"{"[:offset] + b"xy"[:max(offset - 1, 0)] + value.encode() + b'", "more": 1}').decode()


@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("urlsafe", [False, True])
@pytest.mark.usefixtures("_fresh")
def test_a_secret_base64_encoded_at_any_offset_of_a_longer_blob_is_masked(offset: int, urlsafe: bool) -> None:
    """An agent that base64-encodes what it received (its headers as JSON, say) puts the secret at any of the three
    alignments, with more bytes after it: the encoded secret is masked whatever the alignment."""
    decode = base64.urlsafe_b64decode if urlsafe else base64.b64decode
    for secret in (TOKEN, PAIR):
        out = redact.text(f"debug: {_shifted_b64(secret, offset, urlsafe=urlsafe)}")
        assert redact.REDACTED in out
        for piece in out.removeprefix("debug: ").split(redact.REDACTED):  # what is left reveals no 5 bytes of it
            for start in range(4):
                chunk = piece[start:][:(len(piece) - start) // 4 * 4]
                try:
                    shown = decode(chunk)
                except ValueError:
                    continue
                assert not any(secret[i:i + 5].encode() in shown for i in range(len(secret) - 4)), (piece, shown)


@pytest.mark.parametrize("form", [
    "".join(f"\\u{ord(c):04x}" for c in TOKEN),  # every character escaped
    TOKEN[:3] + "".join(f"\\u{ord(c):04X}" for c in TOKEN[3:6]) + TOKEN[6:],  # a few, upper-case hex
    TOKEN.encode().hex(), TOKEN.encode().hex().upper(),
])
@pytest.mark.usefixtures("_fresh")
def test_a_secret_in_json_unicode_escapes_or_hex_is_masked(form: str) -> None:
    """Raw snippets of an agent's body (an error page, an unparsable answer) are shown undecoded."""
    out = redact.text(f'{{"error": "{form}"}}')
    assert form not in out and redact.REDACTED in out
    assert TOKEN[4:12] not in out


@pytest.mark.usefixtures("_fresh")
def test_the_tail_of_a_secret_split_in_two_is_masked() -> None:
    """An agent that splits the echoed secret (two parts, two events, two chunks) leaves its halves apart: the head
    is masked as a cut secret, and so is the tail (8 characters or more of the secret's end)."""
    out = redact.text(f"got: {TOKEN[:9]} | {TOKEN[9:]}")
    assert TOKEN[9:] not in out and TOKEN[:9] not in out
    assert redact.text("the text ends with cret!& here") == "the text ends with cret!& here"  # 7: left alone


@pytest.mark.usefixtures("_fresh")
def test_a_short_secret_is_not_masked_re_cased_or_reversed() -> None:
    # under 8 characters a reversed or re-cased form may be an ordinary word: only the value itself is masked
    redact.register("Zq9wXy")  # (no word of another test's output: the registry is the process's)
    assert redact.text("Zq9wXy: zq9wxy, ZQ9WXY, yXw9qZ") == "<redacted>: zq9wxy, ZQ9WXY, yXw9qZ"


@pytest.mark.usefixtures("_fresh")
def test_push_round_trips_never_evict_the_operators_credentials() -> None:
    from probe.inbox import PushInbox
    from probe.suite import push
    from probe.wire.http import Deadline

    # registered once: a configured URL's query credential, the web auth token
    redact.register_url("http://gw.example/a?api_key=AKxq7-very-secret-key")
    redact.register("webauth-token-Zq81x")
    inbox = PushInbox("http://probe.example")
    for _ in range(400):  # three secrets a round trip: 1,200, past the 1,000 the operator's table holds
        reg = push.register(inbox, Deadline.after(5))
        inbox.release(reg)
    _route, token, credential = reg.secrets()
    out = redact.text(f"echo AKxq7-very-secret-key webauth-token-Zq81x {token} {credential}")
    assert out == "echo <redacted> <redacted> <redacted> <redacted>"  # before: the first two in the clear
