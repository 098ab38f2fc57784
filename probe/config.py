"""Probe configuration: YAML for agents and modules (strict pydantic), pydantic-settings for the daemon.

Unknown keys are rejected, and every error names the file, the field and what was expected.
Credentials are only ever references (an environment variable or a file), resolved at probe time
into SecretStr values that no log, metric, report or /config page prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from probe import redact
from probe.results import BindingName
from probe.shard import Shard, ShardError
from probe.shard import parse as parse_shard
from probe.target import DEFAULT_LIMITS, ApiKeySpec, AuthSpec, BasicSpec, OAuth2Spec, Target, TlsSpec, check_url

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
# Prometheus target labels and reserved names must not be shadowed by agent_info labels
_SpecT = TypeVar("_SpecT", AuthSpec, TlsSpec)
_RESERVED_LABELS = {"agent", "module", "job", "instance", "le", "quantile", "reason", "step", "phase"}


def parse_duration(value: Any) -> float:
    """'30s', '5m', '1.5h', '250ms' or a bare number of seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration like 30s, 5m or 250ms")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = _DURATION.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not a duration like 30s, 5m or 250ms")
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not seconds > 0:  # also NaN (YAML's .nan)
        raise ValueError("a duration must be positive")
    if seconds > MAX_DURATION:  # also YAML's .inf: the scheduler's timedelta overflows far below a float's range
        raise ValueError(f"a duration must be at most {MAX_DURATION / 86400:.0f} days")
    return seconds


MAX_DURATION = 365 * 86400.0


Duration = Annotated[float, BeforeValidator(parse_duration)]
Jitter = Annotated[float, Field(ge=0), BeforeValidator(lambda v: 0.0 if v in (0, "0", "0s") else parse_duration(v))]
MAX_CARD_CACHE_AGE = 86400.0


def _card_cache_age(value: Any) -> float:
    """The cap on reusing a cached Agent Card (probe.wire.cardcache): a duration up to 24h, or 0 (every probe)."""
    if value in (0, "0", "0s") and not isinstance(value, bool):
        return 0.0
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise ValueError(f"{str(value)[:40]!r} is not a duration like 5m or 300s, or 0 to fetch the card every "
                         "probe") from None
    if seconds > MAX_CARD_CACHE_AGE:
        raise ValueError(f"{seconds:g}s is over 24h: a card is checked at least once a day")
    return seconds


CardCacheAge = Annotated[float, BeforeValidator(_card_cache_age)]
DEFAULT_CARD_CACHE_MAX_AGE = 300.0  # docs/daemon.md "The card cache": why 5 minutes
_CARD_CACHE_HELP = ("the longest a scheduled run reuses a cached Agent Card (RFC 9111 freshness, capped by this; "
                    "then a conditional GET); 0 fetches the card every probe; at most 24h")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Prober(StrEnum):
    PING = "ping"
    INVOKE = "invoke"
    STREAM = "stream"
    FULL = "full"
    PUSH = "push"


def _binding_list(v: list[BindingName] | None) -> list[BindingName] | None:
    if v is not None and not v:
        names = ", ".join(b.value for b in BindingName)
        raise ValueError(f"an empty list probes nothing: name one or more of {names}, or leave bindings out to "
                         "probe every advertised interface")
    if v is not None and len(set(v)) != len(v):
        raise ValueError("a binding is listed twice")
    return v


class Module(_Strict):
    prober: Prober
    interval: Duration = 60.0
    timeout: Duration = 30.0
    safe_only: bool = Field(False, description="full only: run just the checks that start no agent work")
    jitter: Jitter | None = Field(None, description="bounded delay after the job's phase slot, drawn per run; "
                                                    "default: 2% of the interval, at most 1s; 0 disables; "
                                                    "at most a quarter of the interval")
    detailed_metrics: bool = Field(False, description="export the per-step and per-phase series for every agent "
                                                      "on this module (docs/metrics.md)")
    late_after: Duration | None = Field(None, description="push only: a terminal delivery later than this after the "
                                                          "send counts as late (measured; not a failure)")
    bindings: list[BindingName] | None = Field(None, description="ping, invoke, stream: probe only the card's "
                                               "interfaces of these bindings (default: every one it advertises)")
    fresh_connection: bool | None = Field(None, description="a new connection (DNS, TCP, TLS) for every call to "
                                                            "the agent's interface, so those timings are real (the "
                                                            "card comes over the kept-alive pool); default: on for "
                                                            "ping only")

    max_stream_events: int | None = Field(None, ge=1, description="events read from one stream before the probe "
                                                                 "stops (work_limit_exceeded); default 10000")
    max_stream_bytes: int | None = Field(None, ge=1024, description="bytes read from one stream before the probe "
                                                                    "stops; default 32 MiB")
    max_stream_artifacts: int | None = Field(None, ge=1, description="distinct artifacts in one stream before the "
                                                                     "probe stops; default 1000")

    def limits(self) -> dict[str, int]:
        """The per-probe bounds on work this module sets (the rest keep Target's defaults)."""
        return {k: v for k in DEFAULT_LIMITS if (v := getattr(self, k)) is not None}

    @model_validator(mode="after")
    def _timeout_fits(self) -> Module:
        if self.timeout > self.interval:
            raise ValueError(f"timeout ({self.timeout:g}s) must not exceed interval ({self.interval:g}s)")
        if self.late_after is not None and self.prober is not Prober.PUSH:
            raise ValueError("late_after applies to the push prober only")
        _binding_list(self.bindings)
        if self.bindings is not None and self.prober not in MULTI_BINDING:
            raise ValueError(f"bindings applies to the {', '.join(p.value for p in MULTI_BINDING)} probers only "
                             f"({self.prober.value} probes the card's preferred interface)")
        if self.jitter is not None and self.jitter > self.interval / 4:
            raise ValueError(f"jitter ({self.jitter:g}s) must not exceed a quarter of the interval "
                             f"({self.interval / 4:g}s): runs stay near their phase slot")
        return self

    @property
    def fresh(self) -> bool:
        return self.fresh_connection if self.fresh_connection is not None else self.prober is Prober.PING

    @property
    def effective_jitter(self) -> float:
        # runs are already spread by their phase (probe.scheduler); jitter only breaks exact lockstep
        return self.jitter if self.jitter is not None else min(1.0, self.interval * 0.02)


