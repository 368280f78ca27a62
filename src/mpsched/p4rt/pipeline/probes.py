"""Probe frames: a probe onto a path as PacketOut payload and metadata, or as a frame for
the switch's probe port."""

from __future__ import annotations

from mpsched.p4rt.p4info import P4InfoError
from mpsched.p4rt.pipeline.binding import PipelineBinding
from mpsched.p4rt.pipeline.names import (
    PACKET_OUT,
    PACKET_OUT_EDGE,
    PACKET_OUT_PATH,
    PORT_PROBE,
    PROBE_FRAME,
)


class ProbeFrames(PipelineBinding):
    """Probes of the bound program."""

    @property
    def probe_port(self) -> int | None:
        """The port for frames laid out like a PacketOut (None: the program has none)."""
        return self.ports.get(PORT_PROBE)

    def probe_frame(self, path_id: int, dst_edge: int) -> bytes:
        """A probe onto path path_id towards edge dst_edge as a frame for the probe port: the
        packet_out header (its fields packed in P4Info order, as BMv2 prepends a PacketOut's
        metadata), then the probe."""
        payload, metadata = self.probe(path_id, dst_edge)
        value, bits = 0, 0
        for f in self._packet_out_fields:
            value = (value << f.bitwidth) | (metadata.get(f.name, 0) & ((1 << f.bitwidth) - 1))
            bits += f.bitwidth
        if bits % 8:
            raise P4InfoError(f"controller header {PACKET_OUT} is {bits} bits, not whole bytes")
        return value.to_bytes(bits // 8, "big") + payload

    def probe(self, path_id: int, dst_edge: int) -> tuple[bytes, dict[str, int]]:
        """Payload and packet_out metadata of a probe onto path path_id towards edge
        dst_edge, for P4RuntimeClient.packet_out(*pipeline.probe(path_id, dst_edge))."""
        return PROBE_FRAME, {
            PACKET_OUT_PATH: self._path(path_id),
            PACKET_OUT_EDGE: self._edge(dst_edge),
        }
