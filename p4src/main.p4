// In-network multipath scheduler: v1model wiring only. Every stage lives in
// include/.
#include <core.p4>
// v1model with typed indices: registers and counters are indexed by path id
// or class id directly, with no cast (p4c turns each cast index into a
// temporary in metadata, which BMv2 resets on every packet).
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

#include "include/defines.p4"
#include "include/sizes.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/checksums.p4"
#include "include/ingress.p4"

V1Switch(
    MpParser(),
    MpVerifyChecksum(),
    MpIngress(),
    MpEgress(),
    MpComputeChecksum(),
    MpDeparser()
) main;
