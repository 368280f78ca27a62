"""A Mininet switch that runs BMv2 simple_switch_grpc (programmed over P4Runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mininet.node import Switch

from mpsched.p4rt.pipeline import program_cpu_port
from mpsched.proc.bmv2 import Bmv2Switch, ServerTls
from mpsched.proc.cleanup import Registry
from mpsched.proc.layout import p4_artifacts
from mpsched.proc.veth import make_veth


class Bmv2MininetSwitch(Switch):
    """BMv2 in the root namespace; port numbers are Mininet's interface numbers."""

    def __init__(
        self,
        name: str,
        device_id: int,
        registry: Registry,
        log_dir: Path,
        probe_port: int | None = None,
        tls: ServerTls | None = None,
        **params: Any,
    ) -> None:
        params["inNamespace"] = False
        super().__init__(name, **params)
        self.device_id = device_id
        self.registry = registry
        self.log_dir = log_dir
        self.bmv2: Bmv2Switch | None = None
        # the program's probe port (Pipeline.probe_port): a veth to the controller, whose
        # end is probe_iface once started (None: the controller probes with PacketOuts)
        self.probe_port = probe_port
        self.probe_iface: str | None = None
        self.tls = tls  # P4Runtime over TLS (docs/security.md); None: plaintext

    def ports_by_number(self) -> dict[int, str]:
        return {n: intf.name for intf, n in self.ports.items() if intf.name != "lo"}

    def start(self, controllers: list) -> None:
        ports = self.ports_by_number()
        if self.probe_port is not None:
            switch_end, self.probe_iface = make_veth(
                self.registry, f"{self.name}-prb", f"{self.name}-prbc"
            )
            ports[self.probe_port] = switch_end
        self.bmv2 = Bmv2Switch(
            name=self.name,
            device_id=self.device_id,
            ports=ports,
            log_dir=self.log_dir,
            registry=self.registry,
            cpu_port=program_cpu_port(p4_artifacts().p4info),  # as the probe port (bed.py)
            tls=self.tls,
        )
        self.bmv2.start()

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        if self.bmv2 is not None:
            self.bmv2.stop()
        super().stop(deleteIntfs)
