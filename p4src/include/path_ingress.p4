// Arrivals from the paths at the egress edge: which path a packet came in on.
#ifndef __PATH_INGRESS__
#define __PATH_INGRESS__

#include "headers.p4"
#include "sizes.p4"

control PathIngress(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta) {

    // Packets (and bytes) received from each path, by path id.
    counter<path_id_t>(PATH_COUNTER_SIZE, CounterType.packets_and_bytes) path_rx;

    action mark_from_path(path_id_t path_id) {
        meta.from_path = path_id;
    }

    // Purpose: map the ports that face the paths to their path ids.
    // Miss: the port faces a host; nothing to do.
    table path_ingress {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
        }
        actions = {
            mark_from_path;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PATH_INGRESS_TABLE_SIZE;
    }

    apply {
        path_ingress.apply();
        if (meta.from_path != 0 && meta.from_path <= MAX_PATHS) {
            path_rx.count(meta.from_path);
        }
    }
}

#endif
