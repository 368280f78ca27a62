// Probe gate at the ingress edge: a probe from the switch agent (a P4Runtime
// PacketOut or a frame from the probe port, carrying the packet_out header)
// keeps an idle path measured and alive at the far edge (liveness.p4). A path
// that carries this switch's own tagged traffic needs none: the far edge
// measures it with that traffic. So a probe onto path p goes only when the
// switch tagged nothing onto p since its previous probe onto p; otherwise it
// is dropped here and counted in probe_skipped (before path selection: it
// uses no sequence number, is not counted in path_tx, and costs neither the
// rest of this pipeline nor the far edge anything).
//
// With the agent's probe interval I, the far edge then sees a tagged packet
// from a working path at least every 2 I: the last data packet may follow a
// probe tick at once, the next tick is skipped, the one after goes. Liveness
// still sees every probe, sent or skipped (liveness.p4 runs first: a skipped
// probe arms a path's timer like a sent one).
//
// Sequence numbers (path_tag.p4), the gate's state and the counter
// probe_skipped are per (destination edge, path).
// "Tagged since the previous probe" compares the path's next sequence number
// tx_seq[p] (path_tag.p4) with what the previous probe left in probe_seq[p]:
// tx_seq after it (its own number + 1) when it went, tx_seq when it was
// skipped. A probe sent but then not placed on the path (no next hop) leaves
// probe_seq one ahead of tx_seq: the difference, taken as a signed number,
// is then negative and the next probe goes.
#ifndef __PROBE_GATE__
#define __PROBE_GATE__

#include "headers.p4"
#include "sizes.p4"
#include "path_tag.p4"

// tx_seq is PathTagPush's, lent to the gate read-only (path_tag.p4).
control ProbeGate(inout headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t std_meta)
                 (register<path_seq_t, edge_path_t> tx_seq) {

    // Per (destination edge, path), by EDGE_PATH(dst_edge, path_id): tx_seq
    // as the previous probe onto it left it.
    register<path_seq_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) probe_seq;
    // Per (destination edge, path), by EDGE_PATH(dst_edge, path_id): probes
    // dropped because the path carried this switch's traffic since the
    // previous probe (read by the controller).
    counter<edge_path_t>(EDGE_PATH_REGISTER_SIZE, CounterType.packets) probe_skipped;

    apply {
        // Paths and edges beyond the registers go on to path selection,
        // which drops them (no next hop); path and edge 0 likewise.
        if (hdr.packet_out.path_id != 0 && hdr.packet_out.path_id <= MAX_PATHS &&
                hdr.packet_out.dst_edge != 0 && hdr.packet_out.dst_edge <= MAX_EDGES) {
            path_seq_t next;
            path_seq_t left;
            tx_seq.read(next, EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id));
            probe_seq.read(left, EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id));
            path_seq_t since = next - left;
            if ((int<32>)since > 0) {
                probe_seq.write(EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id), next);
                probe_skipped.count(EDGE_PATH(hdr.packet_out.dst_edge,
                                              hdr.packet_out.path_id));
                mark_to_drop(std_meta);
                exit;
            }
            probe_seq.write(EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id), next + 1);
        }
        // Onto its path like a pinned packet, tagged with PATH_FLAG_PROBE.
        meta.to_paths = true;
        meta.pinned = true;
        meta.path_id = hdr.packet_out.path_id;
        meta.dst_edge = hdr.packet_out.dst_edge;
    }
}

#endif
