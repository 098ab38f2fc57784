"""What to probe: one agent, resolved from the CLI or the daemon config. Secrets stay SecretStr.

`check_url` is the one definition of an acceptable agent URL: the CLI, the config file, `/probe?target=`
and the wire client all use it, so a malformed URL is the same usage error everywhere and never reaches
aiohttp (where it would surface as a traceback or as an agent failure).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

MAX_URL_LENGTH = 2048
_BAD_CHARS = re.compile(r"[\s\x00-\x1f\x7f]")
_HOST_PORT = re.compile(r"^[A-Za-z0-9.\-\[\]:]+(:\d+)?(/.*)?$")


# per-probe bounds on work, as well as on time: a flooding agent costs the probe this much at most
DEFAULT_LIMITS = {"max_stream_events": 10_000, "max_stream_bytes": 32 << 20, "max_stream_artifacts": 1_000}

USERINFO_REFUSED = ("credentials in the URL (user:password@) are refused: they would be sent to the agent and "
                    "printed; configure them as a secret (auth.headers or auth.bearer_token with env or file)")


class InvalidUrl(ValueError):
    """A URL no request should be sent to; the message is one line and never repeats the URL (it may hold a
    credential in its userinfo or query)."""


def check_url(url: str) -> str:
    """Return `url` unchanged if it is an absolute http(s) URL with a host and a valid port; else raise InvalidUrl."""
    if not url:
        raise InvalidUrl("URL is empty")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidUrl(f"URL is longer than {MAX_URL_LENGTH} characters")
    if _BAD_CHARS.search(url):
        raise InvalidUrl("URL must not contain spaces or control characters (percent-encode them, e.g. %20)")
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        looks_like_host = _HOST_PORT.match(url) and ("." in url or re.match(r"^[\w-]+:\d+", url))
        hint = f" (did you mean http://{url}?)" if not scheme and looks_like_host else ""
        raise InvalidUrl(f"URL must start with http:// or https://{hint}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # urllib's own words: "Port out of range 0-65535", "Invalid IPv6 URL", ...
        text = str(exc)
        if "port" in text.lower():
            raise InvalidUrl("URL port must be a number from 1 to 65535") from None
        raise InvalidUrl(f"URL is not valid: {text}") from None
    if not parts.hostname:
        raise InvalidUrl("URL has no host (expected http://host[:port]/path)")
    if port == 0:
        raise InvalidUrl("URL port must be a number from 1 to 65535")
    if ":" in parts.netloc.rsplit("@", 1)[-1].split("]")[-1] and port is None:
        raise InvalidUrl("URL port must be a number from 1 to 65535")  # "host:" with nothing after the colon
    if "@" in parts.netloc:
        raise InvalidUrl(USERINFO_REFUSED)
    return url


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApiKeySpec(_Frozen):
    value: SecretStr
    name: str | None = None  # default: the name the card's apiKey scheme declares
    location: Literal["header", "query", "cookie"] | None = None  # default: as the card declares


class BasicSpec(_Frozen):
    username: str
    password: SecretStr


class OAuth2Spec(_Frozen):
    """Client credentials (RFC 6749 §4.4); with `discovery_url` (or a declared OIDC scheme) the token endpoint
    comes from the OpenID Connect discovery document."""

    client_id: str
    client_secret: SecretStr
    token_url: str | None = None  # default: the card's clientCredentials tokenUrl, on an allowed origin only
    discovery_url: str | None = None  # OIDC: .../.well-known/openid-configuration
    scopes: tuple[str, ...] = ()
    audience: str | None = None
    client_auth: Literal["basic", "post"] = "basic"  # client_secret_basic (RFC 6749 §2.3.1) or _post
    oidc: bool = False


class AuthSpec(_Frozen):
    """Resolved credentials for one run; every value is a SecretStr, registered for redaction."""

    bearer: SecretStr | None = None
    bearer_file: str | None = None  # re-read when its modification time changes
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    api_key: ApiKeySpec | None = None
    basic: BasicSpec | None = None
    oauth2: OAuth2Spec | None = None
    client_cert: bool = False  # a TLS client certificate is configured (mTLS)
    allowed_origins: tuple[str, ...] = ()  # besides the agent's own origin

    def secret_values(self) -> list[str]:
        values = [v.get_secret_value() for v in self.headers.values()]
        values += [s.get_secret_value() for s in (self.bearer, self.api_key.value if self.api_key else None,
                                                  self.basic.password if self.basic else None,
                                                  self.oauth2.client_secret if self.oauth2 else None) if s]
        return values

    @property
    def empty(self) -> bool:
        return self == AuthSpec()


class TlsSpec(_Frozen):
    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    insecure_skip_verify: bool = False
    expiry_window: float = Field(14 * 86400.0, gt=0, description="seconds before expiry a certificate is flagged")


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str = Field(description="Base URL (may carry a gateway path prefix) or the card URL itself")
    card_url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict,
                                          description="Sent on invocation only, never on public discovery")
    a2a_version: Literal["1.0", "0.3"] | None = None
    binding: Literal["JSONRPC", "HTTP+JSON", "GRPC"] | None = None
    message: str = "a2a-probe health check"
    expect_text: str | None = None
    timeout: float = Field(30.0, gt=0, le=3600)
    allow_cross_origin_redirect: bool = False
    stream_close_grace: float = Field(1.0, ge=0, le=60,
                                      description="How long a stream may stay open after its terminal event")
    max_stream_events: int = Field(DEFAULT_LIMITS["max_stream_events"], ge=1,
                                   description="events read from one stream before the probe stops reading")
    max_stream_bytes: int = Field(DEFAULT_LIMITS["max_stream_bytes"], ge=1024,
                                  description="bytes read from one stream before the probe stops reading")
    max_stream_artifacts: int = Field(DEFAULT_LIMITS["max_stream_artifacts"], ge=1,
                                      description="distinct artifacts in one stream before the probe stops reading")
    trusted_jwks: dict[str, Any] | None = Field(None, description="a JWK Set of public keys the card may be "
                                                                  "signed with (already validated)")
    signature_policy: Literal["require", "verify", "off"] = "off"
    auth: AuthSpec = Field(default_factory=AuthSpec)
    # a second identity (another caller the agent must keep apart from `auth`'s): only security.scoped_access
    # uses it, to see whether one caller can get, cancel, subscribe to or list the other's tasks
    other_auth: AuthSpec | None = None
    tls: TlsSpec = Field(default_factory=TlsSpec)
    fresh_connection: bool = Field(False, description="a new connection (DNS, TCP, TLS) for every call to the "
                                                       "agent's interface (the card comes over the kept-alive pool)")
    card_cache_max_age: float | None = Field(None, ge=0, description="the daemon's cap on reusing a cached card, "
                                             "seconds (None: the daemon's default; 0: fetched every probe); only "
                                             "runs given a card cache (the daemon's scheduled ones) use it")

    @field_validator("url", "card_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        return None if v is None else check_url(v)

    def invoke_headers(self) -> dict[str, str]:
        return {k: v.get_secret_value() for k, v in self.headers.items()}
