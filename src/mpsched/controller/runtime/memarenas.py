"""How many malloc arenas the controller's threads share (`--malloc-arenas`, default 2).

glibc's malloc gives a thread that finds the arenas in use an arena of its own, up to 8 per
core (mallopt(3), M_ARENA_MAX); each arena is a heap of its own that keeps the chunks freed
in it for later allocations in it and grows when none fits. The controller runs some fifty
threads (an agent and a prober per switch, gRPC's, the REST workers, the loop), which on the
fabric soak's 2-core machine spread over up to 16 arenas: with the memory in use flat, the free
space the arenas kept and the memory they took from the system grew with the churn of
allocations (docs/results/fabric-soak.md). With fewer arenas a chunk freed by one
thread serves the next allocation of another. The GIL serialises most of the threads, so the
arenas' locks are seldom contended.

`limit(n)` sets M_ARENA_MAX; it must run before the process starts its second thread (glibc
fixes the limit when it first needs an arena beyond the main one). `arena_count()` counts the
arenas malloc_info(3) reports. Elsewhere than glibc both do nothing (None).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import re

log = logging.getLogger(__name__)

MALLOC_ARENAS = 2  # the default of --malloc-arenas (module docstring); 0: glibc's default
M_ARENA_MAX = -8  # malloc.h


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt, libc.malloc_info, libc.open_memstream  # noqa: B018 (glibc's calls)
    except (OSError, AttributeError, TypeError):
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.open_memstream.restype = ctypes.c_void_p
    libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                    ctypes.POINTER(ctypes.c_size_t)]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


def limit(n: int) -> bool | None:
    """At most `n` malloc arenas from now on (`n` > 0; 0: leave glibc's default). True if
    set, False if refused, None without glibc or with `n` 0."""
    libc = _libc()
    if libc is None or n <= 0:
        return None
    ok = bool(libc.mallopt(M_ARENA_MAX, n))
    if not ok:
        log.warning("mallopt(M_ARENA_MAX, %d) refused", n)
    return ok


def malloc_info() -> str | None:
    """malloc_info(3)'s XML (every arena's heaps, sizes and free chunks), None without it."""
    libc = _libc()
    if libc is None:
        return None
    buf, size = ctypes.c_char_p(), ctypes.c_size_t()
    stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not stream:
        return None
    try:
        libc.malloc_info(0, stream)
    finally:
        libc.fclose(stream)
    text = ctypes.string_at(buf, size.value).decode()
    libc.free(ctypes.cast(buf, ctypes.c_void_p))
    return text


def arena_count(xml: str | None = None) -> int | None:
    """How many arenas malloc has (the `<heap nr=...>` elements of malloc_info)."""
    xml = malloc_info() if xml is None else xml
    return None if xml is None else len(re.findall(r"<heap nr=", xml))
