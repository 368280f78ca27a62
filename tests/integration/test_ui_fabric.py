"""The dashboard's fabric view in headless Chromium against the controller driving a 3 x 2
leaf-spine of real BMv2 switches (test_controller_fabric.py's, no traffic): the fabric is
drawn (every switch, the spines above the leaves, every link with both directions), a click
on a link takes it administratively down (GET /links says so, the page draws it so), picking
a pair by clicking two edges highlights exactly its paths (GET /pairs/{id}) and lists its
decisions; no console errors. A screenshot of the view goes to build/ui/fabric.png (the one in
docs/dashboard.md is such a screenshot)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from tests.conftest import TOKEN, require
from tests.integration.test_controller_fabric import (  # noqa: F401 (fixture)
    NAMES,
    fabric_switches,
    start_controller,
    stop,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

SCREENSHOT = Path(__file__).resolve().parents[2] / "build" / "ui" / "fabric.png"


@pytest.fixture
def browser():
    require("chromium", "chromedriver", "selenium")
    from mpsched.bench.ui import start_browser

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


def test_the_fabric_view_draws_takes_a_link_down_and_shows_a_pair(
    tmp_path, artifacts, fabric_switches, browser,  # noqa: F811
):
    from selenium.webdriver.common.by import By

    from mpsched.bench.ui import console_errors, wait_rendered

    base, proc = start_controller(tmp_path, artifacts, fabric_switches)
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
        driver.find_element(By.CSS_SELECTOR,
                            '#topology g.link[data-link="leaf1-spine2"] .link-hit').click()
        wait_for("GET /links: leaf1-spine2 down", lambda: any(
            link["name"] == "leaf1-spine2" and link["admin"] == "down"
            for link in requests.get(base + "/links", timeout=5).json()))
        wait_for("the page draws it down", lambda: [
            g["admin"] for g in drawn(driver, 'g.link[data-link="leaf1-spine2"]')] == ["down"])

        # two edge clicks pick the pair leaf2 -> leaf3: its paths, highlighted
        driver.find_element(By.CSS_SELECTOR, '#topology g.switch[data-switch="leaf2"]').click()
        driver.find_element(By.CSS_SELECTOR, '#topology g.switch[data-switch="leaf3"]').click()
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
        stop(proc)