MULTI_BINDING = (Prober.PING, Prober.INVOKE, Prober.STREAM)  # the probers that probe every advertised interface


DEFAULT_MODULES: dict[str, Module] = {
    "ping": Module(prober=Prober.PING, interval=30.0, timeout=10.0),
    "invoke": Module(prober=Prober.INVOKE, interval=300.0, timeout=60.0),
    "stream": Module(prober=Prober.STREAM, interval=300.0, timeout=60.0),
    "full": Module(prober=Prober.FULL, interval=3600.0, timeout=120.0),
    "push": Module(prober=Prober.PUSH, interval=300.0, timeout=60.0),
}


class SecretRef(_Strict):
    """Where a credential lives; the value itself never appears in config files."""

    env: str | None = None
    file: Path | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of env or file")
        return self

    def problem(self) -> str | None:
        """Why this reference cannot be resolved here, naming the variable or file (never a value); None if it can."""
        if self.env is not None:
            return None if os.environ.get(self.env) else f"environment variable {self.env} is not set or empty"
        assert self.file is not None
        if not self.file.is_file():
            return f"secret file {self.file} does not exist"
        if not os.access(self.file, os.R_OK):
            return f"secret file {self.file} is not readable"
        return None

    def resolve(self) -> SecretStr:
        if self.env is not None:
            value = os.environ.get(self.env)
            if not value:
                raise ConfigError(f"environment variable {self.env} is not set or empty")
            return SecretStr(value)
        assert self.file is not None
        try:
            value = self.file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read secret file {self.file}: "
                              f"{getattr(exc, 'strerror', None) or 'not UTF-8 text'}") from None
        if not value:
            raise ConfigError(f"secret file {self.file} is empty")
        return SecretStr(value)


class ApiKeyAuth(_Strict):
    value: SecretRef
    name: str | None = Field(None, description="default: the name the card's apiKey scheme declares")
    location: Literal["header", "query", "cookie"] | None = Field(None, description="default: as the card declares")


class BasicAuth(_Strict):
    username: str
    password: SecretRef


class OAuth2Auth(_Strict):
    """OAuth2 client credentials; `oidc: true` (or `discovery_url`) finds the token endpoint by OIDC discovery."""

    client_id: str
    client_secret: SecretRef
    token_url: str | None = Field(None, description="default: the card's clientCredentials tokenUrl (own or allowed "
                                                    "origin only)")
    discovery_url: str | None = Field(None, description="an OpenID Connect discovery document URL")
    oidc: bool = False
    scopes: list[str] = Field(default_factory=list)
    audience: str | None = None
    client_auth: Literal["basic", "post"] = "basic"

    @field_validator("token_url", "discovery_url")
    @classmethod
    def _urls(cls, v: str | None) -> str | None:
        return None if v is None else check_url(v)


