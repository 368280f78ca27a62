"""The controller's security options: TLS to the switches, TLS for REST, and the refusal to
serve REST off loopback unprotected (docs/security.md).

- ``--tls-ca/--tls-cert/--tls-key`` give the TLS settings of every switch the network
  description gives none for (the description's ``tls`` is the main way).
- ``--rest-cert/--rest-key`` serve the REST API over HTTPS.
- A ``--rest-host`` other than a loopback address needs HTTPS (every write needs the bearer
  token anyway): without it the controller refuses to start (exit status 2), unless told
  ``--insecure``.
- ``--rest-host-name`` (repeated) adds the names clients may reach REST by, besides its
  addresses and localhost (the Host check against DNS rebinding, northbound/guard.py).
- ``--read-token`` makes every read need a token too: the write token, or the read-only token
  of ``--read-token-file`` (northbound/auth.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import socket
import ssl

from mpsched.controller.northbound.server import RestTls
from mpsched.netcfg import ConfigError, NetCfg, TlsCfg
from mpsched.validation import validate


class ExposureError(ValueError):
    """REST would be served off loopback without TLS."""


def add_security_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("security (docs/security.md)")
    group.add_argument("--tls-ca", metavar="FILE",
                       help="CA certificate the switches' certificates must be signed by: "
                       "P4Runtime over TLS to every switch the network description gives no "
                       "tls for")
    group.add_argument("--tls-cert", metavar="FILE",
                       help="the controller's client certificate for those switches (with "
                       "--tls-key; needed by switches that authenticate clients)")
    group.add_argument("--tls-key", metavar="FILE", help="its private key")
    group.add_argument("--rest-cert", metavar="FILE",
                       help="serve REST over HTTPS with this certificate (PEM, with --rest-key)")
    group.add_argument("--rest-key", metavar="FILE", help="the REST certificate's private key")
    group.add_argument("--insecure", action="store_true",
                       help="allow --rest-host off loopback without --rest-cert/--rest-key "
                       "(plain HTTP to that network: the token travels in clear)")
    group.add_argument("--rest-host-name", metavar="NAME", action="append", default=[],
                       help="a name clients reach REST by (repeat for several): requests "
                       "whose Host is not an IP address, localhost, --rest-host or such a "
                       "name are refused (421), against DNS rebinding")
    group.add_argument("--read-token", action="store_true",
                       help="reads need a token too (every GET but the dashboard's files): "
                       "the write token, or the read-only token of --read-token-file")
    group.add_argument("--read-token-file", metavar="FILE",
                       help="the read-only token: read from this file, or created there "
                       "(mode 0600); implies --read-token (default: $MPSCHED_RUN_DIR or "
                       "/run/mpsched, file read-token-<rest port>)")


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name) is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def check_rest_exposure(args: argparse.Namespace) -> None:
    """ExposureError naming the flags when REST would listen off loopback unprotected; the
    REST certificate and key go together."""
    if (args.rest_cert is None) != (args.rest_key is None):
        raise ExposureError("--rest-cert and --rest-key go together: give both or neither")
    if args.rest_cert is not None or args.insecure or is_loopback(args.rest_host):
        return
    raise ExposureError(
        f"--rest-host {args.rest_host} is not a loopback address: serve REST over HTTPS "
        "(--rest-cert and --rest-key; writes need the token of --token-file), or accept "
        "plain HTTP with --insecure"
    )


def rest_tls(args: argparse.Namespace) -> RestTls | None:
    """The REST server's certificate (None: plain HTTP), loaded once to check it;
    ExposureError naming the flags for files it cannot use."""
    if args.rest_cert is None:
        return None
    tls = RestTls(args.rest_cert, args.rest_key)
    try:
        tls.context()
    except (OSError, ssl.SSLError) as error:
        raise ExposureError(f"--rest-cert/--rest-key: {error}") from None
    return tls


def with_tls_default(net: NetCfg, args: argparse.Namespace) -> NetCfg:
    """`net` with the command line's TLS settings as its default, where it has none;
    ConfigError naming the flag for a missing file."""
    if args.tls_ca is None:
        if args.tls_cert or args.tls_key:
            raise ConfigError("", "--tls-cert/--tls-key need --tls-ca", "command line")
        return net
    if net.tls is not None:
        return net  # the description's own default wins
    data = {"ca_cert": args.tls_ca, "cert": args.tls_cert, "key": args.tls_key}
    try:
        tls = validate(TlsCfg, data, error=ConfigError, source="command line")
    except ConfigError as error:
        flag = {"ca_cert": "--tls-ca", "cert": "--tls-cert", "key": "--tls-key"}
        raise ConfigError(flag.get(error.field, error.field), error.message, error.source
                          ) from None
    return dataclasses.replace(net, tls=tls)
