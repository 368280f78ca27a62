// Path tag push at the ingress edge: every packet path selection placed onto
// a path (weighted or pinned, with a next hop) leaves with a path tag
// carrying the path id, the path's next sequence number and the arrival time,
// and the congestion feedback of one path of the opposite direction
// (congestion.p4; 0 without NO_CONGESTION's stage).
#ifndef __PATH_TAG__
#define __PATH_TAG__

#include "headers.p4"
#include "sizes.p4"
#ifndef NO_CONGESTION
#include "congestion.p4"
#endif

// tx_seq: the next sequence number of each path to each destination edge, by
// EDGE_PATH(dst_edge, path_id) (sizes.p4: paths are numbered per pair of
// edges, so each pair counts its own); starts at 0
// when the pipeline is pushed, wraps at 2^32. PathTagPush owns it (the only
// writer); the probe gate (probe_gate.p4) reads it too, so it is declared in
// MpIngress (ingress.p4), the control over both, and lent to each. Built with
// the congestion stage, PathTagPush is lent the metrics its feedback sends
// as well (congestion.p4, "State").
control PathTagPush(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta)
                   (register<path_seq_t, edge_path_t> tx_seq
#ifndef NO_CONGESTION
                    , register<bit<32>, edge_path_t> cg_qdelay,
                    register<bit<32>, edge_path_t> cg_loss,
                    register<bit<32>, edge_path_t> cg_rate,
                    register<timestamp_t, edge_path_t> cg_updated,
                    register<path_id_t, edge_id_t> fb_span
#endif
                    ) {

#ifndef NO_CONGESTION
    FeedbackPush(cg_qdelay, cg_loss, cg_rate, cg_updated, fb_span) feedback;
#endif

    // The sequence number is read straight into the tag (a local would be
    // one more metadata field, reset for every packet).
    apply {
        hdr.path_tag.setValid();
        tx_seq.read(hdr.path_tag.seq, EDGE_PATH(meta.dst_edge, meta.path_id));
        tx_seq.write(EDGE_PATH(meta.dst_edge, meta.path_id), hdr.path_tag.seq + 1);
        hdr.path_tag.path_id = meta.path_id;
        hdr.path_tag.flags = 0;
        hdr.path_tag.src_edge = meta.my_edge;
        hdr.path_tag.dst_edge = meta.dst_edge;
        hdr.path_tag.tx_ts = std_meta.ingress_global_timestamp;
        hdr.path_tag.next_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_PATH_TAG;
#ifdef NO_CONGESTION
        hdr.path_tag.fb_path = 0;
        hdr.path_tag.fb_age = 0;
        hdr.path_tag.fb_qdelay = 0;
        hdr.path_tag.fb_loss = 0;
        hdr.path_tag.fb_rate = 0;
#else
        feedback.apply(hdr, std_meta.ingress_global_timestamp, meta.path_cell);
#endif
    }
}

#endif
