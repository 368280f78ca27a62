"""The dashboard's fabric view in headless Chromium against the controller driving a 3 x 2
leaf-spine of real BMv2 switches (test_controller_fabric.py's, no traffic): the fabric is
drawn (every switch, the spines above the leaves, every link with both directions), a click
on a link takes it administratively down (GET /links says so, the page draws it so), picking
a pair by clicking two edges highlights exactly its paths (GET /pairs/{id}) and lists its
decisions; no console errors. A screenshot of the view goes to build/ui/fabric.png.

Then, against the controller in-process on such a fabric (bench/ui_fabric.py's, its telemetry
fed), a synthetic MPTCP connection leaf1 -> leaf3 of two subflows (the switches' reports, fed
as the southbound would): picking the pair lists it with each subflow's path, and hovering or
clicking it marks exactly those paths' links on the drawing; at 1400 and 1024 px no panel
clips its text and the pair's charts fit their history."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from tests.conftest import TOKEN, require
from tests.integration.test_controller_fabric import (  # noqa: F401 (fixture)
    NAMES,
    fabric_switches,
    start,
)
from tests.integration.test_ui_browser import assert_readable

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

SCREENSHOT = Path(__file__).resolve().parents[2] / "build" / "ui" / "fabric.png"


@pytest.fixture
def browser():
    require("chromium", "chromedriver", "selenium")
    from mpsched.testing.browser import start_browser

    driver = start_browser(1400, 1100)
    yield driver
    driver.quit()


def wait_for(what: str, check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def drawn(driver, selector: str) -> list[dict[str, str]]:
    """The data attributes of every element matching `selector` in the topology."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => ({...e.dataset,"
        " y: String(e.getBBox ? e.getBBox().y : 0)}))", f"#topology {selector}")


def click_drawn(driver, selector: str) -> None:
    """Click an element of the topology; the drawing is replaced every poll, so an element
    found just before it was may be gone: found again then."""
    from selenium.common.exceptions import StaleElementReferenceException

    for _ in range(20):
        try:
            driver.find_element("css selector", f"#topology {selector}").click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    pytest.fail(f"could not click {selector}")


def click_link(driver, name: str) -> None:
    """Click a link's line."""
    click_drawn(driver, f'g.link[data-link="{name}"] .link-hit')


