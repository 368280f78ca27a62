"""`mpsched certs`: a private CA and the certificates of a lab's switches and controller.

Written with the `cryptography` package (Debian's python3-cryptography, pinned in
requirements.txt): no `openssl` command line to assemble, and the certificates are checked in
the tests by the same library. Every key is an EC P-256 key written with mode 0600; the
certificates are PEM. Files in `--out`:

- ca.pem, ca.key: the lab's CA (give ca.pem as the description's tls.ca_cert and to BMv2's
  --grpc-server-cacert);
- <switch>.pem, <switch>.key: one server certificate per switch, its SAN the switch's name,
  127.0.0.1 and the addresses given (`--switch s1=10.0.0.1`);
- controller.pem, controller.key: the controller's client certificate (mutual TLS).

docs/security.md tells how they are used.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

log = logging.getLogger(__name__)

CONTROLLER = "controller"  # the client certificate's file name and common name
LOOPBACK = "127.0.0.1"
KEY_MODE = 0o600
DEFAULT_DAYS = 365
MAX_DAYS = 3650
SWITCH_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")

GeneralName = x509.DNSName | x509.IPAddress


def _name(common_name: str) -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mpsched lab"),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ])


def _builder(subject: str, issuer: x509.Name, key: ec.EllipticCurvePrivateKey,
             days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder()
            .subject_name(_name(subject))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def make_ca(days: int = DEFAULT_DAYS) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (_builder("mpsched lab CA", _name("mpsched lab CA"), key, days)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                         False), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def san_names(name: str, addresses: Sequence[str] = ()) -> list[GeneralName]:
    """The subject alternative names of a switch: its name, 127.0.0.1 and the addresses
    given (an IP address as such, anything else as a DNS name)."""
    names: list[GeneralName] = [x509.DNSName(name)]
    for text in [LOOPBACK, *addresses]:
        try:
            entry: GeneralName = x509.IPAddress(ipaddress.ip_address(text))
        except ValueError:
            entry = x509.DNSName(text)
        if entry not in names:
            names.append(entry)
    return names


def issue(ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], common_name: str,
          names: Sequence[GeneralName] | None, days: int = DEFAULT_DAYS,
          ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate signed by `ca`: a server's with `names` (its SAN), else a client's."""
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if names else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (_builder(common_name, ca_cert.subject, key, days)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def pem(cert: x509.Certificate) -> bytes:
    """A certificate as PEM."""
    return cert.public_bytes(serialization.Encoding.PEM)


def write_pair(out: Path, stem: str, cert: x509.Certificate,
               key: ec.EllipticCurvePrivateKey) -> None:
    """<stem>.pem (0644) and <stem>.key (0600, created so: never readable by others)."""
    (out / f"{stem}.pem").write_bytes(pem(cert))
    key_path = out / f"{stem}.key"
    key_path.unlink(missing_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


def parse_switch(text: str) -> tuple[str, list[str]]:
    """``s1`` or ``s1=10.0.0.1,sw1.lab`` -> (name, extra SAN entries). The name is a file
    name in --out and the certificate's DNS name: letters, digits, '-', '_', '.', not
    starting with '.' or '-', and not one of the lab's own files."""
    name, _, extra = text.partition("=")
    if not SWITCH_NAME.fullmatch(name) or name in (CONTROLLER, "ca"):
        raise argparse.ArgumentTypeError(f"not a usable switch name: {name!r}")
    return name, [a for a in extra.split(",") if a]


def parse_days(text: str) -> int:
    """--days: a whole number of days, 1..MAX_DAYS."""
    try:
        days = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of days: {text!r}") from None
    if not 1 <= days <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"must be 1..{MAX_DAYS}, got {days}")
    return days


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsched certs",
        description="Create a private CA and the TLS certificates of a lab: one server "
        "certificate per switch (SAN: its name, 127.0.0.1 and the addresses given) and a "
        "client certificate for the controller. Keys are written with mode 0600; an existing "
        "file of the same name is replaced. See docs/security.md.",
    )
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="directory to write ca.pem/ca.key, <switch>.pem/.key and "
                        "controller.pem/.key to (created if absent)")
    parser.add_argument("--switch", action="append", type=parse_switch, required=True,
                        metavar="NAME[=ADDR,...]", dest="switches",
                        help="a switch to certify, with extra SAN addresses or names after "
                        "'=' (repeat for each switch)")
    parser.add_argument("--days", type=parse_days, default=DEFAULT_DAYS,
                        help=f"validity in days, 1..{MAX_DAYS} (default: %(default)s)")
    return parser


def execute(args: argparse.Namespace) -> int:
    """Write the CA, the switches' and the controller's certificates; 0, or 2 when --out
    cannot be written."""
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        ca = make_ca(args.days)
        write_pair(out, "ca", *ca)
        for name, extra in args.switches:
            write_pair(out, name, *issue(ca, name, san_names(name, extra), args.days))
        write_pair(out, CONTROLLER, *issue(ca, CONTROLLER, None, args.days))
    except OSError as error:
        print(f"mpsched certs: --out {out}: {error}", file=sys.stderr)
        return 2
    names = ", ".join(name for name, _ in args.switches)
    print(f"CA, switches ({names}) and controller certificates in {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
