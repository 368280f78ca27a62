// MPTCP-aware mode at the ingress edge: subflow pins and handshake reports.
//
// The controller learns each MPTCP connection from the handshake options the
// parser extracts (parser.p4: MP_CAPABLE keys on SYN/ACK and the third ACK,
// MP_JOIN tokens on SYNs), reported as mptcp_capable_t / mptcp_join_t digests, and pins each
// subflow (its 5-tuple in the direction this switch sends it) to its own
// path. A pin overrides the class's placement (flowlet, hash, round robin,
// VQ) but not liveness: path_select.p4 still moves a pinned subflow off a
// dead path until the controller re-pins it. A FIN or RST of a pinned
// subflow is reported so the controller can unpin it; the pin's direct
// counter lets it find idle ones.
#ifndef __MPTCP__
#define __MPTCP__

#include "headers.p4"
#include "sizes.p4"

control Mptcp(inout headers_t hdr,
              inout local_metadata_t meta,
              inout standard_metadata_t std_meta) {

    // Packets and bytes of each pinned subflow (idle detection).
    direct_counter(CounterType.packets_and_bytes) subflow_pin_hits;

    action pin_subflow(path_id_t path_id) {
        meta.path_id = path_id;
        meta.subflow_pinned = true;
        subflow_pin_hits.count();
    }

    // Purpose: the path of each pinned MPTCP subflow, by its 5-tuple in the
    // direction this switch sends it (written by the controller).
    // Miss: NoAction, the class's placement chooses the path.
    table subflow_pin {
        key = {
            hdr.ipv4.src_addr: exact @name("src_addr");
            hdr.ipv4.dst_addr: exact @name("dst_addr");
            hdr.tcp.src_port:  exact @name("src_port");
            hdr.tcp.dst_port:  exact @name("dst_port");
        }
        actions = {
            pin_subflow;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = subflow_pin_hits;
        size = SUBFLOW_PIN_TABLE_SIZE;
    }

    // Only TCP packets from this switch's hosts bound for the paths come
    // here (ingress.p4).
    apply {
        if (subflow_pin.apply().hit) {
            if ((hdr.tcp.flags & (TCP_FLAG_FIN | TCP_FLAG_RST)) != 0) {
                digest<mptcp_close_t>(DIGEST_MPTCP_CLOSE, {
                    hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.tcp.src_port,
                    hdr.tcp.dst_port, hdr.tcp.flags });
            }
        }
        if (hdr.mptcp_key_a.isValid()) {
            digest<mptcp_capable_t>(DIGEST_MPTCP_CAPABLE, {
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.tcp.src_port, hdr.tcp.dst_port,
                hdr.tcp.flags, hdr.mptcp_key_a.key, hdr.mptcp_key_b.key });
        } else if (hdr.mptcp_join.isValid() && (hdr.tcp.flags & TCP_FLAG_ACK) == 0) {
            digest<mptcp_join_t>(DIGEST_MPTCP_JOIN, {
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.tcp.src_port, hdr.tcp.dst_port,
                hdr.mptcp_join.token, hdr.mptcp.byte3 });
        }
    }
}

#endif
