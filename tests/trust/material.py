"""Trust material the tests make themselves: signing keys and JWKS, a CA with server and client
certificates (valid, expired, soon to expire, wrong host), all with `cryptography` and joserfc."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from joserfc import jws
from joserfc.jwk import ECKey, OKPKey, RSAKey

Key = ECKey | RSAKey | OKPKey


def ec_key(kid: str) -> ECKey:
    return ECKey.generate_key("P-256", {"kid": kid}, private=True)


def jwks(*keys: Key) -> dict[str, Any]:
    return {"keys": [k.as_dict(private=False) for k in keys]}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign(card: dict[str, Any], key: Key, *, alg: str = "ES256", signed_form: dict[str, Any] | None = None,
         header: dict[str, Any] | None = None) -> dict[str, Any]:
    """The card with one more signature, over `signed_form` (default: the card itself) written out by the
    test, independently of the probe's canonicaliser."""
    body = {k: v for k, v in (signed_form if signed_form is not None else card).items() if k != "signatures"}
    protected = {"alg": alg, "typ": "JOSE", "kid": key.kid, **(header or {})}
    registry = jws.JWSRegistry(algorithms=[alg])
    compact = jws.serialize_compact(protected, rfc8785.dumps(body), key, registry=registry)
    prot, _payload, signature = compact.split(".")
    return {**card, "signatures": [*card.get("signatures", []), {"protected": prot, "signature": signature}]}


def forged_signature(card: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    """A signature entry with an arbitrary protected header and garbage bytes."""
    entry = {"protected": b64(json.dumps(header).encode()), "signature": b64(b"\x00" * 64)}
    return {**card, "signatures": [*card.get("signatures", []), entry]}


# ---- X.509

@dataclass
class Issued:
    cert: Path
    key: Path
    not_after: dt.datetime


@dataclass
class CA:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate
    path: Path  # the CA bundle (PEM)
    dir: Path

    @classmethod
    def create(cls, directory: Path, name: str = "a2a-probe test CA") -> CA:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
                .not_valid_after(now + dt.timedelta(days=3650))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name.replace(' ', '_')}.pem"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cls(key, cert, path, directory)

    def issue(self, name: str, *, hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), days: float = 90,
              not_before_days: float = 1, client: bool = False) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        not_after = now + dt.timedelta(days=days)
        sans: list[x509.GeneralName] = []
        for h in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(h)))
            except ValueError:
                sans.append(x509.DNSName(h))
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(self.cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(days=not_before_days)).not_valid_after(not_after)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client
                                                         else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        cert_path, key_path = self.dir / f"{name}.crt", self.dir / f"{name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return Issued(cert_path, key_path, not_after)


def server_context(issued: Issued, *, client_ca: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(issued.cert, issued.key)
    if client_ca is not None:
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx
