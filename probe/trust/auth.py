"""Auth flows: the credentials a card's security schemes ask for, applied by every binding through one
interface (`probe.wire.http.RequestAuth`), and only ever to the origins they are configured for.

Flows: a bearer token (env or file; the file is re-read when it changes), static secret headers, an API key
in the header, query or cookie the card declares, HTTP Basic, and OAuth2 client credentials (token URL
configured, declared by the card, or found by OpenID Connect discovery), cached until shortly before it
expires and refreshed once on a 401. The token exchange is the probe's own timed exchange with its own
failure (`AuthTokenFailed` -> reason `auth_token_failed`), never blamed on the agent.

A URL the card supplies (a token URL, an OIDC discovery URL) receives the client secret only when it is on
the agent's own origin or an origin the config allows: the card must not choose where secrets go.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from probe import redact
from probe.results import HttpExchange
from probe.target import AuthSpec, OAuth2Spec
from probe.wire import strictjson
from probe.wire.http import (
    NO_CREDENTIALS,
    AuthTokenFailed,
    ClientConfig,
    Credentials,
    Deadline,
    HttpClient,
    WireError,
    origin,
)

Origin = tuple[str, str, int | None]
MAX_TOKEN_BYTES = 64 << 10
_REFRESH_MARGIN = 30.0  # seconds before expiry a cached token is replaced
_TOKENS: OrderedDict[str, tuple[str, float]] = OrderedDict()  # cache key -> (token, expires at, monotonic)
_DISCOVERY: OrderedDict[str, tuple[str, float]] = OrderedDict()  # discovery URL -> (token endpoint, fetched at)
_CACHE_SIZE = 512
_DISCOVERY_TTL = 3600.0


# ---- what the card declares

@dataclass(frozen=True, slots=True)
class Scheme:
    """One declared security scheme, 1.0 (oneof wrapper) or 0.3 (`type`) alike."""

    name: str
    kind: str  # apiKey | bearer | basic | http | oauth2 | oidc | mtls | unknown
    body: dict[str, Any]

    @property
    def api_key(self) -> tuple[str | None, str | None]:
        name, where = self.body.get("name"), self.body.get("location") or self.body.get("in")
        return (name if isinstance(name, str) else None, where if isinstance(where, str) else None)

    def token_url(self) -> str | None:
        flows = self.body.get("flows")
        cc = flows.get("clientCredentials") if isinstance(flows, dict) else None
        url = cc.get("tokenUrl") if isinstance(cc, dict) else None
        return url if isinstance(url, str) and url else None

    def scopes(self) -> tuple[str, ...]:
        flows = self.body.get("flows")
        cc = flows.get("clientCredentials") if isinstance(flows, dict) else None
        scopes = cc.get("scopes") if isinstance(cc, dict) else None
        return tuple(scopes) if isinstance(scopes, dict) else ()


_WRAPPERS = {"apiKeySecurityScheme": "apiKey", "httpAuthSecurityScheme": "http", "oauth2SecurityScheme": "oauth2",
             "openIdConnectSecurityScheme": "oidc", "mtlsSecurityScheme": "mtls"}
_TYPES = {"apiKey": "apiKey", "http": "http", "oauth2": "oauth2", "openIdConnect": "oidc", "mutualTLS": "mtls"}


def declared_schemes(doc: dict[str, Any]) -> dict[str, Scheme]:
    out: dict[str, Scheme] = {}
    raw = doc.get("securitySchemes")
    for name, entry in (raw.items() if isinstance(raw, dict) else []):
        if not isinstance(entry, dict):
            continue
        kind, body = "unknown", entry
        for key, k in _WRAPPERS.items():
            if isinstance(entry.get(key), dict):
                kind, body = k, entry[key]
                break
        else:
            kind = _TYPES.get(str(entry.get("type")), "unknown")
        if kind == "http":
            scheme = str(body.get("scheme", "")).lower()
            kind = {"bearer": "bearer", "basic": "basic"}.get(scheme, "http")
        out[str(name)] = Scheme(str(name), kind, body)
    return out


def requirements(doc: dict[str, Any]) -> list[list[str]]:
    """The card-level requirements as an OR of ANDs of scheme names (1.0 securityRequirements, 0.3 security)."""
    out: list[list[str]] = []
    for req in doc.get("securityRequirements") or []:
        if isinstance(req, dict) and isinstance(req.get("schemes"), dict):
            out.append([str(n) for n in req["schemes"]])
    for req in doc.get("security") or []:
        if isinstance(req, dict):
            out.append([str(n) for n in req])
    return out


# ---- matching config to card

_SATISFIES: dict[str, frozenset[str]] = {
    "bearer": frozenset({"bearer", "oauth2", "oidc", "http"}),  # a pre-issued token works for any of these
    "oauth2": frozenset({"oauth2", "bearer"}),
    "oidc": frozenset({"oidc", "oauth2", "bearer"}),
    "basic": frozenset({"basic", "http"}),
    "api_key": frozenset({"apiKey"}),
    "client_cert": frozenset({"mtls"}),
}
_FIX = {
    "apiKey": "auth.api_key {value: {env|file}} (name and location come from the card)",
    "bearer": "auth.bearer_token {env|file}", "http": "auth.bearer_token or auth.basic",
    "basic": "auth.basic {username, password: {env|file}}",
    "oauth2": "auth.oauth2 {client_id, client_secret: {env|file}} (or auth.bearer_token with a token)",
    "oidc": "auth.oauth2 {client_id, client_secret, oidc: true} (or auth.bearer_token)",
    "mtls": "tls.client_cert and tls.client_key", "unknown": "credentials for this scheme type",
}


def configured_kinds(spec: AuthSpec) -> list[str]:
    kinds = []
    if spec.bearer is not None:
        kinds.append("bearer")
    if spec.oauth2 is not None:
        kinds.append("oidc" if spec.oauth2.oidc else "oauth2")
    if spec.basic is not None:
        kinds.append("basic")
    if spec.api_key is not None:
        kinds.append("api_key")
    if spec.client_cert:
        kinds.append("client_cert")
    return kinds


def _satisfied(scheme: Scheme, kinds: list[str], spec: AuthSpec) -> bool:
    if any(scheme.kind in _SATISFIES[k] for k in kinds):
        return True
    # a secret header named as the declared API key counts too (auth.headers.X-API-Key)
    name, where = scheme.api_key
    return scheme.kind == "apiKey" and where in (None, "header") and name is not None and any(
        h.lower() == name.lower() for h in spec.headers)


def match(doc: dict[str, Any], spec: AuthSpec) -> tuple[bool | None, str]:
    """Whether the configured credentials fit what the card declares: (ok, message with the fix).
    None when neither side has anything to say."""
    if not (doc.get("securitySchemes") or doc.get("securityRequirements") or doc.get("security")) and not (
            spec.headers or configured_kinds(spec)):
        # the common case, neither side has anything: what `_match` computes for it, without parsing the card
        return None, "the card declares no security and the config has no credentials"
    return _match(doc, spec)


def _match(doc: dict[str, Any], spec: AuthSpec) -> tuple[bool | None, str]:
    """`match`'s general path."""
    schemes = declared_schemes(doc)
    reqs = requirements(doc) or [[name] for name in schemes]
    kinds = configured_kinds(spec)
    have = ", ".join(kinds + [f"auth.headers.{h}" for h in spec.headers]) or "none"
    if not reqs:
        if kinds or spec.headers:
            return False, (f"the config has credentials ({have}) but the card declares no security scheme: "
                           "declare the scheme the agent enforces in the card (securitySchemes and "
                           "securityRequirements), or drop the credentials from the probe config")
        return None, "the card declares no security and the config has no credentials"
    options: list[str] = []
    for req in reqs:
        missing = [n for n in req if n not in schemes or not _satisfied(schemes[n], kinds, spec)]
        if not missing:
            used = " and ".join(f"{n} ({schemes[n].kind})" for n in req)
            unused = [k for k in kinds if not any(schemes[n].kind in _SATISFIES[k] for n in req)]
            extra = f"; configured but not declared: {', '.join(unused)}" if unused else ""
            return (not unused), f"the credentials satisfy the card's requirement {used}{extra}"
        options.append(" and ".join(
            f"{n} ({schemes[n].kind if n in schemes else 'undeclared'}: add "
            f"{_FIX.get(schemes[n].kind if n in schemes else 'unknown', _FIX['unknown'])})" for n in missing))
    return False, (f"the card requires credentials the config does not have (configured: {have}); "
                   f"provide one of: {' | '.join(options)}")


