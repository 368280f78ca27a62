"""The uprobes of `make bench-dpcost`: per-packet events of the `simple_switch_grpc` binary
(field writes, table applies, conditions, received packets) placed with `perf probe` at the
functions' addresses in its symbol table or its shared libraries' (`nm`, `ldd`), counted with
`perf stat` while a rig holds a load, and removed again (see dpcost.py's docstring)."""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import time

from mpsched.bench.dataplane_rig import Rig

log = logging.getLogger(__name__)

# uprobe group of this benchmark (perf probe GROUP:EVENT)
GROUP = "mpsched_dpcost"
# event name -> the demangled symbol it counts
PROBES = {
    "rx": "SimpleSwitch::receive_(unsigned int, char const*, int)",
    "field_writes": "bm::Field::export_bytes()",
    "table_applies": "bm::MatchTableAbstract::apply_action(bm::Packet*)",
    "conditions": "bm::Conditional::operator()(bm::Packet*) const",
}



def defined_symbols(obj: str, symbols: set[str], dynamic: bool) -> dict[str, int]:
    """Address of each of `symbols` (demangled) that `obj` defines as a function, from its
    symbol table or, with `dynamic`, its dynamic symbols; empty for a stripped object."""
    cmd = ["nm", "-C", "--defined-only"] + (["-D"] if dynamic else []) + [obj]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout  # "no symbols": rc 1
    found: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[2] in symbols and parts[1] in "TtWwi":
            found.setdefault(parts[2], int(parts[0], 16))
    return found


def shared_libraries(binary: str) -> list[str]:
    """The shared libraries `binary` loads, resolved by the dynamic linker (`ldd`)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return re.findall(r"=>\s+(/\S+)\s+\(0x", out)


def symbol_locations(binary: str, symbols: list[str]) -> dict[str, tuple[str, int]]:
    """(object, address) of each demangled function symbol: the executable first (symbol
    table, then dynamic symbols), then the shared libraries it loads; absent if found
    nowhere."""
    found: dict[str, tuple[str, int]] = {}
    places = [(binary, False), (binary, True)] + [(lib, True) for lib in shared_libraries(binary)]
    for obj, dynamic in places:
        wanted = set(symbols) - set(found)
        if not wanted:
            break
        for symbol, address in defined_symbols(obj, wanted, dynamic).items():
            found[symbol] = (obj, address)
    return found


def parse_perf_stat(text: str) -> dict[str, int]:
    """Counts by event name from `perf stat -x,` output (its stderr); uncounted events are
    left out."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or ":" not in fields[2]:
            continue
        try:
            counts[fields[2].split(":", 1)[1]] = int(fields[0])
        except ValueError:
            continue
    return counts


def per_packet(counts: dict[str, int], event: str) -> float | None:
    rx = counts.get("rx", 0)
    return counts[event] / rx if rx > 0 and event in counts else None


class Probes:
    """The uprobes of PROBES on `binary` and the libraries it loads, removed on exit.

    `events` are the events placed; `not_counted` says for every other one why."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.events: list[str] = []
        self.not_counted: dict[str, str] = {}

    def __enter__(self) -> Probes:
        self.remove()  # left over by a run that was killed
        try:
            self._place()
        except BaseException:
            self.remove()
            raise
        return self

    def _place(self) -> None:
        where = symbol_locations(self.binary, list(PROBES.values()))
        for event, symbol in PROBES.items():
            if symbol not in where:
                self.not_counted[event] = (
                    f"symbol {symbol!r} is in neither {self.binary} nor the shared libraries"
                    " it loads (a BMv2 build without it)"
                )
                continue
            obj, address = where[symbol]
            log.info("%s: %s at 0x%x in %s", event, symbol, address, obj)
            subprocess.run(
                ["perf", "probe", "-q", "-x", obj, "-a", f"{GROUP}:{event}=0x{address:x}"],
                check=True,
                capture_output=True,
            )
            self.events.append(event)
        if "rx" in self.not_counted:  # nothing to divide by: no per-packet count at all
            for event in self.events:
                self.not_counted[event] = "received packets not counted (rx)"

    def __exit__(self, *exc: object) -> None:
        self.remove()

    @staticmethod
    def remove() -> None:
        subprocess.run(["perf", "probe", "-q", "-d", f"{GROUP}:*"], capture_output=True)


def count(rig: Rig, rate: float, events: list[str]) -> dict[str, int]:
    """Hold `rate` with the switch's probes counted (nothing to count: no figures)."""
    if not events:
        return {}
    perf = subprocess.Popen(
        [
            "perf",
            "stat",
            "-x,",
            "-e",
            ",".join(f"{GROUP}:{e}" for e in events),
            "-p",
            str(rig.sw.process.pid),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    rig.registry.add_process(perf.pid, " ".join(perf.args))
    try:
        time.sleep(0.2)
        rig.trial(rate)
        perf.send_signal(signal.SIGINT)
        _, err = perf.communicate(timeout=10)
    finally:
        if perf.poll() is None:
            perf.kill()
            perf.wait()
        rig.registry.forget_process(perf.pid)
    return parse_perf_stat(err)