def test_the_fabric_view_draws_takes_a_link_down_and_shows_a_pair(
    tmp_path, artifacts, fabric_switches, browser,  # noqa: F811
):
    from selenium.webdriver.common.by import By

    from mpsched.testing.browser import console_errors, wait_rendered

    ctl = start(tmp_path, artifacts, fabric_switches)
    base = ctl.base
    driver = browser
    try:
        driver.get(base + "/ui/")
        wait_rendered(driver)
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()

        # the fabric: 5 switches, spines above leaves, 6 links with a line per direction
        links = requests.get(base + "/links", timeout=5).json()
        switches = wait_for("5 switches drawn", lambda: len(s := drawn(driver, "g.switch")) == 5
                            and s)
        assert sorted(s["switch"] for s in switches) == sorted(NAMES)
        ys = {s["switch"]: float(s["y"]) for s in switches}
        assert max(ys["spine1"], ys["spine2"]) < min(ys[f"leaf{i}"] for i in (1, 2, 3))
        assert {s["switch"] for s in switches if s["role"] == "edge"} == {"leaf1", "leaf2",
                                                                          "leaf3"}
        groups = drawn(driver, "g.link")
        assert sorted(g["link"] for g in groups) == sorted(link["name"] for link in links)
        assert len(drawn(driver, "g.link line.dir")) == 2 * len(links)
        assert {g["admin"] for g in groups} == {"up"} and {g["alive"] for g in groups} == {"true"}
        # the per-port counters: two polls in, every direction has a measured rate
        wait_for("every link's load measured", lambda: all(
            link["forward"]["mbps"] is not None and link["reverse"]["mbps"] is not None
            for link in requests.get(base + "/links", timeout=5).json()), timeout=15)

        # a click on a link takes it administratively down
        click_link(driver, "leaf1-spine2")
        wait_for("GET /links: leaf1-spine2 down", lambda: any(
            link["name"] == "leaf1-spine2" and link["admin"] == "down"
            for link in requests.get(base + "/links", timeout=5).json()))
        wait_for("the page draws it down", lambda: [
            g["admin"] for g in drawn(driver, 'g.link[data-link="leaf1-spine2"]')] == ["down"])
        # path ids are no controls on a fabric (path N is another route for every pair)
        assert driver.execute_script(
            "return [...document.querySelectorAll('#paths th.control')].map((t) => t.hidden)"
            ".concat([...document.querySelectorAll('#paths td')].filter((c) => c.querySelector"
            "('button')).map((c) => c.hidden))") == [True] * (2 + 2 * 2)
        # the other uplink of leaf1 down too: done, and its pairs' warnings on the page
        click_link(driver, "leaf1-spine1")
        wait_for("the warnings", lambda: "leaf1->leaf3: no usable path left" in
                 driver.find_element(By.ID, "message").text)
        wait_for("leaf1-spine1 drawn down", lambda: [
            g["admin"] for g in drawn(driver, 'g.link[data-link="leaf1-spine1"]')] == ["down"])
        click_link(driver, "leaf1-spine1")
        wait_for("leaf1-spine1 up again", lambda: [
            g["admin"] for g in drawn(driver, 'g.link[data-link="leaf1-spine1"]')] == ["up"])

        # two edge clicks pick the pair leaf2 -> leaf3: its paths, highlighted
        click_drawn(driver, 'g.switch[data-switch="leaf2"]')
        click_drawn(driver, 'g.switch[data-switch="leaf3"]')
        pair = requests.get(base + "/pairs/leaf2-%3Eleaf3", timeout=5).json()
        want = sorted((str(p["id"]), name) for p in pair["paths"] for name in p["links"])
        assert want, pair
        wait_for("the pair's paths highlighted", lambda: sorted(
            (h["path"], h["link"]) for h in drawn(driver, ".pair-path")) == want)
        assert driver.find_element(By.ID, "direction").get_attribute("value") == "leaf2->leaf3"
        wait_for("its decisions", lambda: driver.find_element(
            By.ID, "decisions-title").text == "Decisions of leaf2->leaf3")
        rows = driver.find_elements(By.CSS_SELECTOR, "#decisions tbody tr")
        assert {r.find_elements(By.TAG_NAME, "td")[1].text for r in rows} <= {"leaf2->leaf3"}
        assert console_errors(driver) == []
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(SCREENSHOT))
    finally:
        ctl.stop()


@pytest.fixture
def fed_fabric(tmp_path):
    """The in-process controller on a 3 x 2 leaf-spine of BMv2s, its telemetry fed, and its
    REST API and page served: (controller, base URL)."""
    require("root", "simple_switch_grpc")
    from mpsched.bench.ui_fabric import FabricFeeder, start_fabric
    from mpsched.controller.northbound.rest import RestApi
    from mpsched.controller.northbound.server import RestServer
    from mpsched.proc.bmv2 import free_port
    from mpsched.proc.cleanup import Registry

    registry = Registry()
    switches, ctl = start_fabric(tmp_path, registry, 3, 2)
    feeder = FabricFeeder(ctl, 2, seed=1)
    server = RestServer(RestApi(ctl), "127.0.0.1", free_port())
    try:
        for agent in ctl.agents:
            assert agent.wait_ready(60), agent.status
        feeder.start()
        server.start()
        yield ctl, "http://{}:{}".format(*server.address)
    finally:
        feeder.halt.set()
        server.stop()
        ctl.stop()
        for sw in switches:
            sw.stop()
        registry.close()


