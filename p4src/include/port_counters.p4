// Per-port transmit counters of the egress pipeline: every packet leaving
// the switch counts on its egress port, packets and bytes. The controller
// reads them with its counter poll and turns a fabric link's two ends into
// the link's rate per direction (GET /links, docs/fabric.md "The
// controller"): a link a-b's forward direction is a's port towards b.
#ifndef __PORT_COUNTERS__
#define __PORT_COUNTERS__

#include "headers.p4"
#include "sizes.p4"

control PortCounters(inout standard_metadata_t std_meta) {

    // Per egress port, by its number; ports from PORT_COUNTER_SIZE up (the
    // CPU and probe ports, defines.p4) are not counted.
    counter<port_t>(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;

    apply {
        if (std_meta.egress_port < PORT_COUNTER_SIZE) {
            port_tx.count(std_meta.egress_port);
        }
    }
}

#endif