class Auth(_Strict):
    bearer_token: SecretRef | None = None
    headers: dict[str, SecretRef] = Field(default_factory=dict, description="e.g. X-API-Key from a file")
    api_key: ApiKeyAuth | None = None
    basic: BasicAuth | None = None
    oauth2: OAuth2Auth | None = None
    allowed_origins: list[str] = Field(default_factory=list,
                                       description="other origins that may receive these credentials (an "
                                                   "advertised interface or token URL elsewhere); the agent's own "
                                                   "origin always may")

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, v: list[str]) -> list[str]:
        for item in v:
            check_url(item)
        return v

    def refs(self, where: str) -> dict[str, SecretRef]:
        """Every credential reference, by where it sits under `where` (auth.bearer_token, auth.headers.X-Key)."""
        refs = {f"{where}.headers.{k}": ref for k, ref in self.headers.items()}
        if self.bearer_token is not None:
            refs[f"{where}.bearer_token"] = self.bearer_token
        if self.api_key is not None:
            refs[f"{where}.api_key.value"] = self.api_key.value
        if self.basic is not None:
            refs[f"{where}.basic.password"] = self.basic.password
        if self.oauth2 is not None:
            refs[f"{where}.oauth2.client_secret"] = self.oauth2.client_secret
        return refs

    def identity(self) -> tuple[object, ...]:
        """What names the caller (not where the credentials may go): two equal ones are one identity."""
        return (self.bearer_token, self.headers, self.api_key, self.basic, self.oauth2)

    def spec(self, where: str, resolved: Mapping[str, SecretStr], *, client_cert: bool,
             also_allowed: Sequence[str] = ()) -> AuthSpec:
        """The AuthSpec of one run, with the secrets `resolved` by where they sit under `where`."""
        return AuthSpec(
            bearer=resolved.get(f"{where}.bearer_token"),
            bearer_file=str(self.bearer_token.file) if self.bearer_token and self.bearer_token.file else None,
            headers={k: resolved[f"{where}.headers.{k}"] for k in self.headers},
            api_key=ApiKeySpec(value=resolved[f"{where}.api_key.value"], name=self.api_key.name,
                               location=self.api_key.location) if self.api_key else None,
            basic=BasicSpec(username=self.basic.username, password=resolved[f"{where}.basic.password"])
            if self.basic else None,
            oauth2=OAuth2Spec(client_id=self.oauth2.client_id, client_secret=resolved[f"{where}.oauth2.client_secret"],
                              token_url=self.oauth2.token_url, discovery_url=self.oauth2.discovery_url,
                              scopes=tuple(self.oauth2.scopes), audience=self.oauth2.audience,
                              client_auth=self.oauth2.client_auth,
                              oidc=self.oauth2.oidc or self.oauth2.discovery_url is not None)
            if self.oauth2 else None,
            client_cert=client_cert, allowed_origins=tuple(dict.fromkeys([*also_allowed, *self.allowed_origins])))


class TlsConfig(_Strict):
    ca_bundle: Path | None = Field(None, description="PEM CA bundle trusted for this agent (besides the system's)")
    client_cert: Path | None = Field(None, description="PEM client certificate (mTLS); the key in it or client_key")
    client_key: Path | None = None
    insecure_skip_verify: bool = Field(False, description="never verify the agent's certificate: logged at start, "
                                                          "shown on the status page, a failed check every run")
    expiry_window: Duration = Field(14 * 86400.0, description="flag certificates that expire within this window")

    @model_validator(mode="after")
    def _key_needs_cert(self) -> TlsConfig:
        if self.client_key is not None and self.client_cert is None:
            raise ValueError("client_key needs client_cert")
        return self


class CardSignatures(_Strict):
    """Card signature verification against a locally trusted JWKS (never a key the card points to)."""

    policy: Literal["require", "verify", "off"] | None = Field(
        None, description="require: unsigned or unverified fails the probe; verify: findings only (the default "
                          "with a JWKS); off")
    trusted_jwks_file: Path | None = Field(None, description="a JWK Set (JSON) of public keys, re-read every run")
    trusted_jwks: dict[str, Any] | None = Field(None, description="the same JWK Set, inline")

    @model_validator(mode="after")
    def _consistent(self) -> CardSignatures:
        if self.trusted_jwks_file is not None and self.trusted_jwks is not None:
            raise ValueError("give trusted_jwks_file or trusted_jwks, not both")
        if self.trusted_jwks is not None:
            from probe.trust.signatures import TrustStoreError, load_keyset

            try:
                load_keyset(self.trusted_jwks)
            except TrustStoreError as exc:
                raise ValueError(f"trusted_jwks: {exc}") from None
        if self.policy in ("require", "verify") and self.trusted_jwks_file is None and self.trusted_jwks is None:
            raise ValueError(f"policy {self.policy} needs trusted_jwks_file or trusted_jwks")
        return self

    @property
    def effective_policy(self) -> Literal["require", "verify", "off"]:
        if self.policy is not None:
            return self.policy
        return "verify" if self.trusted_jwks_file is not None or self.trusted_jwks is not None else "off"

    def resolve(self) -> dict[str, Any] | None:
        """The JWK Set for this run (a file may rotate); ConfigError when it cannot be read or used."""
        if self.effective_policy == "off":
            return None
        if self.trusted_jwks is not None:
            return self.trusted_jwks
        assert self.trusted_jwks_file is not None
        return load_jwks_file(self.trusted_jwks_file)


def load_jwks_file(path: Path) -> dict[str, Any]:
    from probe.trust.signatures import TrustStoreError, load_keyset

    try:
        doc = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read trusted JWKS {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"trusted JWKS {path} is not JSON: {exc}") from None
    try:
        load_keyset(doc)
    except TrustStoreError as exc:
        raise ConfigError(f"trusted JWKS {path}: {exc}") from None
    assert isinstance(doc, dict)
    return doc


