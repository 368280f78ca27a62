// Per-path congestion metrics, measured in the data plane and fed back to the
// other edge in the path tag, with no controller in the loop (CONGA's
// feedback, HULA's probes). ca_select.p4 chooses paths from them.
//
// Roles. Every edge switch is the egress edge of the traffic the other edge
// sends it, and the ingress edge of the traffic it sends back:
//   1. CongestionMeter (egress edge, path_monitor.p4): every tagged packet
//      arriving from path p (data or probe) updates p's metrics here:
//      - queueing delay: owd = rx_ts - tx_ts is the one-way delay plus the
//        two clocks' constant offset (path_tag_t.tx_ts); owd - min_owd, with
//        min_owd the lowest owd seen (renewed by any lower sample, restarted
//        from the current one after MIN_OWD_WINDOW_US), is queueing and
//        serialisation delay whatever the offset. EWMA with gain 1/8 per
//        packet, in µs.
//      - loss: the packets the tag's sequence number says were skipped
//        (path_monitor.p4's gap, at most LOSS_GAP_MAX per packet), as an
//        EWMA of lost packets per packet with gain 1/256 per packet, kept as
//        a fraction x 2^24 (the tag carries x 2^16).
//      - delivered rate: bytes of the last whole RATE_WINDOW_US window (0
//        when the path was idle for a whole window).
//      and the time of that update.
//   2. FeedbackPush (the same switch as ingress edge, path_tag.p4): every
//      tagged packet it sends onto any path (data or probe) carries the
//      metrics of one path of its destination edge's, rotating over 1..the
//      highest path id measured from that edge (fb_span; so a pair with k
//      paths, numbered 1..k, hears about each path every k tags, rather than
//      every MAX_PATHS), one rotation per path the tags ride on (per
//      (destination edge, path) cell, each starting at its own path id): the
//      news about every path travels on every path, so losing one path
//      silences none of the others' news, and paths probed at the same ticks
//      carry news about different paths (liveness.p4 relies on both; one
//      rotation per destination, with probes sent in a fixed order, locked
//      each path's news to one carrying path); a path whose metrics
//      are older than FB_MAX_AGE_US (no packet measured it for that long) or
//      never measured is skipped (fb_path 0). Probes of idle paths keep their
//      metrics fresh and carry feedback themselves, so a path without
//      reverse traffic is reported too.
//   3. FeedbackStore (the other edge, path_monitor.p4): a tagged packet from
//      any path with fb_path != 0 stores that path's metrics, with their
//      time of measurement on the local clock (arrival - fb_age): the
//      metrics ca_select reads are about one RTT old, and ca_select counts
//      them only while they are younger than the class's max_age_us.
#ifndef __CONGESTION__
#define __CONGESTION__

#include "headers.p4"
#include "sizes.p4"

// A gap of more sequence numbers counts as this many losses (a restarted
// ingress edge is handled by path_monitor.p4 before; this bounds the EWMA).
const bit<32> LOSS_GAP_MAX = 16;

// State. Each stage keeps its own registers; the metrics two stages share
// (path_monitor.p4 writes them, path_tag.p4 and ca_select.p4 read them) are
// declared in MpIngress (ingress.p4), the one control over both, and lent to
// each as constructor arguments:
//   cg_qdelay, cg_loss, cg_rate, cg_updated   the metrics of the paths as
//       measured here (egress edge), per (source edge, path) by EDGE_PATH
//       (sizes.p4): written by CongestionMeter,
//       read by FeedbackPush. Units: qdelay µs (EWMA), loss fraction x 2^24
//       (EWMA), rate bytes of the last window, updated µs (0: never).
//   ca_qdelay, ca_loss, ca_rate, ca_ts   the metrics fed back by the other
//       edges (ingress edge), per (destination edge, path) by EDGE_PATH, and when they were measured (µs,
//       this switch's clock; 0: never): written by FeedbackStore, read by
//       ca_select.p4. Units: qdelay µs, loss fraction x 65536, rate in
//       FB_RATE_UNIT_BYTES per RATE_WINDOW_US.
//   fb_span   per source edge, the highest path id measured from it (0:
//       none yet; it only grows, until the pipeline is pushed again):
//       written by PathMonitor (path_monitor.p4), read by FeedbackPush.

// CongestionMeter's locals (headers.p4, "Locals in headers").
header congestion_meter_vars_t {
    timestamp_t owd;
    timestamp_t min_owd;
    timestamp_t min_ts;
    timestamp_t diff;
    timestamp_t win_start;
    bit<32>     sample;
    bit<32>     qdelay;
    bit<32>     loss;
    bit<32>     win_bytes;
    bit<32>     rate;
}

