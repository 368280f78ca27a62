"""What a cluster testbed sweeps on another server after its stop
(src/mpsched/topo/cluster_sweep.py):
only what its own run left, by owner, PID and name; and a server that does not answer is
given up on after the deadline."""

from __future__ import annotations

import subprocess

from mpsched.topo.cluster_sweep import pidfile, sweep_script, sweep_server


def test_the_script_names_only_the_owners_things() -> None:
    script = sweep_script(4242, ["leaf2-eth1", "lk3-eth2"], [777], [901])
    assert "/tmp/mpsched-*-4242.pid" in script
    assert pidfile("h2_1", 3, 4242) == "/tmp/mpsched-h2_1-3-4242.pid"
    assert "mpsched_thrift_4242_*" in script  # its own tables, not another run's
    assert "for i in leaf2-eth1 lk3-eth2 tap9; do" in script
    assert "for pid in 777; do" in script and "simple_switch*" in script
    assert "for pid in 901; do" in script and "in bash)" in script  # a lost session's shell
    # a PID newer than its pid file is not the process that wrote it
    assert '! [ "/proc/$pid" -nt "$p" ]' in script


def test_the_script_is_valid_sh() -> None:
    done = subprocess.run(["sh", "-n"], input=sweep_script(1, ["a-eth1"], []), text=True,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr


def test_what_was_removed_is_returned_and_a_silent_server_given_up() -> None:
    # `ssh` stands in for the server: the script's own lines come back
    out = sweep_server(["sh", "-c", "cat >/dev/null; echo 'deleted interface x'", "ssh"],
                       "", "rack2")
    assert out == ["deleted interface x"]
    assert sweep_server(["sh", "-c", "sleep 30", "ssh"], "", "rack2", timeout=0.3) == []