class Agent(_Strict):
    name: str
    url: str
    card_url: str | None = None
    modules: list[str] = Field(default_factory=lambda: ["ping"])
    a2a_version: Literal["1.0", "0.3"] | None = None
    binding: Literal["JSONRPC", "HTTP+JSON", "GRPC"] | None = Field(
        None, description="probe only this binding's interface (the card's spelling)")
    bindings: list[BindingName] | None = Field(None, description="probe only the card's interfaces of these "
                                               "bindings (default: every one it advertises)")
    headers: dict[str, str] = Field(default_factory=dict, description="non-secret extra headers on invocation")
    auth: Auth = Field(default_factory=Auth)
    other_auth: Auth | None = Field(None, description="a second identity, another caller the agent must keep apart "
                                    "from auth's (another user or tenant): full's security.scoped_access checks "
                                    "that it can neither see nor learn of auth's tasks; the same kinds as auth")
    message: str = "a2a-probe health check"
    expect_text: str | None = None
    slow_prompt: str | None = Field(None, description="full: a text that keeps a task running (cancel, subscribe, "
                                                      "multi-stream)")
    input_prompt: str | None = Field(None, description="full: a text that makes the agent ask for input")
    labels: dict[str, str] = Field(default_factory=dict, description="exported only via a2a_probe_agent_info")
    allow_cross_origin_redirect: bool = False
    card_signatures: CardSignatures = Field(default_factory=CardSignatures)
    detailed_metrics: bool = Field(False, description="export the per-step and per-phase series for this agent")
    tls: TlsConfig = Field(default_factory=TlsConfig)
    card_cache_max_age: CardCacheAge | None = Field(None, description=_CARD_CACHE_HELP + "; default: the "
                                                    "top-level card_cache_max_age")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _AGENT_NAME.match(v):
            raise ValueError("names are 1-128 characters of letters, digits and . _ : / - (a metric label value)")
        return v

    @field_validator("url", "card_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        return None if v is None else check_url(v)

    @field_validator("bindings")
    @classmethod
    def _bindings(cls, v: list[BindingName] | None) -> list[BindingName] | None:
        return _binding_list(v)

    @model_validator(mode="after")
    def _one_binding_choice(self) -> Agent:
        if self.binding is not None and self.bindings is not None:
            raise ValueError("give binding (one) or bindings (a subset), not both")
        return self

    def binding_subset(self) -> frozenset[BindingName] | None:
        """The bindings this agent's interfaces are narrowed to (None: every advertised one)."""
        if self.binding is not None:
            return frozenset({BindingName.of(self.binding) or BindingName.JSONRPC})
        return frozenset(self.bindings) if self.bindings is not None else None

    @field_validator("headers")
    @classmethod
    def _no_secret_headers(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if redact.is_secret_header(k)]
        if bad:
            raise ValueError(f"{bad[0]} looks like a credential: put it under auth.headers with env or file")
        return v

    @model_validator(mode="after")
    def _second_identity(self) -> Agent:
        other = self.other_auth
        if other is None:
            return self
        if not other.refs("other_auth"):
            raise ValueError("other_auth gives no credentials: give the second identity's bearer_token, headers, "
                             "api_key, basic or oauth2 (as under auth)")
        if other.identity() == self.auth.identity():
            raise ValueError("other_auth names the same credentials as auth: the second identity must be another "
                             "caller (another user or tenant)")
        return self

    def secret_refs(self) -> dict[str, SecretRef]:
        """Every credential reference, by where it sits in the config (auth.bearer_token, auth.headers.X-Key,
        other_auth.bearer_token)."""
        refs = self.auth.refs("auth")
        if self.other_auth is not None:
            refs |= self.other_auth.refs("other_auth")
        return refs

    def credential_problems(self) -> list[str]:
        """Credentials that cannot be resolved in this environment, by name only."""
        return [f"{where}: {problem}" for where, ref in self.secret_refs().items() if (problem := ref.problem())]

    def reads_live_inputs(self) -> bool:
        """Whether `target` reads anything at each run (a secret from env or file, a JWKS file): without, the Target
        it returns for a timeout and fresh-connection setting never changes (the runner keeps it per job)."""
        signatures = self.card_signatures
        return bool(self.secret_refs()) or (signatures.effective_policy != "off" and signatures.trusted_jwks is None)

    def target(self, timeout: float, *, fresh_connection: bool = False) -> Target:
        """Resolve credentials now (they may rotate) into a Target for one probe run.

        Every call reads each secret and the JWKS file again and registers the secrets for redaction; the Target
        built from them is remembered per agent (`_TARGETS`) and handed out again only while those live inputs
        and the run's settings are equal to what it was built from, so a rotated secret or JWKS, a reloaded
        config (new Agent objects) or another timeout builds a new one. A Target is immutable (frozen)."""
        resolved: dict[str, SecretStr] = {}
        for where, ref in self.secret_refs().items():
            try:
                resolved[where] = ref.resolve()
            except ConfigError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            redact.register(resolved[where].get_secret_value())  # masked in every output from now on
        jwks = self.card_signatures.resolve()
        memo = _TARGETS.get(id(self))
        if (memo is not None and memo[0] is self and memo[1] == timeout and memo[2] is fresh_connection
                and memo[3] == resolved and memo[4] == jwks):
            return memo[5]
        target = _compact(self._build_target(timeout, fresh_connection, resolved, jwks))
        if memo is None and len(_TARGETS) >= MAX_TARGETS:
            del _TARGETS[next(iter(_TARGETS))]  # the oldest: most often an agent of a config reloaded since
        _TARGETS[id(self)] = (self, timeout, fresh_connection, resolved, jwks, target)
        return target

    def _build_target(self, timeout: float, fresh_connection: bool, resolved: dict[str, SecretStr],
                      jwks: dict[str, Any] | None) -> Target:
        headers = {k: SecretStr(v) for k, v in self.headers.items()}
        tls = self.tls
        cert = tls.client_cert is not None
        auth = self.auth.spec("auth", resolved, client_cert=cert)
        # the second identity's credentials go where the first's may: the agent's own origin and both allow-lists
        other = (self.other_auth.spec("other_auth", resolved, client_cert=cert,
                                      also_allowed=self.auth.allowed_origins)
                 if self.other_auth is not None else None)
        tls_spec = TlsSpec(ca_bundle=str(tls.ca_bundle) if tls.ca_bundle else None,
                           client_cert=str(tls.client_cert) if tls.client_cert else None,
                           client_key=str(tls.client_key) if tls.client_key else None,
                           insecure_skip_verify=tls.insecure_skip_verify, expiry_window=tls.expiry_window)
        return Target(name=self.name, url=self.url, card_url=self.card_url, headers=headers,
                      a2a_version=self.a2a_version, binding=self.binding, message=self.message,
                      expect_text=self.expect_text, timeout=timeout,
                      allow_cross_origin_redirect=self.allow_cross_origin_redirect,
                      trusted_jwks=jwks, signature_policy=self.card_signatures.effective_policy,
                      auth=_shared_default(auth), other_auth=other, tls=_shared_default(tls_spec),
                      fresh_connection=fresh_connection,
                      card_cache_max_age=self.card_cache_max_age)


# Agent.target's memo: id(agent) -> (the agent, kept alive so the id stays its own; timeout; fresh_connection; the
# secrets as resolved for it; the JWKS; the Target). One entry per agent of the fleet, oldest out first past the
# bound (a reloaded config's agents are new objects: their predecessors age out).
MAX_TARGETS = 65_536
_TARGETS: dict[int, tuple[Agent, float, bool, dict[str, SecretStr], dict[str, Any] | None, Target]] = {}
_DEFAULT_AUTH, _DEFAULT_TLS = AuthSpec(), TlsSpec()


_FIELDS_SET: dict[frozenset[str], set[str]] = {}


def _compact(target: Target) -> Target:
    """`target` with its fields-set shared with every kept Target given the same fields (the same keywords, as
    Agent.target passes them): ~0.7 KB less per agent. Safe because a Target is frozen, so nothing adds to the
    set in place; model_copy and copy give the copy a set of its own (tests/unit/test_target_memo.py)."""
    given = target.__pydantic_fields_set__
    shared = _FIELDS_SET.setdefault(frozenset(given), set(given))
    object.__setattr__(target, "__pydantic_fields_set__", shared)
    return target


def _shared_default(spec: _SpecT) -> _SpecT:
    """One object for the default (immutable) spec that most agents share: a kept Target costs less memory."""
    for default in (_DEFAULT_AUTH, _DEFAULT_TLS):
        if type(spec) is type(default) and spec == default:
            return default
    return spec


class MetricsConfig(_Strict):
    duration_buckets: list[float] = Field(
        default_factory=lambda: [0.25, 1, 5],
        description="per-agent duration histogram buckets; each bound is one series per agent and module")
    agent_info_labels: list[str] = Field(default_factory=list,
                                         description="agent label keys exported on a2a_probe_agent_info")
    detailed: bool = Field(False, description="detailed (per-step, per-phase) series for every agent; "
                                              "about 5x the series of the lean default")

    @field_validator("duration_buckets")
    @classmethod
    def _buckets(cls, v: list[float]) -> list[float]:
        if not v or len(v) > 30 or any(b <= 0 for b in v) or sorted(set(v)) != v:
            raise ValueError("1-30 positive, strictly increasing bucket bounds")
        return v

    @field_validator("agent_info_labels")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        for name in v:
            if not _LABEL_NAME.match(name) or name in _RESERVED_LABELS or name.startswith("__"):
                raise ValueError(f"{name!r} is not an allowed label name")
        return v


class ProbeConfig(_Strict):
    modules: dict[str, Module] = Field(default_factory=dict)
    agents: list[Agent]
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    card_cache_max_age: CardCacheAge = Field(DEFAULT_CARD_CACHE_MAX_AGE, description=_CARD_CACHE_HELP +
                                             "; the default of every agent (5 minutes)")

    @model_validator(mode="after")
    def _references(self) -> ProbeConfig:
        counts = Counter(a.name for a in self.agents)  # linear: a fleet can be 50,000 agents
        dup = {n for n, c in counts.items() if c > 1}
        if dup:
            raise ValueError(f"agent names must be unique: {sorted(dup)}")
        known = self.all_modules()
        for a in self.agents:
            for u in (a.url, a.card_url):  # a token in a configured URL's query is a credential like any other
                if u is not None and "?" in u:
                    redact.register_url(u)
            unknown = [m for m in a.modules if m not in known]
            if unknown:
                raise ValueError(f"agent {a.name!r} uses unknown module(s) {unknown}; known: {sorted(known)}")
            for m in a.modules:
                if (subset := self.bindings(a, m)) is not None and not subset:
                    raise ValueError(f"agent {a.name!r}: its bindings and module {m!r}'s bindings have none in "
                                     "common, so the job would probe nothing")
            extra = set(a.labels) - set(self.metrics.agent_info_labels)
            if extra and self.metrics.agent_info_labels:
                raise ValueError(f"agent {a.name!r} has labels {sorted(extra)} not in metrics.agent_info_labels")
        return self

    def all_modules(self) -> dict[str, Module]:
        return DEFAULT_MODULES | self.modules

    def bindings(self, agent: Agent, module: str) -> frozenset[BindingName] | None:
        return job_bindings(agent, self.all_modules()[module])

    def push_jobs(self) -> list[tuple[str, str]]:
        """(agent, module) of every job whose module runs the push prober."""
        modules = self.all_modules()
        return [(a.name, m) for a in self.agents for m in a.modules if modules[m].prober is Prober.PUSH]

    def agent(self, name: str) -> Agent | None:
        return next((a for a in self.agents if a.name == name), None)

    def detailed(self, agent: Agent, module: str) -> bool:
        """Whether this agent x module exports the detailed metric set."""
        return self.metrics.detailed or agent.detailed_metrics or self.all_modules()[module].detailed_metrics


class ConfigError(Exception):
    pass


def job_bindings(agent: Agent, module: Module) -> frozenset[BindingName] | None:
    """The bindings a job probes: the agent's subset within the module's (None: every advertised one)."""
    mine, theirs = agent.binding_subset(), module.bindings
    if theirs is None:
        return mine
    return frozenset(theirs) if mine is None else mine & frozenset(theirs)


def check_public_url(url: str) -> str:
    """The receiver's public base URL: absolute http(s), a host, no credentials, query or fragment."""
    from urllib.parse import urlsplit

    check_url(url)  # the one URL check (scheme, host, port, spaces, no user:password@)
    parts = urlsplit(url)
    port = parts.port
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError("the push public URL must not carry a query or a fragment")
    if port == 0:
        raise ValueError("the push public URL needs a real port, not 0")
    return url.rstrip("/")


def require_push_url(config: ProbeConfig, settings: Settings) -> None:
    """A push module needs a public receiver URL: refuse to start (or reload) without one."""
    jobs = config.push_jobs()
    if jobs and settings.push_public_url is None:
        agent, module = jobs[0]
        raise ConfigError(f"agent {agent!r} runs the push module {module!r}, but no push public URL is set: set "
                          "A2A_PROBE_PUSH_PUBLIC_URL (or --push-public-url) to the URL at which agents reach this "
                          "daemon's web server, e.g. https://a2a-probe.example.com (webhooks are "
                          "<url>/-/push/<token>)")


def load(path: str | Path) -> tuple[ProbeConfig, str]:
    """Load and validate a config file; return it with the sha256 of its bytes (for reload)."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)  # never more: the path may be a huge file, a FIFO or /dev/zero
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{p}: larger than {MAX_CONFIG_BYTES // 2**20} MiB, the most a config file may hold "
                          "(50,000 agents take about 5 MiB)")
    return parse(raw, str(p)), hashlib.sha256(raw).hexdigest()


# A config file is read and validated on the event loop (start, SIGHUP, /-/reload): bounded, so no file can hold
# it for long (32 MiB: ~2.5 s of parsing) or grow it without bound (aliases, nesting: see `_bounded`).
MAX_CONFIG_BYTES = 32 * 2**20
MAX_CONFIG_DEPTH = 64  # a config nests ~6 levels (agents, auth, headers); an inline JWK Set a few more
MAX_CONFIG_VALUES = 5_000_000  # values with every YAML alias expanded: ~5x a 50,000-agent fleet's file


def _unique_keys(loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode) -> None:
    """A key given twice in one mapping is an error: YAML's loaders keep the last silently, so a second `url:` or
    `agents:` would replace the first unseen. A merge (`<<: *defaults`) may be overridden: that is its purpose."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: the safe constructor says so
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                    f"found duplicate key {str(key)[:60]!r}", key_node.start_mark)
        seen.add(key)


