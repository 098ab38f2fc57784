"""Real implementations nobody here wrote, graded by the version they speak: their real deviations, no more.

* fasta2a 2.1.1 (independent 1.0 server): answers a blocking SendMessage at once with a SUBMITTED task whose
  status timestamp has no zone — the official 1.0 client cannot parse it, and it does not block. It refuses
  ListTasks (-32004, a core 1.0 operation), ignores SendMessage's configuration.historyLength (0 still returns the
  message), and writes history entries with proto names (message_id), which the official parsers read.
* a2a-sdk 0.3.26 (official 0.3 line): a healthy 0.3 agent; no card cache headers, which is a 1.0 rule only;
  its history and unknown-id answers pass the 0.3 rules, and ListTasks / several streams are not graded there.
"""

from __future__ import annotations

import pytest

from probe.engine import run_probe
from probe.levels import Level, level
from probe.reasons import Reason
from probe.results import Status
from probe.target import Target
from probe.wire.http import HttpClient
from tests.interop.test_tck_gaps import _gap_checks
from tests.peers import venv_peers
from tests.peers.venv_peers import VenvPeer

pytestmark = pytest.mark.external
fasta2a_peer, sdk03_peer = venv_peers.fasta2a_peer, venv_peers.sdk03_peer  # the session fixtures, used here


async def test_fasta2a_fails_where_the_official_client_would(client: HttpClient, fasta2a_peer: VenvPeer) -> None:
    result = await run_probe(Target(name="fasta2a", url=fasta2a_peer.base_url, timeout=10.0), client)
    assert result.protocol_version == "1.0"
    assert result.reason is Reason.INVOKE_BAD_RESULT
    schema = result.check("invoke.schema")
    assert schema is not None and schema.status is Status.FAIL and schema.reason is Reason.INVOKE_BAD_RESULT
    assert "result.task.status.timestamp" in schema.message and "has no time zone" in schema.message
    blocking = result.check("invoke.blocking")
    assert blocking is not None and blocking.status is Status.FAIL and "SUBMITTED" in blocking.message
    assert level(result) is Level.NON_CONFORMANT


async def test_the_0_3_sdk_line_is_a_healthy_0_3_agent(client: HttpClient, sdk03_peer: VenvPeer) -> None:
    result = await run_probe(Target(name="sdk03", url=sdk03_peer.base_url, timeout=10.0), client)
    assert result.success, result.reason
    assert result.protocol_version == "0.3"
    cache = result.check("card.cache_headers")
    assert cache is not None and cache.status is Status.SKIP and "not graded" in cache.message
    assert "missing Cache-Control" in cache.message  # what was observed, said
    assert [c.id for c in result.failed_checks()] == []
    schema = result.check("invoke.schema")
    assert schema is not None and "0.3 JSON schema" in schema.message
    assert level(result) is Level.FULL


async def test_fasta2a_tck_gaps(client: HttpClient, fasta2a_peer: VenvPeer) -> None:
    got = await _gap_checks(client, fasta2a_peer.base_url)
    status, message = got["lifecycle.list_tasks"]
    assert status is Status.FAIL and "UnsupportedOperationError -32004" in message
    assert got["lifecycle.list_pagination"][1].startswith("depends on lifecycle.list_tasks")  # one root cause
    assert got["lifecycle.history_on_send"] == (Status.FAIL, "historyLength=0 on SendMessage returned 1 message(s)")
    assert got["lifecycle.history_kept"][0] is Status.PASS  # message_id, read as the official parsers do
    assert got["lifecycle.history_order"][0] is Status.PASS
    # its tasks end at once (before or just after the stream's first event): no running task whose streams could
    # be compared, which is said, not passed
    status, message = got["streaming.multi_stream"]
    assert status is Status.SKIP and "complet" in message.lower(), message
    assert got["streaming.subscribe_unknown"][0] is Status.PASS and got["errors.cancel_unknown"][0] is Status.PASS


async def test_the_0_3_sdk_line_tck_gaps(client: HttpClient, sdk03_peer: VenvPeer) -> None:
    got = await _gap_checks(client, sdk03_peer.base_url, version="0.3")
    graded = {cid: st for cid, (st, msg) in got.items() if not msg.startswith("not graded")}
    assert graded == dict.fromkeys(("lifecycle.history_on_send", "lifecycle.history_kept", "lifecycle.history_order",
                                    "streaming.subscribe_unknown", "errors.cancel_unknown"), Status.PASS), got
    assert "two turns in order" in got["lifecycle.history_order"][1]
