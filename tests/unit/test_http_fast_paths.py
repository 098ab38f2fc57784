"""The HTTP client's fast paths give what its general paths give.

A body aiohttp already holds in full (`is_eof` when the headers are in) is taken in one `read_nowait`, without the
coroutine read loop: the same bytes, the same limit errors and the same error names as `read_bounded` (the general
path, under `_guard`), for small, exact-limit, oversized, declared-oversized, compressed, empty and broken bodies.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from probe import redact
from probe.wire import http
from probe.wire.http import ClientConfig, Deadline, HttpClient, WireError
from tests.agents.server import serve

LIMIT = 64
FRESH = ClientConfig(fresh=True)


async def _small(_request: web.Request) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": "1", "result": {}})


async def _exact(_request: web.Request) -> web.Response:
    return web.Response(body=b"x" * LIMIT, content_type="application/json")


async def _declared_over(_request: web.Request) -> web.Response:
    return web.Response(body=b"y" * (LIMIT + 1), content_type="application/json")


async def _chunked_over(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()  # no declared length: only reading finds the size
    await resp.prepare(request)
    await resp.write(b"z" * (LIMIT + 10))
    await resp.write_eof()
    return resp


async def _gzip(_request: web.Request) -> web.Response:
    return web.Response(body=gzip.compress(b'{"a": "' + b"q" * 40 + b'"}'), content_type="application/json",
                        headers={"Content-Encoding": "gzip"})


async def _empty(_request: web.Request) -> web.Response:
    return web.Response(status=204)


async def _bad_gzip(_request: web.Request) -> web.Response:
    return web.Response(body=b"not gzip at all", content_type="application/json",
                        headers={"Content-Encoding": "gzip"})


ROUTES = {"/small": _small, "/exact": _exact, "/declared-over": _declared_over, "/chunked-over": _chunked_over,
          "/gzip": _gzip, "/empty": _empty, "/bad-gzip": _bad_gzip}


@asynccontextmanager
async def server() -> AsyncIterator[str]:
    app = web.Application()
    for path, handler in ROUTES.items():
        app.router.add_get(path, handler)
    async with serve(app) as origin:
        yield origin


async def _general(resp: object, exchange: http.HttpExchange, method: str, url: str) -> bytes:
    """The general path's outcome for a body already in: read_bounded, errors named as under `_guard`."""
    try:
        return await http.read_bounded(resp, LIMIT, exchange)  # type: ignore[arg-type]
    except WireError:
        raise
    except Exception as exc:
        if (err := http._translate(exc, f"{method} {redact.url(url)}: body", exchange)) is None:
            raise
        raise err from None


async def _outcome(client: HttpClient, url: str, fast: bool, config: ClientConfig) -> tuple[str, str]:
    resp, exchange, _timer, _t0 = await client._open("GET", url, {}, None, Deadline.after(5), config)
    try:
        with contextlib.suppress(Exception):  # a broken body raises here and again on the read, as it would
            await asyncio.wait_for(resp.content.wait_eof(), 2)
        if not resp.content.is_eof():
            return "not buffered", ""  # the client reads such a body on the general path, under its deadline
        try:
            data = (http._read_buffered(resp, LIMIT, exchange, "GET", url) if fast
                    else await _general(resp, exchange, "GET", url))
        except Exception as exc:
            return type(exc).__name__, str(exc)
        return "bytes", data.hex()
    finally:
        resp.release()


@pytest.mark.parametrize("path", sorted(ROUTES))
@pytest.mark.parametrize("config", [http.DEFAULT_CONFIG, FRESH], ids=["pool", "fresh"])
async def test_a_buffered_body_reads_as_the_general_path_reads_it(path: str, config: ClientConfig) -> None:
    async with server() as base, HttpClient() as client:
        fast = await _outcome(client, base + path, True, config)
        general = await _outcome(client, base + path, False, config)
    assert fast == general
    if path == "/bad-gzip":  # the parser's error: named alike whether or not it left the body at its end
        assert fast[0] in ("ProtocolError", "not buffered")
    else:
        expected = {"/declared-over": "BodyTooLarge", "/chunked-over": "BodyTooLarge"}
        assert fast[0] == expected.get(path, "bytes")


async def test_the_request_path_takes_the_buffered_body_and_names_its_limit() -> None:
    async with server() as base, HttpClient() as client:
        with pytest.raises(http.ProtocolError):
            await client.request("GET", base + "/bad-gzip", deadline=Deadline.after(5), max_bytes=LIMIT)
        ok = await client.request("GET", base + "/gzip", deadline=Deadline.after(5), max_bytes=LIMIT, config=FRESH)
        assert ok.body == b'{"a": "' + b"q" * 40 + b'"}' and ok.exchange.duration_s > 0
        for path, text in (("/declared-over", f"body of {LIMIT + 1} bytes exceeds the {LIMIT}-byte limit"),
                           ("/chunked-over", f"body exceeds the {LIMIT}-byte limit")):
            with pytest.raises(http.BodyTooLarge) as caught:
                await client.request("GET", base + path, deadline=Deadline.after(5), max_bytes=LIMIT)
            assert str(caught.value) == text and caught.value.exchange is not None
            assert caught.value.exchange.status == 200 and caught.value.exchange.duration_s > 0


def test_without_an_auth_flow_a_request_carries_exactly_its_headers() -> None:
    # _open skips with_credentials when there is no flow: what it would have returned is the same URL and headers
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    url = "http://127.0.0.1:1/rpc?x=1"
    assert http.with_credentials(url, headers, None) == (url, headers)
    with http.without_credentials():
        assert http.with_credentials(url, headers, None) == (url, headers)
