"""The path tag (p4src/include/headers.p4, path_tag_t) as a scapy layer, and the
expected packets on path ports built with it.

Not a test module: forwarding.py, pinning.py and telemetry.py import it.
"""

from __future__ import annotations

from ptf.mask import Mask
from scapy.fields import BitField, XBitField
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG

ETHERTYPE_IPV4 = 0x0800
FEEDBACK_FIELDS = ("fb_path", "fb_age", "fb_qdelay", "fb_loss", "fb_rate")


class PathTag(Packet):
    """22 bytes between Ethernet and IPv4, pushed by the ingress edge switch; the fb_*
    fields carry the sender's congestion feedback (p4src/include/congestion.p4)."""

    name = "PathTag"
    fields_desc = [
        BitField("path_id", 0, 8),
        BitField("flags", 0, 8),
        BitField("seq", 0, 32),
        BitField("tx_ts", 0, 48),
        BitField("fb_path", 0, 8),
        BitField("fb_age", 0, 8),
        BitField("fb_qdelay", 0, 16),
        BitField("fb_loss", 0, 16),
        BitField("fb_rate", 0, 16),
        XBitField("next_type", ETHERTYPE_IPV4, 16),
    ]


bind_layers(Ether, PathTag, type=ETHERTYPE_PATH_TAG)
bind_layers(PathTag, IP, next_type=ETHERTYPE_IPV4)


def tag(pkt, path_id: int, seq: int = 0, tx_ts: int = 0, next_type: int = ETHERTYPE_IPV4):
    """pkt (Ether / IP ...) with a path tag inserted after the Ethernet header."""
    eth = pkt[Ether]
    return Ether(
        bytes(Ether(src=eth.src, dst=eth.dst, type=ETHERTYPE_PATH_TAG)
              / PathTag(path_id=path_id, seq=seq, tx_ts=tx_ts, next_type=next_type)
              / eth.payload)
    )


def tagged(pkt, path_id: int) -> Mask:
    """What the switch sends onto path path_id for pkt (already routed): pkt with a
    tag of that path id, flags 0 and next type IPv4; seq, tx_ts and the feedback fields
    are not compared."""
    mask = Mask(tag(pkt, path_id))
    for name in ("seq", "tx_ts", *FEEDBACK_FIELDS):
        mask.set_do_not_care_scapy(PathTag, name)
    return mask