# ---- the flow

@dataclass(slots=True)
class _FileToken:
    path: str
    value: str
    mtime: int

    def current(self) -> str:
        """The file's token, re-read only when its modification time changed (a rotated token)."""
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except OSError:
            return self.value
        if mtime != self.mtime:
            try:
                with open(self.path, encoding="utf-8") as fh:
                    fresh = fh.read().strip()
            except (OSError, UnicodeDecodeError):
                return self.value
            if fresh:
                redact.register(fresh)
                self.value, self.mtime = fresh, mtime
        return self.value


@dataclass
class AuthFlow:
    """Implements `probe.wire.http.RequestAuth` for one agent and one probe run."""

    spec: AuthSpec
    allowed: frozenset[Origin]
    schemes: dict[str, Scheme] = field(default_factory=dict)
    tls: ClientConfig = field(default_factory=ClientConfig)  # for the token endpoint (CA bundle, client cert)
    exchanges: list[HttpExchange] = field(default_factory=list)  # the probe's own token exchanges
    problems: list[str] = field(default_factory=list)  # credentials that could not be placed
    _token: str | None = None
    _file: _FileToken | None = None
    _api_key: tuple[str, str] | None = None  # (name, location)

    def __post_init__(self) -> None:
        if self.spec.basic is not None:  # the forms a Basic credential travels in, masked in every output
            pair = f"{self.spec.basic.username}:{self.spec.basic.password.get_secret_value()}"
            redact.register(pair)
            redact.register("Basic " + base64.b64encode(pair.encode()).decode())
        if self.spec.bearer_file and self.spec.bearer is not None:
            # mtime -1: the first request reads the file again, so a token rotated since the run began is used
            self._file = _FileToken(self.spec.bearer_file, self.spec.bearer.get_secret_value(), -1)
        if self.spec.api_key is not None:
            declared = next((s.api_key for s in self.schemes.values() if s.kind == "apiKey"), (None, None))
            name = self.spec.api_key.name or declared[0]
            where = self.spec.api_key.location or declared[1] or "header"
            if name is None:
                self.problems.append("auth.api_key has no name and the card declares no apiKey scheme: "
                                     "set auth.api_key.name (and location)")
            elif where not in ("header", "query", "cookie"):
                self.problems.append(f"the card's apiKey location {where!r} is not header, query or cookie")
            else:
                self._api_key = (name, where)

    @property
    def needs_token(self) -> bool:
        return self.spec.oauth2 is not None

    @property
    def carries_credentials(self) -> bool:
        """Whether `credentials` can place anything at all: read each call, since `spec` is replaced when the
        target's secret headers join it and `_token` arrives with the OAuth2 exchange."""
        spec = self.spec
        return bool(spec.headers or spec.basic is not None or self._token or self._file is not None
                    or spec.bearer is not None or (self._api_key is not None and spec.api_key is not None))

    def allows(self, url: str) -> bool:
        return origin(url) in self.allowed

    def credentials(self, url: str) -> Credentials:
        if not self.allows(url):
            return NO_CREDENTIALS  # another origin (an advertised interface elsewhere, a redirect) gets nothing
        if not self.carries_credentials:
            return NO_CREDENTIALS  # nothing to place: the same empty record `_placed` builds
        return self._placed()

    def _placed(self) -> Credentials:
        """`credentials`' general path, for an allowed origin."""
        headers = {k: v.get_secret_value() for k, v in self.spec.headers.items()}
        query: dict[str, str] = {}
        cookies: dict[str, str] = {}
        if self.spec.basic is not None:
            pair = f"{self.spec.basic.username}:{self.spec.basic.password.get_secret_value()}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        bearer = self._token or (self._file.current() if self._file else None) or (
            self.spec.bearer.get_secret_value() if self.spec.bearer else None)
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        if self._api_key is not None and self.spec.api_key is not None:
            name, where = self._api_key
            value = self.spec.api_key.value.get_secret_value()
            {"header": headers, "query": query, "cookie": cookies}[where][name] = value
        return Credentials(headers, query, cookies)

    async def prepare(self, client: HttpClient, deadline: Deadline) -> None:
        """Fetch (or reuse) the OAuth2 token; raises AuthTokenFailed."""
        if self.spec.oauth2 is not None:
            self._token = await self._fetch(client, deadline, reuse=True)

    async def on_unauthorized(self, client: HttpClient, deadline: Deadline) -> bool:
        if self.spec.oauth2 is not None:
            self._token = await self._fetch(client, deadline, reuse=False)
            return True
        if self._file is not None:
            before = self._file.value
            return self._file.current() != before  # a token rotated on disk since the request went out
        return False

    # ---- OAuth2 client credentials

    async def _fetch(self, client: HttpClient, deadline: Deadline, *, reuse: bool) -> str:
        spec = self.spec.oauth2
        assert spec is not None
        token_url = await self._token_url(client, deadline, spec)
        scopes = spec.scopes or next((s.scopes() for s in self.schemes.values() if s.kind == "oauth2"), ())
        key = hashlib.sha256("\0".join([token_url, spec.client_id, spec.client_secret.get_secret_value(),
                                        " ".join(scopes), spec.audience or ""]).encode()).hexdigest()
        cached = _TOKENS.get(key)
        if reuse and cached is not None and cached[1] - _REFRESH_MARGIN > time.monotonic():
            return cached[0]
        _TOKENS.pop(key, None)
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        if spec.audience:
            form["audience"] = spec.audience
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        secret = spec.client_secret.get_secret_value()
        if spec.client_auth == "basic":
            pair = f"{_form(spec.client_id)}:{_form(secret)}"  # RFC 6749 §2.3.1: form-encoded, then Basic
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form |= {"client_id": spec.client_id, "client_secret": secret}
        doc = await self._json("POST", token_url, client, deadline, headers=headers,
                               body=urlencode(form).encode(), what="the token request")
        token = doc.get("access_token")
        if not isinstance(token, str) or not token:
            raise AuthTokenFailed(f"the token endpoint answered without an access_token "
                                  f"(fields: {', '.join(sorted(doc))[:120]})", self.exchanges[-1])
        token_type = doc.get("token_type")
        if isinstance(token_type, str) and token_type.lower() not in ("bearer", "n_a"):
            raise AuthTokenFailed(f"the token endpoint issued a {token_type[:40]!r} token; only Bearer is "
                                  "supported", self.exchanges[-1])
        redact.register(token)
        lifetime = doc.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, int | float) and not isinstance(lifetime, bool) else 300.0
        _TOKENS[key] = (token, time.monotonic() + max(1.0, seconds))
        while len(_TOKENS) > _CACHE_SIZE:
            _TOKENS.popitem(last=False)
        return token

    async def _token_url(self, client: HttpClient, deadline: Deadline, spec: OAuth2Spec) -> str:
        if spec.token_url:
            return spec.token_url
        discovery = spec.discovery_url
        declared_by_card = False
        if discovery is None and spec.oidc:
            oidc = next((s for s in self.schemes.values() if s.kind == "oidc"), None)
            url = oidc.body.get("openIdConnectUrl") if oidc else None
            discovery, declared_by_card = (url if isinstance(url, str) and url else None), True
        if discovery is not None:
            if declared_by_card and not self.allows(discovery):
                raise AuthTokenFailed(f"the card's openIdConnectUrl {redact.url(discovery)} is on another origin: "
                                      "set auth.oauth2.discovery_url (or allow the origin) to use it")
            return await self._discover(client, deadline, discovery)
        declared = next((u for s in self.schemes.values() if s.kind == "oauth2" and (u := s.token_url())), None)
        if declared is None:
            raise AuthTokenFailed("no token URL: set auth.oauth2.token_url (the card declares no clientCredentials "
                                  "flow)")
        if not self.allows(declared):
            raise AuthTokenFailed(f"the card's token URL {redact.url(declared)} is on another origin, and the "
                                  "client secret goes only where the config says: set auth.oauth2.token_url or "
                                  "add the origin to auth.allowed_origins")
        return declared

    async def _discover(self, client: HttpClient, deadline: Deadline, url: str) -> str:
        cached = _DISCOVERY.get(url)
        if cached is not None and time.monotonic() - cached[1] < _DISCOVERY_TTL:
            return cached[0]
        doc = await self._json("GET", url, client, deadline, headers={"Accept": "application/json"}, body=None,
                               what="the OpenID Connect discovery document")
        endpoint = doc.get("token_endpoint")
        if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
            raise AuthTokenFailed("the OpenID Connect discovery document has no token_endpoint URL",
                                  self.exchanges[-1])
        _DISCOVERY[url] = (endpoint, time.monotonic())
        while len(_DISCOVERY) > _CACHE_SIZE:
            _DISCOVERY.popitem(last=False)
        return endpoint

    async def _json(self, method: str, url: str, client: HttpClient, deadline: Deadline, *,
                    headers: dict[str, str], body: bytes | None, what: str) -> dict[str, Any]:
        try:
            resp = await client.request(method, url, deadline=deadline, headers=headers, body=body,
                                        max_bytes=MAX_TOKEN_BYTES, follow_redirects=False, config=self.tls)
        except WireError as exc:
            if exc.exchange is not None:
                self.exchanges.append(exc.exchange)
            raise AuthTokenFailed(f"{what} failed: {exc}", exc.exchange) from None
        self.exchanges.append(resp.exchange)
        try:
            doc = strictjson.loads(resp.body)
        except strictjson.StrictJSONError:
            doc = None
        if resp.status != 200:
            error = doc.get("error") if isinstance(doc, dict) else None
            detail = f" ({str(error)[:60]})" if isinstance(error, str) else ""
            raise AuthTokenFailed(f"{what} to {resp.exchange.url} answered HTTP {resp.status}{detail}",
                                  resp.exchange)
        if not isinstance(doc, dict):
            raise AuthTokenFailed(f"{what} to {resp.exchange.url} did not answer with a JSON object", resp.exchange)
        return doc


def _form(value: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(value)


def build(spec: AuthSpec, doc: dict[str, Any], own: list[str], tls: ClientConfig) -> AuthFlow:
    """The flow for one run: credentials for the agent's own origins (`own`) and the allowed ones."""
    allowed = frozenset(origin(u) for u in [*own, *spec.allowed_origins])
    return AuthFlow(spec, allowed, declared_schemes(doc), ClientConfig(ssl=tls.ssl, client_cert=tls.client_cert))
