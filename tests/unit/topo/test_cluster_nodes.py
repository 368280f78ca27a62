"""The remote node classes (src/mpsched/topo/cluster_nodes.py) without a server: the ssh options
reach
every ssh command the cluster edition builds, and what a node holds here is what the
cleanup registry gets."""

from __future__ import annotations

from types import SimpleNamespace

from mininet.examples.cluster import RemoteMixin

from mpsched.topo.cluster_nodes import SshOptions, ssh_options


class Recorded:
    """The parent of SshOptions in the MRO records what it is asked to spawn."""

    def __init__(self, name: str, **params) -> None:
        self.name = name
        self.calls: list = []

    def _popen(self, cmd, **params):
        self.calls.append((cmd, params))
        return SimpleNamespace(pid=4242, args=cmd)


class Node(SshOptions, Recorded):
    pass


def remote_node(opts=("-F", "/x/ssh.conf")) -> Node:
    node = Node.__new__(Node)
    node.ssh_options = list(opts)
    node.sshbase = [*RemoteMixin.sshbase, *opts]
    node.user, node.server, node.isRemote = "root", "rack2", True
    node.sshcmd = ["sudo", "-E", "-u", "root", *node.sshbase, "root@10.9.0.2"]
    node.calls = []
    return node


def test_options_go_into_the_tunnels_ssh_and_the_nodes_own() -> None:
    node = remote_node()
    # RemoteSSHLink.makeTunnel on a remote node: rpopen(ssh ..., sudo=False)
    node.rpopen(["ssh", "-n", "-o", "Tunnel=Ethernet", "-w", "9:9", "root@h", "echo @"],
                sudo=False)
    node._popen(["ip", "link"], tt=False)  # as popen() does, less its mnexec
    (tunnel, _), (other, _) = node.calls
    # on the node's server (its own ssh, with the options), the tunnel's ssh with them too
    assert tunnel[:5] == ["sudo", "-E", "-u", "root", "ssh"] and "/x/ssh.conf" in tunnel[5:]
    inner = tunnel[tunnel.index("root@10.9.0.2") + 1:]
    assert inner[:3] == ["ssh", "-F", "/x/ssh.conf"] and inner[-1] == "echo @"
    assert "-tt" in tunnel and "-tt" not in other
    assert other[-2:] == ["ip", "link"] and other[other.index("root@10.9.0.2") + 1:][:2] == [
        "sudo", "-E"]


def test_the_shells_ssh_carries_the_options_and_is_what_cleanup_records() -> None:
    node = remote_node()
    assert node.sshbase[-2:] == ["-F", "/x/ssh.conf"] and "-tt" in node.sshbase
    node.shell = SimpleNamespace(pid=77, args=[*node.sshcmd, "sudo", "-E", "mnexec"])
    node.pid = 99999  # the remote shell's PID: means nothing here
    pid, cmd = node.local_processes()[0]
    assert pid == 77 and cmd.startswith("sudo -E -u root ssh") and "-F /x/ssh.conf" in cmd
    node.isRemote = False
    assert node.local_processes() == [(99999, "")]
    node.shell = None
    assert node.local_processes() == []


def test_ssh_options_of_a_config() -> None:
    from pathlib import Path

    assert ssh_options(None) == ()
    assert ssh_options(Path("/c/ssh.conf")) == ("-F", "/c/ssh.conf")


def test_a_remote_hosts_process_writes_its_pid_and_gets_signals_there(monkeypatch) -> None:
    import shlex
    import signal

    from mpsched.topo.cluster_nodes import ClusterHost, RemoteProcess

    host = ClusterHost.__new__(ClusterHost)
    host.name, host.isRemote = "h2_1", True
    rcmds: list[str] = []
    host.rcmd = rcmds.append  # type: ignore[method-assign]
    started: list = []

    class Client:  # the ssh client here
        pid, returncode = 4242, None

        def __init__(self, args):
            self.args = args

        def poll(self):
            return self.returncode

        def wait(self, timeout=None):
            self.returncode = 0
            return 0

    def node_popen(self, *args, **kwargs):  # Node.popen through RemoteMixin: ssh
        started.append((args, kwargs))
        return Client(args[0])

    monkeypatch.setattr(RemoteMixin, "popen", node_popen)
    proc = host.popen(["python3", "-m", "gen", "--out", "/r/a b.json"], stdout=1)
    assert isinstance(proc, RemoteProcess) and proc.pid == 4242
    (args, kwargs), = started
    sh, dash_c, line = args[0]
    assert (sh, dash_c, kwargs) == ("sh", "-c", {"stdout": 1})
    pidfile = proc.pidfile
    # one word for the remote shell, which runs: echo $$ > pidfile; exec the command
    assert shlex.split(line) == [f"echo $$ > {pidfile}; exec python3 -m gen --out '/r/a b.json'"]
    proc.terminate()
    assert rcmds == [f"sh -c 'kill -{int(signal.SIGTERM)} $(cat {pidfile})'"]
    assert proc.wait() == 0 and rcmds[-1] == f"rm -f {pidfile}"
    proc.terminate()  # ended: nothing more is sent
    assert len(rcmds) == 2


def test_a_local_hosts_process_is_attached_without_detaching(monkeypatch) -> None:
    """mnexec -d of a process group leader (RemoteMixin's setpgrp) forks and exits: the
    Popen must be the command's own process."""
    from mininet.examples.cluster import RemoteMixin

    from mpsched.topo.cluster_nodes import ClusterHost

    host = ClusterHost.__new__(ClusterHost)
    host.name, host.isRemote, host.pid = "h1_1", False, 321
    seen: list = []
    monkeypatch.setattr(RemoteMixin, "popen", lambda self, *a, **kw: seen.append((a, kw)))
    host.popen(["sleep", "1"], stdout=1)
    assert seen == [((["sleep", "1"],), {"stdout": 1, "mncmd": ["mnexec", "-a", "321"]})]
