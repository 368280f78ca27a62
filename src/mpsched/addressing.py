"""The testbed's addressing plan: the one definition of its subnets, addresses and MACs.

Two edges, one behind each edge switch: edge 1 behind s1 (h1, the senders, cross-traffic
hosts x<i>), edge 2 behind s2 (h2, the receivers, y<i>). Edge n is the /24 ``10.0.n.0/24``:

- host address k of h<n> is ``10.0.n.k`` (k = 1 the primary one; more for MPTCP);
- the cross-traffic host of path i is ``10.0.n.(CROSS_HOST_BASE + i)``;
- the edge switch answers as gateway ``10.0.n.254`` with router MAC ``00:00:0a:00:0n:fe``;
- a MAC embeds edge and host: ``00:00:0a:00:<edge>:<host>`` (hex), so host k's primary
  interface has ``00:00:0a:00:0n:0k`` and h<n>'s extra interface j ``HOST_IF_MAC_BASE + j``.

src/mpsched/topo/testbed.py builds the Mininet testbed and its network description
(src/mpsched/netcfg.py)
from these; benchmarks, PTF tests and tests take their addresses from here. Network
descriptions and scenarios an operator writes (JSON, YAML) carry the literal addresses.
"""

from __future__ import annotations

import ipaddress

EDGES = (1, 2)  # 1: behind s1 (senders), 2: behind s2 (receivers)
SENDER_EDGE, RECEIVER_EDGE = EDGES
PREFIX_LEN = 24
GATEWAY_HOST = 254  # the edge switch's address and the low byte of its router MAC (0xfe)
CROSS_HOST_BASE = 10  # x<i> / y<i> carry host number CROSS_HOST_BASE + i
HOST_IF_MAC_BASE = 0x40  # h<n>-eth<j> (j >= 1) has MAC host byte HOST_IF_MAC_BASE + j

_NETWORK = ipaddress.IPv4Network("10.0.0.0/16")  # edge n is its n-th /24


def _check(edge: int, host: int) -> None:
    if not 0 <= edge <= 255:
        raise ValueError(f"edge {edge}: not in 0..255")
    if not 0 <= host <= 255:
        raise ValueError(f"host {host}: not in 0..255")


def host_ip(edge: int, n: int = 1) -> str:
    """Address n of edge ``edge``: ``host_ip(2, 1)`` is h2's primary address."""
    _check(edge, n)
    return str(_NETWORK.network_address + (edge << 8) + n)


FABRIC_HOST_SLOTS = 8  # a fabric edge's hosts 1..8 (mpsched.fabric.model.MAX_HOSTS)
FABRIC_HOST_ADDRESSES = 4  # addresses per fabric host at most (its MPTCP subflows)


def fabric_host_ip(edge: int, k: int, n: int = 1) -> str:
    """Address n (1..FABRIC_HOST_ADDRESSES) of host k behind fabric edge ``edge``: the
    primary ``10.0.e.k``, then ``10.0.e.(k + 8 (n - 1))``, above every host's primary one
    (so host 1's second address is ``10.0.e.9``)."""
    if not 1 <= k <= FABRIC_HOST_SLOTS or not 1 <= n <= FABRIC_HOST_ADDRESSES:
        raise ValueError(f"host {k} address {n}: not in 1..{FABRIC_HOST_SLOTS}, "
                         f"1..{FABRIC_HOST_ADDRESSES}")
    return host_ip(edge, k + FABRIC_HOST_SLOTS * (n - 1))


def host_prefix(edge: int, n: int = 1, length: int = 32) -> str:
    """``host_ip(edge, n)/length``, e.g. a /32 pin or a sub-prefix of the edge's subnet."""
    return str(ipaddress.IPv4Network(f"{host_ip(edge, n)}/{length}"))


def subnet(edge: int) -> str:
    """The edge's subnet, ``10.0.<edge>.0/24``."""
    return host_prefix(edge, 0, PREFIX_LEN)


def gateway_ip(edge: int) -> str:
    """The edge switch's address: the hosts' default route (answered by static ARP)."""
    return host_ip(edge, GATEWAY_HOST)


def cross_host_ip(edge: int, path: int) -> str:
    """Address of the cross-traffic host of path ``path`` on this edge (x<path> / y<path>)."""
    return host_ip(edge, CROSS_HOST_BASE + path)


def in_subnet(ip: str, edge: int) -> bool:
    """Whether the dotted-quad address ``ip`` lies in the edge's subnet (cheap: per packet)."""
    return ip.startswith(host_ip(edge, 0).removesuffix("0"))


def mac(edge: int, host: int) -> str:
    """The plan's MAC for host byte ``host`` on edge ``edge``: ``00:00:0a:00:<edge>:<host>``."""
    _check(edge, host)
    return f"00:00:0a:00:{edge:02x}:{host:02x}"


def host_mac(edge: int, n: int = 1) -> str:
    """MAC of the interface that carries address n (h<edge>'s primary one for n = 1)."""
    return mac(edge, n)


def cross_host_mac(edge: int, path: int) -> str:
    """MAC of the cross-traffic host of path ``path`` on this edge."""
    return mac(edge, CROSS_HOST_BASE + path)


def host_if_mac(edge: int, j: int) -> str:
    """MAC of h<edge>'s extra interface eth<j> (j >= 1) of a multi-homed host."""
    return mac(edge, HOST_IF_MAC_BASE + j)


def router_mac(edge: int) -> str:
    """The edge switch's router MAC (its entries in the network description, the hosts' ARP)."""
    return mac(edge, GATEWAY_HOST)


# The testbed's two primary hosts and its edge switches' router MACs, by the names the
# topology gives them (h1 behind s1, h2 behind s2).
H1_IP, H2_IP = host_ip(SENDER_EDGE), host_ip(RECEIVER_EDGE)
H1_MAC, H2_MAC = host_mac(SENDER_EDGE), host_mac(RECEIVER_EDGE)
S1_MAC, S2_MAC = router_mac(SENDER_EDGE), router_mac(RECEIVER_EDGE)


def transit_mac(index: int) -> str:
    """A fabric's transit switch number ``index`` (1..): edge byte 0, ``00:00:0a:00:00:<i>``."""
    return mac(0, index)
