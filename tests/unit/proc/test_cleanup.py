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


def test_tables_of_a_dead_owner_and_a_closed_registry_are_deleted(tmp_path, monkeypatch):
    """nftables tables (src/mpsched/proc/firewall.py) are released like links; `nft` itself is
    replaced by a recorder here (tests/integration/test_thrift_guard.py runs the real one)."""
    from mpsched.proc import cleanup

    deleted: list[str] = []
    monkeypatch.setattr(cleanup.firewall, "remove_table",
                        lambda name: deleted.append(name) or True)
    dead = Registry(owner=_dead_pid(), state_dir=tmp_path)
    dead.add_table("mpsched_thrift_1_9090")
    assert "deleted nftables table mpsched_thrift_1_9090" in sweep(tmp_path)
    mine = Registry(state_dir=tmp_path)
    mine.add_table("mpsched_thrift_2_9091")
    mine.add_table("mpsched_thrift_2_9092")
    mine.forget_table("mpsched_thrift_2_9092")
    mine.close()
    assert deleted == ["mpsched_thrift_1_9090", "mpsched_thrift_2_9091"]


def test_the_registry_is_private(tmp_path):
    """Its files hold every run's command lines: directory 0700 (an open one of ours
    tightened), files 0600."""
    import stat

    state_dir = tmp_path / "run"
    state_dir.mkdir(mode=0o755)
    state_dir.chmod(0o755)
    registry = Registry(owner=_dead_pid(), state_dir=state_dir)
    registry.add_link("vethX")
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(registry.path.stat().st_mode) == 0o600
    assert [p.name for p in state_dir.iterdir()] == [registry.path.name]


def test_sweep_ignores_state_files_of_another_user(tmp_path, monkeypatch, caplog):
    """A file someone else put there could name any process: it is left alone."""
    import os

    from mpsched.proc import cleanup

    child = subprocess.Popen(["sleep", "60"])
    try:
        stale = Registry(owner=_dead_pid(), state_dir=tmp_path)
        stale.add_process(child.pid)
        me = os.geteuid()
        monkeypatch.setattr(cleanup.os, "geteuid", lambda: me + 1)
        monkeypatch.setattr(cleanup.rundir, "check_dir", lambda path: None)
        assert sweep(tmp_path) == []
        assert "not a file of this user" in caplog.text
        assert child.poll() is None and stale.path.exists()
    finally:
        child.kill()
        child.wait()
