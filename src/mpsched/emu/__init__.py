"""Link emulation: delay, jitter, loss, rate and failures per link direction.

Two backends behind one interface (`link.EmulatedLink`): `linkem`, the
project's userspace delay line (csrc/linkem.c) that works on kernels without
netem, and the kernel's netem where it exists.
"""