def test_the_fabric_view_shows_a_pairs_mptcp_connection_on_its_paths(fed_fabric, browser):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from mpsched.controller.scheduling.mptcp import Flow, MptcpReport
    from mpsched.controller.scheduling.mptcp_digest import token
    from mpsched.testing.browser import console_errors, wait_rendered

    ctl, base = fed_fabric
    initial = Flow("10.0.1.1", 40000, "10.0.3.1", 5201)
    join = Flow("10.0.1.1", 40001, "10.0.3.1", 5201)
    now = time.time()
    ctl.on_mptcp(MptcpReport("capable", initial.reversed(), now, tcp_flags=0x12, key_a=7,
                             switch="leaf3"))
    ctl.on_mptcp(MptcpReport("join", join, now, tcp_flags=0x02, token=token(7), addr_id=1,
                             switch="leaf1"))
    (conn,) = wait_for("both subflows pinned", lambda: (
        c := requests.get(base + "/mptcp/connections", timeout=5).json()["connections"])
        and all(s["path_id"] is not None for s in c[0]["subflows"]) and c)
    assert [s["pair"] for s in conn["subflows"]] == ["leaf1->leaf3"] * 2
    pair = requests.get(base + "/pairs/leaf1-%3Eleaf3", timeout=5).json()
    paths = {p["id"]: p for p in pair["paths"]}
    pinned = [s["path_id"] for s in conn["subflows"]]
    assert sorted(pinned) == sorted(paths)  # two subflows, two paths: one each
    want = sorted((str(pid), name) for pid in pinned for name in paths[pid]["links"])

    driver = browser
    driver.get(base + "/ui/")
    wait_rendered(driver)
    wait_for("the pairs listed", lambda: "leaf1->leaf3" in [
        o.get_attribute("value") for o in Select(driver.find_element(By.ID, "direction")).options])
    Select(driver.find_element(By.ID, "direction")).select_by_value("leaf1->leaf3")
    def listed() -> list[list[str]] | None:
        """The connection's rows' cell texts, read at once (a poll may redraw the table
        between finding the rows and reading them: then None, and the wait tries again)."""
        try:
            return [[td.text for td in r.find_elements(By.TAG_NAME, "td")]
                    for r in driver.find_elements(
                        By.CSS_SELECTOR, f'#pair-mptcp tbody tr[data-conn="{conn["id"]}"]')]
        except StaleElementReferenceException:
            return None

    cells = wait_for("its connection listed", listed)
    assert [c[1] for c in cells] == [f"{s['src']}:{s['sport']} → {s['dst']}:{s['dport']}"
                                     for s in conn["subflows"]]
    assert [c[3] for c in cells] == [str(p) for p in pinned]
    assert [c[4] for c in cells] == [" → ".join(paths[p]["switches"]) for p in pinned]
    assert drawn(driver, ".mptcp-path") == []  # nothing marked until it is focused

    def on_row(act) -> None:
        """`act` on the connection's second row (found afresh: every poll redraws the table)."""
        for _ in range(3):
            try:
                act(driver.find_element(By.CSS_SELECTOR, f'#pair-mptcp tr[data-conn="{conn["id"]}"]'
                                                         '[data-subflow="1"]'))
                return
            except StaleElementReferenceException:
                continue
        pytest.fail("the connection's row kept being redrawn")

    away = driver.find_element(By.ID, "topology-title")
    on_row(lambda row: ActionChains(driver).move_to_element(row).perform())
    marked = wait_for("its paths marked on hover", lambda: drawn(driver, ".mptcp-path"))
    assert sorted((m["path"], m["link"]) for m in marked) == want
    ActionChains(driver).move_to_element(away).perform()
    wait_for("unmarked on leaving", lambda: drawn(driver, ".mptcp-path") == [])
    on_row(lambda row: row.click())  # picked: stays marked without the pointer, across polls
    ActionChains(driver).move_to_element(away).perform()
    time.sleep(2.5)
    assert sorted((m["path"], m["link"]) for m in drawn(driver, ".mptcp-path")) == want
    assert_readable(driver, "the fabric view, a pair picked", charts=True)
    assert console_errors(driver) == []
