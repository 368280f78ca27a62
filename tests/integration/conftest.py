"""Live tests (controller, BMv2, Mininet) hold deadlines: those that use the `machine_load`
fixture sample the machine's CPU while they run (tests/machine.py, the lab runner's rule), and
a failure then says whether the machine was saturated, so a red test on a busy host reads as
that and not as a bug."""

from __future__ import annotations

import pytest

from tests.machine import MachineLoad

LOAD_KEY = pytest.StashKey[MachineLoad]()


@pytest.fixture
def machine_load(request):
    with MachineLoad() as load:
        request.node.stash[LOAD_KEY] = load
        yield load


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    load = item.stash.get(LOAD_KEY, None)
    if report.when != "call" or not report.failed or load is None:
        return
    text = load.so_far().describe()  # the fixture is torn down after the call
    report.sections.append(("machine load", text))
    if "SATURATED" in text:
        report.longrepr = f"{report.longrepr}\n\n{text}: the failure may be the machine's"
