"""The client's own connect for one address (`_TimedConnector._wrap_create_connection` on the pool, `_connect_one`
for a fresh connection): the same connections, phases and errors as aiohttp's path through aiohappyeyeballs, which
still serves several addresses."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any

import aiohappyeyeballs
import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from probe.wire import http as wire_http
from probe.wire.http import ClientConfig, ConnectFailed, Deadline, HttpClient, TlsFailed
from tests.agents.server import serve
from tests.trust.material import CA, server_context

FRESH = ClientConfig(fresh=True)
AIOHTTP_OWN = aiohttp.TCPConnector._wrap_create_connection  # through aiohappyeyeballs: the reference


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


async def _failure(url: str, config: ClientConfig = FRESH) -> tuple[type[BaseException], str]:
    async with HttpClient() as client:
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


async def test_a_refused_connection_fails_as_aiohttps_own_path_fails(eyeballs_calls: list[int],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    ours = [await _failure(url), await _failure(url, ClientConfig())]
    assert eyeballs_calls == []

    monkeypatch.setattr(wire_http._TimedConnector, "_wrap_create_connection", AIOHTTP_OWN)
    reference = await _failure(url, ClientConfig())  # a fresh connection no longer goes through the connector
    assert eyeballs_calls == [1]
    assert ours == [reference, reference]
    assert ours[0][0] is ConnectFailed and "cannot connect to 127.0.0.1" in ours[0][1]


async def test_an_unverified_certificate_fails_as_aiohttps_own_path_fails(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ca = CA.create(tmp_path)
    async with serve(_app(), ssl_context=server_context(ca.issue("server"))) as origin:
        ours = await _failure(origin + "/")  # the system trust store does not know the test CA
        trusted = ssl.create_default_context(cafile=str(ca.path))
        async with HttpClient() as client:
            r = await client.request("GET", origin + "/", deadline=Deadline.after(5),
                                     config=ClientConfig(ssl=trusted, fresh=True))
            assert r.status == 200 and r.exchange.tls is not None and r.exchange.phases.tls > 0

        monkeypatch.setattr(wire_http._TimedConnector, "_wrap_create_connection", AIOHTTP_OWN)
        reference = await _failure(origin + "/", ClientConfig())
    assert ours == reference and ours[0] is TlsFailed, ours


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


async def test_a_name_with_several_addresses_goes_through_aiohappyeyeballs(eyeballs_calls: list[int],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    async with serve(_app()) as origin:
        port = int(origin.rsplit(":", 1)[1])
        client = HttpClient()
        monkeypatch.setattr(client, "_resolver", lambda: wire_http._TimedResolver(_TwoAddresses(_closed_port(), port)))
        async with client:
            r = await client.request("GET", f"http://several.invalid:{port}/", deadline=Deadline.after(5),
                                     config=FRESH)
            assert r.status == 200 and r.exchange.phases.resolve > 0
    assert eyeballs_calls == [2]
