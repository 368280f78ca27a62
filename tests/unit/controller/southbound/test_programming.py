"""southbound/programming.py: a switch running the program is reconciled, any other gets
the program and every entry; then the clone sessions and the digests (the reports batched,
the MPTCP digests one at a time, none of a stage the program lacks)."""

from __future__ import annotations

from mpsched.controller.southbound.programming import insert_digests, program_switch
from mpsched.controller.telemetry.estimators import REPORT_BATCH_MAX
from mpsched.p4rt.pipeline import DIGEST_PATH_REPORT, DIGEST_RTT_REPORT, DIGESTS_MPTCP
from mpsched.p4rt.reconcile import Diff
from tests.unit.controller.helpers import pipeline

COOKIE = 42


class Switch:
    """A client of a switch that runs the program of pipeline cookie `running`; records what
    is written."""

    def __init__(self, running: int | None) -> None:
        self.running = running
        self.pushed: list[tuple[str, int]] = []
        self.inserted: list = []
        self.reconciled: list = []
        self.sessions: list = []
        self.digests: dict[str, dict[str, int]] = {}

    def program_cookie(self, bmv2_json):
        return COOKIE

    def pipeline_cookie(self):
        return self.running

    def set_pipeline(self, bmv2_json, cookie):
        self.pushed.append((bmv2_json, cookie))
        self.running = cookie

    def insert(self, *entries):
        self.inserted += entries

    def reconcile(self, tables, desired):
        self.reconciled += desired
        return Diff(unchanged=len(desired))

    def insert_clone_sessions(self, *sessions):
        self.sessions += sessions

    def insert_digest(self, name, max_timeout_ns, max_list_size):
        self.digests[name] = {"max_timeout_ns": max_timeout_ns, "max_list_size": max_list_size}


def desired():
    p = pipeline()
    return [p.switch_config(1), p.path_nexthop(2, 1, 5), p.path_nexthop(2, 2, 6)]


def test_a_switch_without_the_program_gets_it_and_every_entry():
    switch = Switch(running=None)
    done = program_switch(switch, pipeline(), "x.json", desired(), 0, "s1")
    assert done.as_tuple() == ("pushed", "3 entries")
    assert switch.pushed == [("x.json", COOKIE)] and switch.inserted == desired()
    # a SYN's copy leaves on each path next hop's port
    assert [s.port for s in switch.sessions] == [5, 6]


def test_a_switch_running_the_program_is_reconciled_and_keeps_it():
    switch = Switch(running=COOKIE)
    done = program_switch(switch, pipeline(), "x.json", desired(), 0, "s1")
    assert done.how == "reconciled" and done.detail.endswith("3 kept")
    assert switch.pushed == [] and switch.inserted == [] and switch.reconciled == desired()
    assert len(switch.sessions) == 2  # written again: the sessions are not read back


def test_the_reports_are_batched_and_the_mptcp_digests_go_one_at_a_time():
    switch = Switch(running=COOKIE)
    insert_digests(switch, pipeline(), 2_000)
    batched = {"max_timeout_ns": 2_000_000, "max_list_size": REPORT_BATCH_MAX}
    assert switch.digests[DIGEST_PATH_REPORT] == switch.digests[DIGEST_RTT_REPORT] == batched
    assert {name: switch.digests[name] for name in DIGESTS_MPTCP} == {
        name: {"max_timeout_ns": 0, "max_list_size": 1} for name in DIGESTS_MPTCP}
    unbatched = Switch(running=COOKIE)
    insert_digests(unbatched, pipeline(), 0)
    assert unbatched.digests[DIGEST_PATH_REPORT] == {"max_timeout_ns": 0, "max_list_size": 1}


def test_a_program_without_the_rtt_monitor_or_mptcp_gets_only_the_path_reports():
    lean = pipeline()
    lean.has_rtt_monitor, lean.mptcp_digests = False, {}
    switch = Switch(running=COOKIE)
    insert_digests(switch, lean, 0)
    assert list(switch.digests) == [DIGEST_PATH_REPORT]
