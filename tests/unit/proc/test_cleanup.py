"""The registry removes what a dead owner left behind (processes by PID)."""

import subprocess
import time

from mpsched.proc.cleanup import Registry, sweep


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_sweep_kills_processes_of_dead_owner(tmp_path):
    child = subprocess.Popen(["sleep", "60"])
    try:
        registry = Registry(owner=_dead_pid(), state_dir=tmp_path)
        registry.add_process(child.pid)
        done = sweep(tmp_path)
        assert any(str(child.pid) in line for line in done)
        child.wait(timeout=5)
        assert not list(tmp_path.glob("*.json"))
    finally:
        if child.poll() is None:
            child.kill()


def test_sweep_spares_live_owner_and_reused_pids(tmp_path):
    child = subprocess.Popen(["sleep", "60"])
    try:
        live = Registry(state_dir=tmp_path)  # owner: this process, alive
        live.add_process(child.pid)
        stale = Registry(owner=_dead_pid(), state_dir=tmp_path)
        stale.processes[child.pid] = "some other command"  # PID reused by another program
        stale._save()
        sweep(tmp_path)
        time.sleep(0.2)
        assert child.poll() is None
        live.close()
        child.wait(timeout=5)
    finally:
        if child.poll() is None:
            child.kill()
