"""The registry removes what a dead owner left behind (processes by PID)."""

import os
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


def test_the_sweep_passes_over_files_that_are_not_a_registrys_in_silence(tmp_path, caplog):
    """The run directory also holds a controller's state file (state-<port>.json, by default
    there): the sweep reads only registries (<pid>.json) and says nothing of the others, so a
    command that sweeps at start (`mpsched topo`) prints no warning before its own output."""
    (tmp_path / "state-8080.json").write_text('{"version": 1, "classes": {}}')
    tmp_path.chmod(0o700)
    assert sweep(tmp_path) == []
    assert caplog.text == ""
    assert (tmp_path / "state-8080.json").exists()


# ---- directories (a testbed's P4Runtime CA and keys) ---------------------------------------


def test_the_sweep_chooses_only_dead_owners_directories_of_the_user():
    from pathlib import Path
    from stat import S_IFDIR, S_IFLNK

    from mpsched.proc.cleanup import RecordedDir, dirs_to_remove

    me = 1000
    killed, shared, live, link, theirs, gone = (Path(f"/logs/{n}/p4rt-tls") for n in
                                                ("killed", "shared", "live", "link", "u", "x"))
    listing = [
        RecordedDir(killed, False, S_IFDIR, me),
        RecordedDir(killed, False, S_IFDIR, me),  # recorded twice: removed once
        RecordedDir(shared, False, S_IFDIR, me),  # a live run reuses the log directory
        RecordedDir(shared, True, S_IFDIR, me),
        RecordedDir(live, True, S_IFDIR, me),
        RecordedDir(link, False, S_IFLNK, me),  # a symbolic link now: never followed
        RecordedDir(theirs, False, S_IFDIR, me + 1),  # another user's
        RecordedDir(gone, False),  # removed already
    ]
    assert dirs_to_remove(listing, me) == [killed]
    assert dirs_to_remove([], me) == []


def _tls_dir(path):
    path.mkdir(parents=True, mode=0o700)
    (path / "ca.pem").write_text("ca")
    (path / "controller.key").write_text("key")
    return path


def test_a_killed_owners_directory_is_removed_and_a_live_ones_kept(tmp_path):
    state = tmp_path / "run"
    killed = _tls_dir(tmp_path / "a" / "p4rt-tls")
    live_dir = _tls_dir(tmp_path / "b" / "p4rt-tls")
    Registry(owner=_dead_pid(), state_dir=state).add_dir(killed)
    live = Registry(state_dir=state)  # this process: alive
    live.add_dir(live_dir)
    done = sweep(state)
    assert done == [f"removed directory {killed}"]
    assert not killed.exists() and (live_dir / "controller.key").is_file()
    assert [p.name for p in state.glob("*.json")] == [live.path.name]
    live.close()  # an orderly exit removes its own
    assert not live_dir.exists() and not list(state.glob("*.json"))


def test_a_directory_a_live_owner_recorded_too_is_kept(tmp_path):
    state = tmp_path / "run"
    shared = _tls_dir(tmp_path / "logs" / "p4rt-tls")
    Registry(owner=_dead_pid(), state_dir=state).add_dir(shared)
    Registry(state_dir=state).add_dir(shared)
    assert sweep(state) == []
    assert (shared / "ca.pem").is_file()


def test_a_recorded_path_that_became_a_link_or_anothers_is_not_removed(tmp_path):
    from mpsched.proc.cleanup import remove_dir

    target = _tls_dir(tmp_path / "elsewhere")
    link = tmp_path / "logs" / "p4rt-tls"
    link.parent.mkdir()
    link.symlink_to(target)
    Registry(owner=_dead_pid(), state_dir=tmp_path / "run").add_dir(link)
    assert sweep(tmp_path / "run") == []
    assert (target / "ca.pem").is_file() and link.is_symlink()
    assert not remove_dir(target, uid=os.geteuid() + 1)  # not this user's
    assert (target / "ca.pem").is_file()
    assert remove_dir(target) and not target.exists()
    assert not remove_dir(target)  # gone: nothing to do