def _int(loader: Any, node: yaml.Node) -> int:  # Any: add_constructor wants the very loader class
    """An integer past Python's 4,300-digit limit is a YAML error, not a ValueError out of the loader."""
    try:
        return int(loader.construct_yaml_int(node))
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {len(str(node.value))} characters (more than Python reads)",
            node.start_mark) from None


class _PyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _unique_keys(self, node)
        return super().construct_mapping(node, deep)


class _CLoader(yaml.CSafeLoader):  # libyaml: 10x faster on a fleet's file (10,000 agents: 7 s -> 0.7 s)
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _unique_keys(self, node)
        return super().construct_mapping(node, deep)


_PyLoader.add_constructor("tag:yaml.org,2002:int", _int)
_CLoader.add_constructor("tag:yaml.org,2002:int", _int)
_C_LOADER = _CLoader if yaml.__with_libyaml__ else None


def _yaml(raw: bytes) -> Any:
    if _C_LOADER is not None:
        try:
            return yaml.load(raw, Loader=_C_LOADER)  # the safe loader, in C
        except yaml.YAMLError as exc:
            if "maximum nesting depth" in str(exc):
                raise  # libyaml's own bound (1000 levels); the pure loader would recurse past Python's
            # otherwise the pure loader below says what is wrong, in the words (and line numbers) it always has
    try:
        return yaml.load(raw, Loader=_PyLoader)
    except RecursionError:
        raise yaml.YAMLError(f"nested deeper than Python's recursion limit ({MAX_CONFIG_DEPTH} levels are "
                             "allowed)") from None


