"""P4Runtime over TLS for the switches a testbed starts (docs/security.md, "Local users").

A testbed's switches serve P4Runtime on 127.0.0.1; in plaintext and without client
authentication any local process could open a stream with a higher election id, become
primary (P4Runtime specification, "Client Arbitration and Controller Replication") and
rewrite every table. So each testbed makes a CA of its own when it starts, one server
certificate per switch (`mpsched.certs`) and a client certificate for the controller, and
starts every BMv2 with client authentication: only a holder of the controller's key, readable
by the testbed's user alone, reaches the switches.

Files, in `<log dir>/p4rt-tls/` (a fresh directory, mode 0700; keys 0600): ca.pem,
<switch>.pem/.key, controller.pem/.key. The CA's key stays in memory: no file can sign a
further certificate. `remove()` deletes the directory when the testbed stops. Generating is
cheap (a process's first CA in about 16 ms, later ones in 1 ms, a switch's certificate issued
and written in about 0.6 ms), so every testbed gets its own CA.

`add_option` adds `--p4rt-plaintext` to a command that starts a testbed: its switches then
serve plaintext P4Runtime without client authentication, as before.
"""

from __future__ import annotations

import argparse
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from mpsched import certs
from mpsched.proc.bmv2 import ServerTls

log = logging.getLogger(__name__)

TLS_DIR = "p4rt-tls"  # under the testbed's log directory
DIR_MODE = 0o700
# validity: longer than any testbed lives (a soak runs for hours), short enough that a key
# left behind by a killed run is soon worthless
DAYS = 30
PLAINTEXT_OPTION = "--p4rt-plaintext"
PLAINTEXT_HELP = (
    "serve P4Runtime in plaintext without client authentication (default: TLS with client "
    "certificates of a CA made for the testbed, docs/security.md 'Local users'); any local "
    "process can then take the switches: not on a shared machine"
)


class LabTlsError(RuntimeError):
    """The testbed's TLS directory could not be made."""


def add_option(parser: argparse.ArgumentParser) -> None:
    """`--p4rt-plaintext` (dest `p4rt_plaintext`) on a command that starts a testbed."""
    parser.add_argument(PLAINTEXT_OPTION, action="store_true", dest="p4rt_plaintext",
                        help=PLAINTEXT_HELP)


def fresh_dir(path: Path) -> None:
    """`path` as a new, empty directory of mode 0700: whatever was there (a killed run's
    directory, a file, a symbolic link) removed first, so no one else's file is used."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(mode=DIR_MODE)
    path.chmod(DIR_MODE)  # mkdir's mode is masked by the umask


@dataclass
class LabTls:
    """A testbed's CA and certificates in `dir` (module docstring); `create()` first."""

    dir: Path
    days: int = DAYS
    _ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = field(
        default=None, init=False, repr=False)

    @classmethod
    def under(cls, log_dir: Path) -> LabTls:
        """The testbed's TLS files in `log_dir`/p4rt-tls (not created yet)."""
        return cls(log_dir / TLS_DIR)

    @property
    def ca_cert(self) -> Path:
        return self.dir / "ca.pem"

    @property
    def client_cert(self) -> Path:
        return self.dir / f"{certs.CONTROLLER}.pem"

    @property
    def client_key(self) -> Path:
        return self.dir / f"{certs.CONTROLLER}.key"

    def create(self) -> LabTls:
        """The directory, the CA's certificate and the controller's client certificate."""
        try:
            fresh_dir(self.dir)
            self._ca = certs.make_ca(self.days)
            self.ca_cert.write_bytes(certs.pem(self._ca[0]))
            certs.write_pair(self.dir, certs.CONTROLLER,
                             *certs.issue(self._ca, certs.CONTROLLER, None, self.days))
        except OSError as error:
            raise LabTlsError(f"P4Runtime TLS files in {self.dir}: {error}") from None
        log.debug("P4Runtime TLS: a CA and the controller's certificate in %s", self.dir)
        return self

    def switch(self, name: str) -> ServerTls:
        """A server certificate for switch `name` (SAN: its name and 127.0.0.1), and how
        BMv2 serves it: with client authentication against the testbed's CA."""
        if self._ca is None:
            raise LabTlsError(f"{self.dir}: create() the CA before a switch's certificate")
        try:
            certs.write_pair(self.dir, name,
                             *certs.issue(self._ca, name, certs.san_names(name), self.days))
        except OSError as error:
            raise LabTlsError(f"P4Runtime TLS files in {self.dir}: {error}") from None
        return ServerTls(self.dir / f"{name}.pem", self.dir / f"{name}.key", self.ca_cert,
                         client_auth=True)

    def description(self) -> dict[str, str]:
        """The network description's top-level `tls` (docs/security.md): the CA the
        switches' certificates are checked against and the controller's client certificate,
        absolute paths."""
        return {"ca_cert": str(self.ca_cert.resolve()), "cert": str(self.client_cert.resolve()),
                "key": str(self.client_key.resolve())}

    def remove(self) -> None:
        """The directory and everything in it gone (the testbed stops)."""
        self._ca = None
        if self.dir.is_symlink():
            self.dir.unlink()
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
