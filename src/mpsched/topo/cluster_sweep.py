"""What a cluster testbed removes on each other server after its network stopped
(src/mpsched/topo/cluster_testbed.py), whether the stop went well or not.

Mininet's stop ends every node and deletes every interface through the nodes' own shells; a
shell that failed (its ssh session ended, a command that did not answer:
src/mpsched/topo/cluster_shell.py)
can do neither. So after the stop one ssh command per server, with a deadline, removes what
this run (`owner`, the PID of the process that owns the testbed) may have left there, and
only that:

- the layout's interfaces in the server's root namespace and a ``tap9`` of a tunnel that
  was being set up (src/mpsched/topo/cluster_links.py);
- the nftables tables guarding its BMv2 switches' Thrift ports, named after the owner
  (``mpsched_thrift_<owner>_<port>``, src/mpsched/proc/firewall.py);
- the processes its hosts started there (`RemoteProcess`, src/mpsched/topo/cluster_nodes.py), by the
PID
  each wrote to ``/tmp/mpsched-<node>-<n>-<owner>.pid``, unless the PID now names a newer
  process than the file (a reused PID);
- its BMv2 processes there, by PID, if that PID still runs simple_switch_grpc;
- the shells there of nodes whose ssh session was lost here before the stop (SIGHUP, if the
  PID still runs bash), which ends their sessions and their jobs.

A host's own network namespace goes with its shell's end. `sweep_script` is pure.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
from collections.abc import Iterable

from mpsched.proc.firewall import FAMILY, TABLE_PREFIX

from .cluster_links import TAP

log = logging.getLogger(__name__)

SWEEP_TIMEOUT_S = 30.0
PIDFILE_GLOB = "/tmp/mpsched-*-{owner}.pid"


def pidfile(node: str, serial: int, owner: int) -> str:
    """Where a remote host's process writes its PID (matched by PIDFILE_GLOB)."""
    return f"/tmp/mpsched-{node}-{serial}-{owner}.pid"


def sweep_script(owner: int, interfaces: Iterable[str], bmv2_pids: Iterable[int],
                 shell_pids: Iterable[int] = ()) -> str:
    """The sh script removing what run `owner` left on a server (module docstring); it prints
    one line per thing it removed. `shell_pids`: the shells there of nodes whose session
    was lost here (ended with SIGHUP, if still bash: their jobs get it too)."""
    names = " ".join(shlex.quote(n) for n in [*interfaces, TAP])
    pids = " ".join(str(int(p)) for p in bmv2_pids)
    shells = " ".join(str(int(p)) for p in shell_pids)
    prefix = f"{TABLE_PREFIX}{int(owner)}_"
    lines = [
        f"for p in {PIDFILE_GLOB.format(owner=int(owner))}; do",
        '  [ -f "$p" ] || continue; pid=$(cat "$p")',
        '  if [ -n "$pid" ] && [ -d "/proc/$pid" ] && ! [ "/proc/$pid" -nt "$p" ]; then',
        '    kill -9 "$pid" 2>/dev/null && echo "killed process $pid ($p)"; fi',
        '  rm -f "$p"; done',
        f"for pid in {shells}; do",
        '  case "$(cat /proc/$pid/comm 2>/dev/null)" in bash)',
        '    kill -HUP "$pid" 2>/dev/null && echo "ended shell $pid";; esac; done',
        f"for pid in {pids}; do",
        '  case "$(cat /proc/$pid/comm 2>/dev/null)" in simple_switch*)',
        '    kill -9 "$pid" 2>/dev/null && echo "killed BMv2 $pid";; esac; done',
        f"for i in {names}; do",
        '  ip link del "$i" 2>/dev/null && echo "deleted interface $i"; done',
        f"for t in $(nft list tables {FAMILY} 2>/dev/null | sed -n 's/^table {FAMILY} //p'); do",
        f'  case "$t" in {prefix}*)',
        f'    nft delete table {FAMILY} "$t" && echo "deleted nftables table $t";; esac; done',
        "true",
    ]
    return "\n".join(lines) + "\n"


def sweep_server(ssh: list[str], script: str, server: str,
                 timeout: float = SWEEP_TIMEOUT_S) -> list[str]:
    """Run `script` as root on `server` through `ssh` (the ssh command up to and with its
    destination); what it removed, each logged. A server that does not answer within
    `timeout` is named in a warning (what the run left there stays)."""
    try:
        done = subprocess.run([*ssh, "sudo", "sh", "-s"], input=script, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        log.warning("server %s: its sweep did not end within %g s; what the run left there "
                    "stays", server, timeout)
        return []
    if done.returncode != 0:
        log.warning("server %s: its sweep failed (exit %d): %s", server, done.returncode,
                    done.stderr.strip()[-500:])
    removed = [line for line in done.stdout.splitlines() if line.strip()]
    for line in removed:
        log.info("server %s: %s (left by the stop)", server, line)
    return removed
