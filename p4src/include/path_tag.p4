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

// Next sequence number of each path, by path id; starts at 0 when the
// pipeline is pushed, wraps at 2^32. At the top level because the probe gate
// (probe_gate.p4) reads it too.
register<path_seq_t, path_id_t>(PATH_REGISTER_SIZE) tx_seq;

control PathTagPush(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta) {

#ifndef NO_CONGESTION
    FeedbackPush() feedback;
#endif

    // The sequence number is read straight into the tag (a local would be
    // one more metadata field, reset for every packet).
    apply {
        hdr.path_tag.setValid();
        tx_seq.read(hdr.path_tag.seq, meta.path_id);
        tx_seq.write(meta.path_id, hdr.path_tag.seq + 1);
        hdr.path_tag.path_id = meta.path_id;
        hdr.path_tag.flags = 0;
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
        feedback.apply(hdr, std_meta.ingress_global_timestamp);
#endif
    }
}

#endif
