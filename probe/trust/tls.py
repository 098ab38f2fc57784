"""TLS material per agent: a CA bundle, a client certificate (mTLS), and the one way to turn verification
off (`insecure_skip_verify`, per agent only, logged at start and shown on the status page).

Contexts are cached on their inputs (paths and file modification times): aiohttp pools connections per
context, so a new context per run would defeat keep-alive, while a rotated certificate file is picked up.
"""

from __future__ import annotations

import os
import ssl
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

_CACHE: OrderedDict[tuple[object, ...], ssl.SSLContext] = OrderedDict()
_CACHE_SIZE = 256


class TlsConfigError(ValueError):
    """A CA bundle or client certificate that cannot be read or used."""


@dataclass(frozen=True, slots=True)
class TlsSettings:
    ca_bundle: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    insecure_skip_verify: bool = False

    @property
    def default(self) -> bool:
        return self == TlsSettings()


def _stamp(path: Path | None) -> tuple[str, int] | None:
    if path is None:
        return None
    try:
        return str(path), os.stat(path).st_mtime_ns
    except OSError as exc:
        raise TlsConfigError(f"cannot read {path}: {exc.strerror}") from None


def context(settings: TlsSettings) -> ssl.SSLContext | None:
    """The SSL context for an agent; None for the default (system trust store, full verification)."""
    if settings.default:
        return None
    key = (_stamp(settings.ca_bundle), _stamp(settings.client_cert), _stamp(settings.client_key),
           settings.insecure_skip_verify)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    ctx = ssl.create_default_context()
    try:
        if settings.ca_bundle is not None:
            ctx.load_verify_locations(cafile=str(settings.ca_bundle))
        if settings.client_cert is not None:
            ctx.load_cert_chain(str(settings.client_cert),
                                str(settings.client_key) if settings.client_key is not None else None)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise TlsConfigError(f"TLS material unusable: {getattr(exc, 'reason', None) or exc}") from None
    if settings.insecure_skip_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    _CACHE[key] = ctx
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return ctx
