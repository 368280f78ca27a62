"""Certificates for the TLS tests, made by `mpsched certs`'s functions: a lab CA with a
switch's server certificate and the controller's client certificate, and a second CA of the
same name standing for another lab (its certificates must be refused)."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

from mpsched.certs import CONTROLLER, issue, make_ca, san_names, write_pair


def make_lab(out: Path, switch: str = "s1") -> Path:
    """ca.pem/key, <switch>.pem/key, controller.pem/key, and other-ca.pem with
    other-<switch>.pem/key (another CA) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    ca = make_ca()
    write_pair(out, "ca", *ca)
    write_pair(out, switch, *issue(ca, switch, san_names(switch)))
    write_pair(out, CONTROLLER, *issue(ca, CONTROLLER, None))
    other = make_ca()
    write_pair(out, "other-ca", *other)
    write_pair(out, f"other-{switch}", *issue(other, switch, san_names(switch)))
    return out


class TlsEcho:
    """A TLS server on 127.0.0.1 (a thread): completes handshakes with `cert`/`key`,
    requires a client certificate signed by `client_ca` when given, answers b"ok" and keeps
    the connection open until the client closes it (as a gRPC server does)."""

    def __init__(self, cert: Path, key: Path, client_ca: Path | None = None) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        if client_ca is not None:
            self.context.load_verify_locations(client_ca)
            self.context.verify_mode = ssl.CERT_REQUIRED
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            with self.context.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"ok")
                while tls.recv(4096):
                    pass
        except (OSError, ssl.SSLError):
            conn.close()

    def close(self) -> None:
        self.sock.close()
