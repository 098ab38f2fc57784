"""The reference the client's own connections are held to: aiohttp's ClientSession, which the client used before
it made its connections itself (`HttpClient._send_pooled`, `_send_fresh`). `SessionClient` is an HttpClient whose
requests go out through such a session, configured as the client configured its own (no cookies, aiohttp's
decoding, the probe's User-Agent, no silent retry; `force_close` for a fresh connection); everything above the
connection (the deadline, the errors' mapping, the bounded body read, redirects) is the client's own, so a
difference between the two is a difference in the connection layer."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp
from multidict import CIMultiDictProxy

from probe.wire.http import USER_AGENT, HttpClient


def session(force_close: bool) -> aiohttp.ClientSession:
    made = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=force_close), auto_decompress=True,
                                 headers={"User-Agent": USER_AGENT}, timeout=aiohttp.ClientTimeout(total=None),
                                 cookie_jar=aiohttp.DummyCookieJar())
    made._retry_connection = False  # type: ignore[attr-defined]  # the client never retries silently
    return made


class _SessionAnswer:
    """A ClientResponse read as the client reads its own `Answered`."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._resp = resp
        self.url = str(resp.url)
        self.status = resp.status
        self.reason = resp.reason
        self.headers: CIMultiDictProxy[str] = resp.headers
        self.content = resp.content
        self.protocol = None

    @property
    def content_length(self) -> int | None:
        return self._resp.content_length

    def release(self) -> None:
        self._resp.release()

    def close(self) -> None:
        self._resp.close()


class SessionClient(HttpClient):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sessions: dict[bool, aiohttp.ClientSession] = {}

    async def _through(self, force_close: bool, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, tls: ssl.SSLContext) -> Any:
        if force_close not in self._sessions:
            self._sessions[force_close] = session(force_close)
        resp = await self._sessions[force_close].request(method, url, headers=dict(headers), data=body, ssl=tls,
                                                         allow_redirects=False)
        return _SessionAnswer(resp)

    async def _send_pooled(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                           tls: ssl.SSLContext, timer: Any) -> Any:
        return await self._through(False, method, url, headers, body, tls)

    async def _send_fresh(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                          tls: ssl.SSLContext, timer: Any) -> Any:
        return await self._through(True, method, url, headers, body, tls)

    async def close(self) -> None:
        for made in self._sessions.values():
            await made.close()
        self._sessions.clear()
        await super().close()

