"""The controller process's runtime tuning and diagnostics (CPython and glibc): the memory
trace (`memtrace`, `memmaps`, `memobjects`), malloc trimming and arenas (`memtrim`,
`memarenas`), the garbage collector's freeze (`gcfreeze`), the CPU governor (`governor`),
the step-first lock (`steplock`) and timing samples (`samples`). Imports nothing of the
controller but the model."""