// path_id: the cell of the tag's source edge and path id (EDGE_PATH,
// sizes.p4: path_monitor.p4's v.idx); tx_ts: the tag's; now: arrival time;
// gap: sequence numbers skipped just now (0 for an in-order packet); len:
// the frame's bytes.
control CongestionMeter(in edge_path_t path_id, in timestamp_t tx_ts, in timestamp_t now,
                        in bit<32> gap, in bit<32> len)
                       (register<bit<32>, edge_path_t> cg_qdelay,
                        register<bit<32>, edge_path_t> cg_loss,
                        register<bit<32>, edge_path_t> cg_rate,
                        register<timestamp_t, edge_path_t> cg_updated) {
    congestion_meter_vars_t v;

    // The meter's own state, by cell (EDGE_PATH): the minimum one-way delay and when
    // it was set, and the bytes of the current rate window and its start.
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) min_owd;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) min_ts;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) win_bytes;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) win_start;

    apply {
        v.setValid();
        // queueing delay
        v.owd = now - tx_ts;
        min_owd.read(v.min_owd, path_id);
        min_ts.read(v.min_ts, path_id);
        cg_qdelay.read(v.qdelay, path_id);
        v.diff = v.owd - v.min_owd;
        if (v.min_ts == 0 || v.diff[47:47] == 1 || now - v.min_ts > MIN_OWD_WINDOW_US) {
            min_owd.write(path_id, v.owd);
            min_ts.write(path_id, now);
            v.diff = 0;
        }
        v.sample = (v.diff[47:32] != 0) ? 32w0xFFFFFFFF : v.diff[31:0];
        v.qdelay = v.qdelay - (v.qdelay >> 3) + (v.sample >> 3);
        cg_qdelay.write(path_id, v.qdelay);
        // loss
        cg_loss.read(v.loss, path_id);
        v.sample = (gap > LOSS_GAP_MAX) ? LOSS_GAP_MAX : gap;
        v.loss = v.loss - (v.loss >> 8) + (v.sample << 16);
        cg_loss.write(path_id, v.loss);
        // delivered rate
        win_start.read(v.win_start, path_id);
        win_bytes.read(v.win_bytes, path_id);
        if (now - v.win_start >= RATE_WINDOW_US) {
            v.rate = (now - v.win_start < 2 * RATE_WINDOW_US) ? v.win_bytes : 32w0;
            cg_rate.write(path_id, v.rate);
            win_start.write(path_id, now);
            v.win_bytes = 0;
        }
        win_bytes.write(path_id, v.win_bytes + len);
        cg_updated.write(path_id, now);
    }
}

// FeedbackPush's locals (headers.p4, "Locals in headers").
header feedback_push_vars_t {
    timestamp_t updated;
    timestamp_t age;
    bit<32>     qdelay;
    bit<32>     loss;
    bit<32>     rate;
    path_id_t   path;
    path_id_t   span;   // fb_span[dst_edge]
    edge_path_t cell;   // EDGE_PATH(dst_edge, path)
}

// Fills the feedback fields of the tag being pushed (valid, fb_* unset);
// carrier: its (destination edge, path) cell (meta.path_cell).
control FeedbackPush(inout headers_t hdr, in timestamp_t now, in edge_path_t carrier)
                    (register<bit<32>, edge_path_t> cg_qdelay,
                     register<bit<32>, edge_path_t> cg_loss,
                     register<bit<32>, edge_path_t> cg_rate,
                     register<timestamp_t, edge_path_t> cg_updated,
                     register<path_id_t, edge_id_t> fb_span) {
    feedback_push_vars_t v;

    // The path whose metrics left last in a tag, per (destination edge, path
    // the tag rides on), by EDGE_PATH (0: none yet): each peer gets the
    // metrics of its own paths to here.
    register<path_id_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) next_path;

    apply {
        v.setValid();
        next_path.read(v.path, carrier);
        fb_span.read(v.span, hdr.path_tag.dst_edge);
        if (v.path == 0) {
            // the carrier's first tag: its rotation starts at its own path id
            v.path = hdr.path_tag.path_id - 1;
        }
        v.path = (v.path >= v.span) ? 8w1 : v.path + 1;
        next_path.write(carrier, v.path);
        v.cell = EDGE_PATH(hdr.path_tag.dst_edge, v.path);
        cg_updated.read(v.updated, v.cell);
        v.age = now - v.updated;
        hdr.path_tag.fb_path = 0;
        hdr.path_tag.fb_age = 0;
        hdr.path_tag.fb_qdelay = 0;
        hdr.path_tag.fb_loss = 0;
        hdr.path_tag.fb_rate = 0;
        if (v.updated != 0 && v.age <= FB_MAX_AGE_US) {
            cg_qdelay.read(v.qdelay, v.cell);
            cg_loss.read(v.loss, v.cell);
            cg_rate.read(v.rate, v.cell);
            v.qdelay = v.qdelay >> FB_QDELAY_UNIT_SHIFT;
            v.loss = v.loss >> 8;
            v.rate = v.rate >> FB_RATE_UNIT_SHIFT;
            hdr.path_tag.fb_path = v.path;
            hdr.path_tag.fb_age = (bit<8>)(v.age >> FB_AGE_UNIT_SHIFT);
            hdr.path_tag.fb_qdelay = (v.qdelay > 0xFFFF) ? 16w0xFFFF : v.qdelay[15:0];
            hdr.path_tag.fb_loss = (v.loss > 0xFFFF) ? 16w0xFFFF : v.loss[15:0];
            hdr.path_tag.fb_rate = (v.rate > 0xFFFF) ? 16w0xFFFF : v.rate[15:0];
        }
    }
}

// Stores the feedback of a tag that arrived from a path (fb_path checked by
// the caller: 1..MAX_PATHS).
control FeedbackStore(in headers_t hdr, in timestamp_t now)
                     (register<bit<32>, edge_path_t> ca_qdelay,
                      register<bit<16>, edge_path_t> ca_loss,
                      register<bit<16>, edge_path_t> ca_rate,
                      register<timestamp_t, edge_path_t> ca_ts) {
    // The feedback is about path fb_path from here to the tag's source edge:
    // its cell is EDGE_PATH(src_edge, fb_path), where path_select.p4 reads the
    // paths towards that edge.
    apply {
        ca_qdelay.write(EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.fb_path),
                        (bit<32>)hdr.path_tag.fb_qdelay << FB_QDELAY_UNIT_SHIFT);
        ca_loss.write(EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.fb_path), hdr.path_tag.fb_loss);
        ca_rate.write(EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.fb_path), hdr.path_tag.fb_rate);
        // when it was measured; | 1: 0 means "never measured"
        ca_ts.write(EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.fb_path),
                    (now - ((timestamp_t)hdr.path_tag.fb_age << FB_AGE_UNIT_SHIFT)) | 1);
    }
}

#endif
