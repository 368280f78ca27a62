"""BMv2's P4Runtime server listens on loopback only, checked on the running process's
sockets (the kernel's table), not only on its command line
(tests/unit/controller/northbound/test_rest_abuse.py checks the command line).
BMv2's Thrift port listens on every address (a BMv2 limitation, README); nothing else
of the process listens."""

from __future__ import annotations

from tests.sockets import TCP_LISTEN, rows, socket_inodes


def test_grpc_listens_on_loopback_only(switch):
    sw, _ = switch
    assert sw.alive()
    mine = socket_inodes(sw.process.pid)
    listening = {(r.address, r.port) for r in rows("tcp")
                 if r.state == TCP_LISTEN and r.inode in mine}
    grpc = {addr for addr, port in listening if port == sw.grpc_port}
    assert grpc == {"127.0.0.1"}, listening
    others = {(addr, port) for addr, port in listening
              if port not in (sw.grpc_port, sw.thrift_port)}
    assert not others, f"BMv2 listens elsewhere too: {others}"
