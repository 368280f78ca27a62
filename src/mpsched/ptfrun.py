"""`make ptf`: run the PTF suite (ptf-tests/) against a real BMv2 over P4Runtime.

Creates veth pairs, starts simple_switch_grpc on one end of each (ports 1..N, and the
program's probe port from its P4Info), hands the other ends to PTF, runs the suite, and
removes everything again, also on failure and Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from mpsched.p4rt.pipeline import program_cpu_port, program_probe_port
from mpsched.proc import prereqs
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry, interrupt_on_signals, sweep
from mpsched.proc.layout import REPO_ROOT, build_dir, p4_artifacts
from mpsched.proc.veth import make_veth, make_veths

N_PORTS = 4
DEVICE_ID = 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpsched.ptfrun",
        description="Run the PTF data-plane tests on BMv2 (veths, simple_switch_grpc, "
        "P4Runtime); extra arguments select tests, e.g. `forwarding.WeightZeroTest`.",
    )
    parser.add_argument("--xunit-dir", default=None,
                        help="write JUnit XML results here (PTF --xunit)")
    parser.add_argument("tests", nargs="*", help="test names to run (default: all)")
    args = parser.parse_args(argv)

    ptf_bin = shutil.which("ptf", path=str(Path(sys.executable).parent) + os.pathsep
                           + os.environ.get("PATH", ""))
    problems = prereqs.missing("root", "simple_switch_grpc", "ethtool")
    if ptf_bin is None:
        problems.append("ptf: not installed; run `make setup`")
    art = p4_artifacts()
    problems += [f"{p}: missing; run `make p4`" for p in art.missing()]
    if problems:
        print("ptf: cannot run:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2

    interrupt_on_signals(signal.SIGTERM)
    sweep()
    registry = Registry()
    switch = None
    try:
        pairs = make_veths(registry, N_PORTS)
        ports = dict(enumerate(pairs, start=1))
        probe_port = program_probe_port(art.p4info)
        if probe_port is not None:
            tag = os.getpid() % 100000
            ports[probe_port] = make_veth(registry, f"p{tag}sp", f"p{tag}tp")
        switch = Bmv2Switch(
            name="ptf-bmv2", device_id=DEVICE_ID,
            ports={i: sw for i, (sw, _) in ports.items()},
            log_dir=build_dir() / "logs", registry=registry,
            cpu_port=program_cpu_port(art.p4info),
        )
        switch.start()
        params = (f"grpcaddr='{switch.grpc_address}';device_id={DEVICE_ID};"
                  f"p4info='{art.p4info}';bmv2_json='{art.bmv2_json}'")
        cmd = [sys.executable, ptf_bin, "--test-dir", str(REPO_ROOT / "ptf-tests"),
               "--pypath", str(REPO_ROOT), "--test-params", params, "--disable-ipv6",
               "--log-dir", str(build_dir() / "logs" / "ptf")]
        for i, (_, tester) in ports.items():
            cmd += ["--interface", f"{i}@{tester}"]
        if args.xunit_dir:
            cmd += ["--xunit", "--xunit-dir", args.xunit_dir]
        cmd += args.tests
        result = subprocess.run(cmd, check=False)
        if not switch.alive():
            print("ptf: BMv2 died during the tests; see build/logs/ptf-bmv2.log",
                  file=sys.stderr)
            return 1
        return result.returncode
    except KeyboardInterrupt:
        print("ptf: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        if switch is not None:
            switch.stop()
        registry.close()


if __name__ == "__main__":
    sys.exit(main())
