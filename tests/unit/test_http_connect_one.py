"""The client's own connect for one address (`_connect_one`, for a pooled connection and a fresh one alike): the
same connections, phases and errors as aiohttp's ClientSession through aiohappyeyeballs
(tests/unit/session_reference.py), which still serves several addresses."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any

import aiohappyeyeballs
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from probe.wire import http as wire_http
from probe.wire.http import ClientConfig, ConnectFailed, Deadline, HttpClient, TlsFailed
from tests.agents.server import serve
from tests.trust.material import CA, server_context
from tests.unit.session_reference import SessionClient

FRESH = ClientConfig(fresh=True)


def _app() -> web.Application:
    async def ok(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_route("*", "/", ok)
    return app


@pytest.fixture
def eyeballs_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many addresses each connection through aiohappyeyeballs was given."""
    calls: list[int] = []
    real = aiohappyeyeballs.start_connection

    async def counted(addr_infos: Any, **kwargs: Any) -> socket.socket:
        calls.append(len(addr_infos))
        return await real(addr_infos, **kwargs)

    monkeypatch.setattr(aiohappyeyeballs, "start_connection", counted)
    return calls


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _failure(url: str, config: ClientConfig = FRESH, made: type[HttpClient] = HttpClient,
                   ) -> tuple[type[BaseException], str]:
    async with made() as client:
        with pytest.raises(ConnectFailed) as caught:
            await client.request("POST", url, deadline=Deadline.after(5), body=b"{}", config=config)
    return type(caught.value), str(caught.value)


async def test_an_ip_literal_connects_without_aiohappyeyeballs_and_times_every_phase(
        eyeballs_calls: list[int]) -> None:
    async with serve(_app()) as origin, HttpClient() as client:
        for config in (FRESH, ClientConfig()):
            r = await client.request("POST", origin + "/", deadline=Deadline.after(5), body=b"{}", config=config)
            assert r.status == 200 and r.body == b'{"ok": true}'
            assert r.exchange.phases.connect > 0 and r.exchange.phases.processing > 0
    assert eyeballs_calls == []


async def test_a_refused_connection_fails_as_aiohttps_own_path_fails(eyeballs_calls: list[int]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    ours = [await _failure(url), await _failure(url, ClientConfig())]
    assert eyeballs_calls == []

    reference = await _failure(url, ClientConfig(), SessionClient)
    assert eyeballs_calls == [1]
    assert ours == [reference, reference]
    assert ours[0][0] is ConnectFailed and "cannot connect to 127.0.0.1" in ours[0][1]


async def test_an_unverified_certificate_fails_as_aiohttps_own_path_fails(tmp_path: Path) -> None:
    ca = CA.create(tmp_path)
    async with serve(_app(), ssl_context=server_context(ca.issue("server"))) as origin:
        ours = [await _failure(origin + "/"), await _failure(origin + "/", ClientConfig())]  # an unknown CA
        trusted = ssl.create_default_context(cafile=str(ca.path))
        async with HttpClient() as client:
            for fresh in (True, False, False):  # the third request reuses the second's connection and its TLS
                r = await client.request("GET", origin + "/", deadline=Deadline.after(5),
                                         config=ClientConfig(ssl=trusted, fresh=fresh))
                assert r.status == 200 and r.exchange.tls is not None
            assert r.exchange.phases.tls == 0 and r.exchange.tls.version.startswith("TLS")

        reference = await _failure(origin + "/", ClientConfig(), SessionClient)
    assert ours == [reference, reference] and reference[0] is TlsFailed, ours


class _TwoAddresses(AbstractResolver):
    """A name with two addresses: one refusing, then the server (aiohappyeyeballs' case)."""

    def __init__(self, refusing: int, port: int) -> None:
        self._ports = (refusing, port)

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET,
                      ) -> list[ResolveResult]:
        return [ResolveResult(hostname=host, host="127.0.0.1", port=p, family=socket.AF_INET, proto=0, flags=0)
                for p in self._ports]

    async def close(self) -> None:
        return None


async def test_a_name_with_several_addresses_goes_through_aiohappyeyeballs(eyeballs_calls: list[int]) -> None:
    async with serve(_app()) as origin:
        port = int(origin.rsplit(":", 1)[1])
        for config in (FRESH, ClientConfig()):
            client = HttpClient()
            client._resolver = wire_http._TimedResolver(_TwoAddresses(_closed_port(), port))
            async with client:
                r = await client.request("GET", f"http://several.invalid:{port}/", deadline=Deadline.after(5),
                                         config=config)
                assert r.status == 200 and r.exchange.phases.resolve > 0
    assert eyeballs_calls == [2, 2]
