"""`mpsched topo`: a testbed that cannot start says why in one line and exits 2."""

from __future__ import annotations

from mpsched.emu.linkem import LinkemError
from mpsched.topo import __main__ as topo_main


class Unbuilt:
    """A testbed whose link emulator was never built (`make linkem`)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        raise LinkemError("build/bin/linkem: not built; run `make linkem` (needs gcc)")

    def __exit__(self, *exc) -> None:
        raise AssertionError("never entered: nothing to stop")


def test_a_link_emulator_not_built_is_a_message_and_exit_2(monkeypatch, capsys):
    from mpsched.proc import prereqs
    from mpsched.topo import testbed

    monkeypatch.setattr(prereqs, "missing", lambda *names: [])
    monkeypatch.setattr(testbed, "Testbed", Unbuilt)
    assert topo_main.main(["--rates", "10,5"]) == 2
    out = capsys.readouterr()
    assert out.err.strip() == "topo: build/bin/linkem: not built; run `make linkem` (needs gcc)"
    assert "Traceback" not in out.err and out.out == ""
