"""`mpsched run --program plain-ecmp`: a fabric's runs on the plain ECMP program instead of
the scheduler's (docs/fabric-lab.md, "A plain-forwarding reference").

Every switch of the fabric testbed gets p4src/bench/plain_ecmp.p4 and its entries
(src/mpsched/fabric/ecmp.py) over P4Runtime once, when the testbed is up; no controller runs,
the workloads, link schedules, CPU sampling and analysis are the run's as ever, and the run's
policy (its column in the tables, its directory) is `plain-ecmp`. At the end each switch's
drop counter by reason goes into `drops.json` in the run's directory.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from mpsched.fabric.ecmp import fabric_entries
from mpsched.fabric.netdesc import describe
from mpsched.lab.programs import PLAIN_ECMP
from mpsched.lab.scenario import Scenario
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.plain_ecmp import COUNTER_DROP_REASON, PlainEcmpPipeline
from mpsched.proc.layout import P4Artifacts, plain_ecmp_artifacts
from mpsched.validation import InputError

log = logging.getLogger(__name__)

# a plain ECMP switch answers its few writes at once; a busy machine may still be slow
TIMEOUT_S = 30.0


class PlainEcmpError(RuntimeError):
    """A switch could not be programmed (a run of the plain program fails with it)."""


def program_problems(program: str, scenarios: Sequence[Scenario], policies: Sequence[str]
                     ) -> list[str]:
    """Why `program` cannot run these scenarios with these --policy values:
    one line each, [] when it can. The plain program takes no policy and runs fabrics only;
    its entries must fit its tables (checked on each fabric's description before any
    testbed starts)."""
    if program != PLAIN_ECMP:
        return []
    problems = []
    if policies:
        problems.append(f"--policy: --program {PLAIN_ECMP} runs no scheduler, so no policy "
                        f"(its runs' policy is {PLAIN_ECMP})")
    pipeline = None
    art = plain_ecmp_artifacts()
    if not art.missing():
        pipeline = PlainEcmpPipeline(P4Info.from_file(art.p4info))
    for sc in scenarios:
        fabric, section = sc.fabric, sc.fabric_section
        if fabric is None or section is None:
            problems.append(f"{sc.name}: --program {PLAIN_ECMP} needs a fabric "
                            "scenario (`fabric:`); two edges joined by `paths` pin cross "
                            "traffic to paths and are measured by the controller")
        elif pipeline is not None:
            try:
                fabric_entries(pipeline, describe(section, fabric, lambda _i: "127.0.0.1:1"))
            except InputError as error:
                problems.append(f"{sc.name}: {error}")
    return problems


class PlainEcmpSwitches:
    """The plain program on every switch of the network description `net`, each answering
    within `timeout_s`."""

    def __init__(self, net: NetCfg, art: P4Artifacts | None = None,
                 timeout_s: float = TIMEOUT_S) -> None:
        self.net = net
        self.timeout_s = timeout_s
        self.art = art or plain_ecmp_artifacts()
        self.p4info = P4Info.from_file(self.art.p4info)
        self.pipeline = PlainEcmpPipeline(self.p4info)

    def _client(self, name: str) -> P4RuntimeClient:
        sw = self.net.switch(name)
        return P4RuntimeClient(sw.grpc_address, sw.device_id, self.p4info,
                               timeout=self.timeout_s, tls=self.net.tls_for(sw))

    def program(self) -> None:
        """Push the program and write its entries to every switch (BMv2 keeps both once
        the session ends). PlainEcmpError names the switch that failed."""
        try:
            entries = fabric_entries(self.pipeline, self.net)
        except InputError as error:
            raise PlainEcmpError(f"plain ECMP entries: {error}") from None
        for name, mine in entries.items():
            client = self._client(name)
            try:
                client.connect()
                client.set_pipeline(str(self.art.bmv2_json))
                client.insert(*mine)
            except RuntimeError as error:
                raise PlainEcmpError(f"{name}: {error}") from None
            finally:
                client.close()
            log.debug("%s: plain ECMP program, %d entries", name, len(mine))

    def drops(self) -> dict[str, dict[str, int]]:
        """{switch: {drop reason: packets}} read from every switch (a switch that does not
        answer is left out, and logged)."""
        out = {}
        for sw in self.net.switches:
            client = self._client(sw.name)
            try:
                client.connect(primary=False)
                out[sw.name] = self.pipeline.drop_counts(client.read_counter(COUNTER_DROP_REASON))
            except RuntimeError as error:
                log.warning("%s: drop counters: %s", sw.name, error)
            finally:
                client.close()
        return out

    def save_drops(self, path: Path) -> None:
        path.write_text(json.dumps(self.drops(), indent=1, sort_keys=True) + "\n")
