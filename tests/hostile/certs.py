"""Throw-away TLS certificates for loopback servers, made with `cryptography`: a CA, and leaf certificates that
are valid, self-signed, expired or for the wrong host."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Pem:
    cert: Path
    key: Path


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write(directory: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Pem:
    c, k = directory / f"{name}.crt", directory / f"{name}.key"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return Pem(c, k)


def make(directory: Path, name: str, *, host: str = "127.0.0.1", issuer: tuple[x509.Certificate,
         ec.EllipticCurvePrivateKey] | None = None, expired: bool = False, ca: bool = False,
         ) -> tuple[Pem, x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    now = dt.datetime.now(dt.UTC)
    start, end = (now - dt.timedelta(days=30), now - dt.timedelta(days=1)) if expired else \
        (now - dt.timedelta(hours=1), now + dt.timedelta(days=1))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} {host}")])
    issuer_cert, issuer_key = issuer if issuer else (None, key)
    try:
        san: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        san = x509.DNSName(host)
    builder = (x509.CertificateBuilder().subject_name(subject)
               .issuer_name(issuer_cert.subject if issuer_cert else subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([san]), critical=False)
    cert = builder.sign(issuer_key, hashes.SHA256())
    return _write(directory, name, cert, key), cert, key
