"""The path tag (p4src/include/headers.p4, path_tag_t) as a scapy layer, and the
expected packets on path ports built with it.

Not a test module: forwarding.py, pinning.py and telemetry.py import it.
"""

from __future__ import annotations

from base import MY_EDGE, PEER_EDGE
from ptf.mask import Mask
from scapy.fields import BitField, XBitField
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG

ETHERTYPE_IPV4 = 0x0800
FEEDBACK_FIELDS = ("fb_path", "fb_age", "fb_qdelay", "fb_loss", "fb_rate")


# Field defaults: a tag arriving at the switch under test from the far edge (base.py), IPv4
# after it; every other field 0.
DEFAULTS = {"src_edge": PEER_EDGE, "dst_edge": MY_EDGE, "next_type": ETHERTYPE_IPV4}


class PathTag(Packet):
    """The path tag pushed by the ingress edge switch between Ethernet and IPv4, its fields
    (names, widths, order) those of the compiled program (build/p4's BMv2 JSON,
    src/mpsched/p4rt/bmv2json.py); the fb_* fields carry the sender's congestion feedback
    (p4src/include/congestion.p4). The edges default to a tag arriving at the switch under
    test from the far edge (base.py)."""

    name = "PathTag"
    fields_desc = [
        (XBitField if name == "next_type" else BitField)(name, DEFAULTS.get(name, 0), bits)
        for name, bits in path_tag().fields
    ]


def out_tag(**fields) -> PathTag:
    """A tag as the switch under test pushes it: from its edge to the far edge."""
    return PathTag(**{"src_edge": MY_EDGE, "dst_edge": PEER_EDGE, **fields})


bind_layers(Ether, PathTag, type=ETHERTYPE_PATH_TAG)
bind_layers(PathTag, IP, next_type=ETHERTYPE_IPV4)


def tag(pkt, path_id: int, seq: int = 0, tx_ts: int = 0, next_type: int = ETHERTYPE_IPV4,
        src_edge: int = PEER_EDGE, dst_edge: int = MY_EDGE):
    """pkt (Ether / IP ...) with a path tag inserted after the Ethernet header (by default
    as the far edge sends it to the switch under test)."""
    eth = pkt[Ether]
    return Ether(
        bytes(Ether(src=eth.src, dst=eth.dst, type=ETHERTYPE_PATH_TAG)
              / PathTag(path_id=path_id, seq=seq, tx_ts=tx_ts, next_type=next_type,
                        src_edge=src_edge, dst_edge=dst_edge)
              / eth.payload)
    )


def tagged(pkt, path_id: int, dst_edge: int = PEER_EDGE) -> Mask:
    """What the switch sends onto path path_id towards edge dst_edge for pkt (already
    routed): pkt with a tag of that path id, from this switch's edge, flags 0 and next type
    IPv4; seq, tx_ts and the feedback fields are not compared."""
    mask = Mask(tag(pkt, path_id, src_edge=MY_EDGE, dst_edge=dst_edge))
    for name in ("seq", "tx_ts", *FEEDBACK_FIELDS):
        mask.set_do_not_care_scapy(PathTag, name)
    return mask
