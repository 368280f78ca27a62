"""What a switch agent measures of its switch: its counter polls (drops by reason, the ports'
transmit rates, an edge's per-path counters) and its probes (the prober, and what it asks
the agent's host). `AgentTelemetry` is a part of `SwitchAgent` (southbound/agent.py), which
sets the switch, the network and the host it reads."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mpsched.controller.southbound.agent_model import AgentHost
from mpsched.controller.southbound.counters import (
    PATH_COUNTERS,
    path_poll_interval,
    path_samples,
)
from mpsched.controller.southbound.prober import Prober
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.controller.telemetry.ports import PortMeter, read_at
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_PORT_TX,
    COUNTER_PROBE_SKIPPED,
    COUNTER_RX,
    COUNTER_TX,
    Pipeline,
)

log = logging.getLogger(__name__)


class AgentTelemetry:
    """The agent's counter polls and probes."""

    sw: SwitchCfg
    net: NetCfg
    pipeline: Pipeline
    host: AgentHost
    telemetry: TelemetryConfig
    poll_interval: float
    probe_interval: float | None
    peers: list[int]
    path_ids: list[int]

    def _init_telemetry(self, counter_budget_cps: float | None) -> None:
        """Nothing measured yet; the per-path counters' interval under the budget."""
        # the per-path counters: only an edge has them in use (a transit switch reads none)
        self.path_poll_interval = path_poll_interval(
            self.poll_interval, len(self.net.edge_switches()),
            sum(self.pipeline.p4info.counter_size(c) for c in PATH_COUNTERS),
            counter_budget_cps)
        self._next_path_poll = 0.0  # time.monotonic() of the next read of them
        self.prober: Prober | None = None
        # packets the switch dropped, by reason (the drop_reason counter, read with the others)
        self.drops: dict[str, int] = {}
        self.probes_gated = 0  # probes the switch's probe gate dropped (probe_gate.p4)
        # each port's transmit rate between the latest two polls (port_counters.p4, GET /links)
        self.ports = PortMeter()

    def _poll(self, client: P4RuntimeClient) -> None:
        """The drops and port counters; an edge's per-path counters when they are due. One
        Read for all of them: a Read's own cost, paid per counter, made the polls two thirds
        of the agents' CPU at 64 leaves (docs/results/scale.md)."""
        names = [COUNTER_DROP_REASON, COUNTER_PORT_TX]
        paths_due = bool(self.peers) and time.monotonic() >= self._next_path_poll
        if paths_due:
            names += PATH_COUNTERS
            self._next_path_poll = time.monotonic() + self.path_poll_interval
        now, values = read_at(lambda: client.read_counters(names), time.time)
        drops = self.pipeline.drop_counts(values[COUNTER_DROP_REASON])
        self.drops = {reason: value.packets for reason, value in drops.items()}
        self.ports.update(now, values[COUNTER_PORT_TX])
        if not paths_due:
            return
        gated = values[COUNTER_PROBE_SKIPPED]
        self.probes_gated = sum(value.packets for value in gated.values())
        samples = path_samples(self.pipeline, self.peers, self.path_ids, values[COUNTER_TX],
                               values[COUNTER_RX], now)
        if samples:
            self.host.on_sample(self.sw.name, samples)

    def probe_counts(self) -> dict | None:
        """How this session's prober sends (its probe port or PacketOuts), the probes it sent
        and those it skipped (busy paths, an idle pair's between its slow probes), and of
        those sent, the ones the switch's probe gate dropped (as of the last poll); None
        while there is no prober."""
        prober = self.prober
        if prober is None:
            return None
        return {"via": prober.via, "sent": prober.sent, "skipped": prober.skipped,
                "gated": self.probes_gated}

    def _probe_wanted(self) -> Callable[[int, int], bool] | None:
        """Asks the host which probes go: busy paths' pause (probe_idle_only), an idle
        pair's slow probes (a fabric's regimes, src/mpsched/controller/telemetry/regimes.py); None:
        every probe goes."""
        regimes = self.telemetry.regimes(self.net.topology is not None)
        if not self.telemetry.probe_idle_only and not regimes:
            return None
        wanted, name = self.host.probe_wanted, self.sw.name
        return lambda dst_edge, path_id: wanted(name, dst_edge, path_id)

    def _probe_tick(self) -> Callable[[], float] | None:
        """Asks the host how long the prober waits between rounds: a fabric's switch whose
        pairs are all idle ticks at their idle interval (None: the probe interval always)."""
        if not self.telemetry.regimes(self.net.topology is not None):
            return None
        tick, name = self.host.probe_tick_s, self.sw.name
        return lambda: tick(name)

    def poke_prober(self) -> None:
        """A round of probes now (a pair of this switch became active), if probing."""
        prober = self.prober
        if prober is not None:
            prober.poke()

    def _probe_installed(self) -> Callable[[int, int], bool] | None:
        if self.net.topology is None:
            return None
        installed, name = self.host.probe_installed, self.sw.name
        return lambda dst_edge, path_id: installed(name, dst_edge, path_id)

    def probe_targets(self) -> list[tuple[int, int]]:
        """Every (destination edge, path id) this switch may probe: a fabric's edge every id
        the program has (`probe_installed` tells which are installed now: a watched path may
        take an id above the pair's, src/mpsched/controller/fabric/routes.py)."""
        if self.net.topology is not None and self.peers:
            return [(e, p) for e in self.peers for p in range(1, self.pipeline.max_paths + 1)]
        return [(e, p) for e in self.peers for p in self.path_ids]

    def _start_prober(self, client: P4RuntimeClient) -> Prober | None:
        """Probe every target over the session's `client`, if the switch probes (None: not)."""
        if self.probe_interval is None or not self.probe_targets():
            return None
        prober = Prober(
            client,
            self.pipeline,
            self.probe_targets(),
            self.probe_interval,
            iface=self.sw.probe_iface,
            wanted=self._probe_wanted(),
            installed=self._probe_installed(),
            tick=self._probe_tick(),
        )
        prober.start()
        self.prober = prober
        return prober

    def _stop_prober(self, prober: Prober) -> None:
        """The session ended: stop its prober and log what it sent."""
        prober.stop()
        log.info("%s: probes via %s: %d sent, %d skipped (busy paths, idle pairs)",
                 self.sw.name, prober.via, prober.sent, prober.skipped)