def parse(raw: bytes, source: str) -> ProbeConfig:
    try:
        doc = _yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{source}:{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{source}: expected a mapping with 'agents' (and optionally 'modules', 'metrics')")
    if (too_much := _bounded(doc)) is not None:
        raise ConfigError(f"{source}: {too_much}")
    try:
        return _share_defaults(ProbeConfig.model_validate(doc))
    except ValidationError as exc:
        raise ConfigError(format_errors(source, exc)) from None


class _Unbounded(Exception):
    pass


def _bounded(doc: Any) -> str | None:
    """Why the document is too much to validate (None: it is not): nested deeper than MAX_CONFIG_DEPTH, an alias
    inside its own anchor (a cycle), or more than MAX_CONFIG_VALUES values once YAML aliases are expanded (a
    billion-laughs file of a few hundred bytes, each alias a reference the validation would walk again)."""
    memo: dict[int, tuple[int, int]] = {}  # id -> (values with aliases expanded, height): each node walked once
    active: set[int] = set()

    def walk(node: Any, depth: int) -> tuple[int, int]:
        if not isinstance(node, dict | list):
            return 1, 0
        key = id(node)
        if (known := memo.get(key)) is None:
            if key in active:
                raise _Unbounded("a YAML alias refers to a node that contains it (a cycle)")
            if depth >= MAX_CONFIG_DEPTH:
                raise _Unbounded(f"nested deeper than {MAX_CONFIG_DEPTH} levels")
            active.add(key)
            values, height = 1, 0
            for child in (node.values() if isinstance(node, dict) else node):
                if not isinstance(child, dict | list):  # most values: no call
                    values += 1
                    continue
                n, h = walk(child, depth + 1)
                values += n
                height = max(height, h + 1)
                if values > MAX_CONFIG_VALUES:
                    raise _Unbounded(f"more than {MAX_CONFIG_VALUES:,} values with its YAML aliases expanded "
                                     "(an alias bomb?)")
            active.discard(key)
            known = memo[key] = (values, height)
        if depth + known[1] > MAX_CONFIG_DEPTH:  # a shared node reached deeper than where it was first met
            raise _Unbounded(f"nested deeper than {MAX_CONFIG_DEPTH} levels")
        return known

    try:
        walk(doc, 0)
    except _Unbounded as exc:
        return str(exc)
    return None


def _share_defaults(config: ProbeConfig) -> ProbeConfig:
    """The agents' default sub-models (auth, tls, card_signatures) as one object each, and their fields-sets shared
    like a kept Target's (`_compact`): most of a fleet's agents give neither, and each default costs ~0.5-0.7 KB
    per agent (50,000 agents: ~95 MB for what is three objects). Safe because config models are frozen: nothing
    changes them in place, and model_copy gives a copy its own fields-set (tests/unit/test_compact_state.py)."""
    defaults: dict[str, BaseModel] = {"auth": Auth(), "tls": TlsConfig(), "card_signatures": CardSignatures()}
    for agent in config.agents:
        fields = agent.__dict__
        for name, default in defaults.items():
            value = fields[name]
            if value is not default and value.__dict__ == default.__dict__:
                fields[name] = default
        given = agent.__pydantic_fields_set__
        object.__setattr__(agent, "__pydantic_fields_set__", _FIELDS_SET.setdefault(frozenset(given), set(given)))
    return config


def format_errors(source: str, exc: ValidationError) -> str:
    """One line per error (a single error stays on one line); a value is shown only where it cannot be a secret."""
    lines = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = "unknown key (not allowed here)" if e["type"] == "extra_forbidden" else e["msg"]
        msg = msg.removeprefix("Value error, ")
        lines.append(f"{loc}: {msg}{_shown_input(e)}")
    if len(lines) == 1:
        return f"{source}: {lines[0]}"
    return "\n".join([f"{source}: {len(lines)} errors", *(f"  {line}" for line in lines)])


def _shown_input(e: Any) -> str:
    """' (got …)' for a scalar that is no credential: never under headers or auth, never a mapping (it may hold
    a header value), and a URL only without its userinfo and query values."""
    from probe import redact

    if e["type"] in ("extra_forbidden", "missing") or "input" not in e or isinstance(e["input"], dict | list):
        return ""
    if any(str(p) in ("headers", "auth", "other_auth", "bearer_token") for p in e["loc"]):
        return ""
    value = str(e["input"])
    if e["loc"] and e["loc"][-1] in ("url", "card_url"):
        value = redact.url(value)
    return f" (got {value[:60]!r})"


class Settings(BaseSettings):
    """Daemon settings: environment A2A_PROBE_*, overridden by CLI flags."""

    model_config = SettingsConfigDict(env_prefix="A2A_PROBE_", extra="forbid")

    config_file: Path | None = None
    listen_address: str = "0.0.0.0:9470"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["json", "console", "auto"] = "auto"
    max_concurrency: int | None = Field(None, ge=1, le=10000,
                                        description="concurrency slots; unset: sized from the fleet and intervals")
    first_pass_rate: float = Field(50.0, ge=0, le=10000,
                                   description="runs/s of the early first pass over new jobs; 0: wait for each "
                                               "job's phase slot")
    max_connections: int | None = Field(None, ge=1, le=100000,
                                        description="open sockets overall; unset: twice the slots, at least 100")
    max_connections_per_origin: int | None = Field(
        None, ge=1, le=100000, description="sockets per origin (one gateway fronting many agents is one origin); "
                                           "unset: the overall limit")
    timeout_offset: float = Field(0.5, ge=0, le=10, description="subtracted from the Prometheus scrape timeout")
    history_limit: int = Field(20, ge=1, le=1000, description="results kept per agent and module for /report")
    drain_timeout: float = Field(10.0, ge=0, le=300, description="how long SIGTERM waits for in-flight probes")
    probe_target_enabled: bool = Field(False, description="allow /probe?target=URL (a caller-chosen URL); off by "
                                                          "default, since it makes the daemon fetch any URL")
    probe_target_pattern: str = Field(".*", description="regex every URL of a /probe?target= probe must fully match "
                                                        "(the target, redirects, the advertised interface)")
    probe_target_networks: list[str] = Field(
        default_factory=lambda: ["0.0.0.0/0", "::/0"],
        description="address ranges a /probe?target= probe may connect to (checked on the resolved address); "
                    "link-local, cloud-metadata and loopback addresses only when listed explicitly")
    probe_min_interval: float = Field(10.0, ge=0, le=3600, description="/probe runs an agent (or target) at most "
                                                                       "once per this many seconds; callers in "
                                                                       "between get that run's result")
    web_auth_bearer_file: Path | None = Field(None, description="require 'Authorization: Bearer <token>' on every "
                                                                "endpoint but /healthz and /readyz; token from file")
    web_auth_basic_file: Path | None = Field(None, description="require HTTP basic auth (user:password from file) "
                                                               "on every endpoint but /healthz and /readyz")
    web_tls_cert_file: Path | None = Field(None, description="serve the web endpoints over TLS: certificate (PEM)")
    web_tls_key_file: Path | None = Field(None, description="serve the web endpoints over TLS: private key (PEM)")
    web_max_connections: int | None = Field(
        None, ge=1, le=100000, description="open connections to the web server at most; one more is answered 503 and "
                                           "closed at once. Unset: 256, or a quarter of the open-file limit if lower "
                                           "(the rest stays for the probe's own connections to agents)")
    web_header_timeout: float = Field(10.0, gt=0, le=300, description="seconds a new connection to the web server "
                                                                      "has to send its request headers (slowloris)")
    web_keepalive_timeout: float = Field(15.0, gt=0, le=3600, description="seconds an idle keep-alive connection "
                                                                          "to the web server stays open")
    shard: str = Field("0/1", description="i/n: probe only the agents of shard i of n (rendezvous hash of the "
                                          "name); ordinal/n: i is the StatefulSet pod ordinal")

    @model_validator(mode="after")
    def _shard_ok(self) -> Settings:
        try:
            self.shard_spec()
        except ShardError as exc:
            raise ValueError(str(exc)) from None
        return self

    def shard_spec(self) -> Shard:
        # ordinal/n: the pod name from the downward API (A2A_PROBE_POD_NAME), else the hostname a pod gets
        pod = os.environ.get("A2A_PROBE_POD_NAME") or os.environ.get("HOSTNAME", "")
        return parse_shard(self.shard, pod)
    push_public_url: str | None = Field(None, description="the URL agents reach this daemon's web server at; push "
                                                          "webhooks are <url>/-/push/<token>. Required with a push "
                                                          "module")

    @field_validator("push_public_url")
    @classmethod
    def _public_url(cls, v: str | None) -> str | None:
        return None if v is None or not v.strip() else check_public_url(v.strip())

    @field_validator("probe_target_networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        import ipaddress

        for n in v:
            try:
                ipaddress.ip_network(n, strict=False)
            except ValueError:
                raise ValueError(f"{n!r} is not an address range like 10.0.0.0/8 or 2001:db8::/32") from None
        return v

    @field_validator("probe_target_pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return v

    @property
    def host_port(self) -> tuple[str, int]:
        host, _, port = self.listen_address.rpartition(":")
        return host.strip("[]") or "0.0.0.0", int(port)

    @field_validator("listen_address")
    @classmethod
    def _addr(cls, v: str) -> str:
        _host, sep, port = v.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
            raise ValueError(f"{v!r} is not host:port")
        return v
