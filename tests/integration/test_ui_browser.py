"""The operator dashboard in a real browser (headless Chromium driven by Selenium) against the
controller process programming a real BMv2 (the `switch` fixture): the page loads without
console errors, shows both paths with live numbers that change while frames go through the
switch, and its writes go through the REST API: a policy change shows up in GET /classes, an
admin-down shows the path as down, refused writes (no token, a bad value) show the API's
error, the last path down shows the answer's warning, a weight (which replaces the default
class's policy) is asked for first; at 1400 and 1024 px no panel clips its text. One browser
and one controller for the whole scenario keep it short.

Then, against the controller in-process on one BMv2 with its telemetry fed (bench/ui_feed.py's,
llhd deciding all the time): the charts' time axis fits the history (no chart leaves 80 % of
it empty), every figure names its unit, nothing is clipped at either width, and a decision's
reason is in words, its coefficients behind a details element that stays open across polls."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from mpsched import addressing as ap
from tests.conftest import TOKEN, require
from tests.controllers import start_controller
from tests.netdesc import edge_switch

pytestmark = pytest.mark.integration

PATHS = [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3, "rate_mbps": 5}]
# Network errors the refused writes log in the console by design (HTTP 400/401 answers).
REFUSALS = ("status of 400", "status of 401")


def netcfg(grpc_address: str, remote_address: str) -> dict:
    s1 = edge_switch(1, grpc_address, PATHS, with_host=True)
    # the far edge: a BMv2 of its own without ports (it acknowledges the controller's writes)
    s2 = edge_switch(2, remote_address, PATHS)
    return {"switches": [s1, s2]}


@pytest.fixture
def remote(tmp_path):
    """s2: a second BMv2 without ports."""
    from mpsched.proc.bmv2 import Bmv2Switch
    from mpsched.proc.cleanup import Registry

    registry = Registry()
    sw = Bmv2Switch("itest-bmv2-s2", 2, {}, tmp_path, registry=registry)
    try:
        sw.start()
        yield sw
    finally:
        sw.stop()
        registry.close()


@pytest.fixture
def controller(switch, remote, tmp_path, artifacts):
    sw, pairs = switch
    with start_controller(tmp_path, artifacts, netcfg(sw.grpc_address, remote.grpc_address),
                          env={"OSKEN_HUB_TYPE": "native"}) as ctl:
        yield ctl.base, pairs


@pytest.fixture
def browser():
    require("chromium", "chromedriver", "selenium")
    from mpsched.testing.browser import start_browser

    driver = start_browser()
    yield driver
    driver.quit()


class Traffic(threading.Thread):
    """UDP frames from h1's port towards the remote subnet, many source ports (both paths)."""

    def __init__(self, iface: str) -> None:
        super().__init__(daemon=True)
        self.iface = iface
        self.halt = threading.Event()

    def run(self) -> None:
        from scapy.all import IP, UDP, Ether, Raw, conf

        frames = [
            Ether(src=ap.H1_MAC, dst=ap.S1_MAC)
            / IP(src=ap.H1_IP, dst=ap.H2_IP)
            / UDP(sport=10000 + i, dport=5001)
            / Raw(b"x" * 1000)
            for i in range(16)
        ]
        with conf.L2socket(iface=self.iface) as sock:
            while not self.halt.is_set():
                for frame in frames:
                    sock.send(frame)
                time.sleep(0.01)


def topology(driver) -> dict[str, dict[str, str]]:
    """Each path's drawing: its data attributes and label (read at once: it is redrawn every
    poll)."""
    return driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('#topology g.path')]"
        ".map((g) => [g.dataset.path, {...g.dataset, label: g.textContent}]))"
    )


def mbps(driver) -> dict[str, float]:
    return {p: float(g["mbps"]) for p, g in topology(driver).items()}


def wait_for(what: str, check, timeout: float = 8.0, driver=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    shown = f"; the page says: {message(driver)!r}" if driver is not None else ""
    pytest.fail(f"timed out waiting for {what}{shown}")


def message(driver) -> str:
    return driver.find_element("id", "message").text


def click_apply(driver, class_id: int, name: str, gap: str = "") -> None:
    from selenium.webdriver.support.ui import Select

    row = driver.find_element("css selector", f'#classes tbody tr[data-key="{class_id}"]')
    Select(row.find_element("css selector", "select.policy-name")).select_by_value(name)
    gap_input = row.find_element("css selector", "input.gap")
    gap_input.clear()
    gap_input.send_keys(gap)
    row.find_element("css selector", "button.apply").click()


def assert_readable(driver, when: str, charts: bool = False) -> None:
    """At each of the dashboard's widths: no panel element clips its text (scrollWidth >
    clientWidth); `charts`: every chart has data and covers at least 20 % of its time axis."""
    from mpsched.testing.browser import WIDTHS, chart_cover, clipped, set_width

    try:
        for width in WIDTHS:
            set_width(driver, width, settle_s=1.2)  # a poll redraws the page at that width
            assert clipped(driver) == [], f"{when}, at {width} px"
            if charts:
                cover = chart_cover(driver)
                assert cover and None not in cover.values(), f"{when}, at {width} px: {cover}"
                assert min(cover.values()) >= 0.2, f"{when}, at {width} px: {cover}"
    finally:
        set_width(driver, WIDTHS[0])


# The newest decision's row: its key, policy, reason in words, coefficients (open or not).
NEWEST_DECISION_JS = """
const row = arguments[0] ? document.querySelector(`#decisions tr[data-key="${arguments[0]}"]`)
  : document.querySelector('#decisions tbody tr');
if (!row) return null;
const cell = row.querySelector('td.reason'), details = cell.querySelector('details');
return {key: row.dataset.key, policy: row.cells[3].textContent, open: details.open,
        words: [...cell.children].filter((e) => e !== details).map((e) => e.textContent)
          .join(' '),
        raw: details.querySelector('.raw').textContent};
"""


def check_reason_in_words(driver, base: str) -> None:
    """The newest llhd decision: words without coefficients; its details hold the policy's
    reason and stay open across a poll."""
    row = wait_for("an llhd decision on the page", lambda: (
        r := driver.execute_script(NEWEST_DECISION_JS, None)) and r["policy"] == "llhd" and r,
        driver=driver)
    t, switch, class_id = row["key"].split("|")
    logged = [d for d in requests.get(base + "/decisions?limit=1000", timeout=5).json()[
        "decisions"] if (str(d["t"]), d["switch"], str(d["class_id"])) == (t, switch, class_id)]
    assert [d["reason"] for d in logged] == [row["raw"]]
    assert "gamma" in row["raw"] and "gamma" not in row["words"], row
    assert row["words"].startswith(("all flowlets on path", "flowlets spread")), row
    assert not row["open"]
    driver.execute_script("document.querySelector(`#decisions tr[data-key=\"${arguments[0]}\"] "
                          "summary`).click()", row["key"])
    time.sleep(1.5)  # a poll or more: the rows are drawn again
    again = driver.execute_script(NEWEST_DECISION_JS, row["key"])
    assert again is not None and again["open"], again


def test_dashboard_live_view_and_operator_actions(controller, browser, artifacts):
    """Load, live numbers under traffic, refused writes, policy change, admin down."""
    base, pairs = controller
    driver = browser
    driver.get(base + "/ui")  # the redirect to /ui/
    from mpsched.testing.browser import console_errors, wait_rendered

    wait_rendered(driver)
    assert driver.current_url.endswith("/ui/")
    assert sorted(mbps(driver)) == ["1", "2"]
    rows = driver.find_elements("css selector", "#paths tbody tr")
    assert [r.find_elements("tag name", "td")[1].text for r in rows] == ["10 Mbit/s", "5 Mbit/s"]
    states = driver.execute_script(
        "return [...document.querySelectorAll('#switches tbody tr')]"
        ".map((r) => r.cells[0].textContent + ' ' + r.cells[1].textContent)"
    )
    assert states == ["s1 ready", "s2 ready"]
    assert console_errors(driver) == []

    # live numbers: what s1 places onto each path, from its counters, while frames flow
    traffic = Traffic(pairs[0][1])
    traffic.start()
    try:
        first = wait_for("traffic on both paths", lambda: (m := mbps(driver)) and all(
            v > 0 for v in m.values()) and m)
        second = wait_for("the numbers to change", lambda: (m := mbps(driver)) != first and m)
        assert all(v > 0 for v in second.values()), second
        assert_readable(driver, "under traffic")
    finally:
        traffic.halt.set()
        traffic.join()

    # a write without the token is refused with the API's message
    driver.find_element("css selector", '#paths tbody tr[data-key="2"] button.admin').click()
    wait_for("the 401 message", lambda: "HTTP 401" in message(driver))
    assert requests.get(base + "/paths/2", timeout=5).json()["admin"] == "up"

    driver.find_element("id", "token").send_keys(TOKEN)
    driver.find_element("css selector", "#token-form button").click()
    assert driver.execute_script("return sessionStorage.getItem('mpsched-token')") == TOKEN

    # a bad value is refused, naming the field; nothing changes
    click_apply(driver, 0, "llhd", gap="99999999")
    wait_for("the 400 message", lambda: "HTTP 400" in message(driver))
    assert "policy.flowlet_gap_us" in message(driver)
    assert requests.get(base + "/classes/0/policy", timeout=5).json()["name"] == "ecmp"

    # a policy change made on the page is the controller's
    click_apply(driver, 0, "llhd", gap="300")
    wait_for("the change to be done", lambda: "done" in message(driver), driver=driver)
    policy = requests.get(base + "/classes", timeout=5).json()[0]["policy"]
    assert (policy["name"], policy["flowlet_gap_us"]) == ("llhd", 300)
    wait_for("the class row to show it", lambda: "llhd" in driver.find_element(
        "css selector", '#classes tbody tr[data-key="0"]').text)

    # mode ca (when the program has it): the class row shows the cost the switch computes
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline

    if Pipeline(P4Info.from_file(artifacts.p4info)).has_congestion:
        click_apply(driver, 0, "ca")
        wait_for("the ca placement on the page", lambda: "cost: qdelay" in driver.find_element(
            "css selector", '#classes tbody tr[data-key="0"]').text)
        placement = requests.get(base + "/classes/0", timeout=5).json()["placement"]["s1"]
        assert placement["mode"] == "ca" and placement["ca"]["epsilon_us"] == 2000.0
        assert_readable(driver, "with the ca cost in the classes panel")

    # admin down on the page: the API has it, the page shows the path as down
    driver.find_element("css selector", '#paths tbody tr[data-key="2"] button.admin').click()
    wait_for("path 2 down in the API",
             lambda: requests.get(base + "/paths/2", timeout=5).json()["admin"] == "down")
    wait_for("path 2 down on the page", lambda: topology(driver)["2"]["admin"] == "down")
    assert "admin down" in topology(driver)["2"]["label"]
    row = driver.find_element("css selector", '#paths tbody tr[data-key="2"]')
    assert row.find_elements("tag name", "td")[2].text == "down"

    # the last path down too: done, and the answer's warning (no usable path) is on the page
    driver.find_element("css selector", '#paths tbody tr[data-key="1"] button.admin').click()
    wait_for("the warning", lambda: "no usable path left" in message(driver), driver=driver)
    assert "s1: no usable path left" in message(driver)
    assert driver.find_element("id", "message").get_attribute("class") == "message warn"

    # a weight replaces the default class's policy by wcmp: asked first; declined, nothing
    weight = '#paths tbody tr[data-key="1"] button.set-weight'
    before = requests.get(base + "/classes/0/policy", timeout=5).json()["name"]
    driver.find_element("css selector", weight).click()
    assert "default class run wcmp" in driver.switch_to.alert.text
    driver.switch_to.alert.dismiss()
    assert requests.get(base + "/classes/0/policy", timeout=5).json()["name"] == before != "wcmp"
    driver.find_element("css selector", weight).click()
    driver.switch_to.alert.accept()
    wait_for("wcmp", lambda: requests.get(base + "/classes/0/policy", timeout=5).json()["name"]
             == "wcmp", driver=driver)
    assert_readable(driver, "at the end, a warning shown")
    assert console_errors(driver, allow=REFUSALS) == []


@pytest.fixture
def fed(tmp_path):
    """The controller in-process on one BMv2 (4 paths, llhd; the far edge never answers), its
    telemetry fed as the switches' reports would be, its REST API and page served: the base
    URL."""
    require("root", "simple_switch_grpc")
    from mpsched.bench.ui_feed import N_PATHS, Feeder, start_controller
    from mpsched.controller.northbound.rest import RestApi
    from mpsched.controller.northbound.server import RestServer
    from mpsched.proc.bmv2 import free_port
    from mpsched.proc.cleanup import Registry

    registry = Registry()
    sw, ctl = start_controller(tmp_path, registry)
    feeder = Feeder(ctl, N_PATHS, seed=1)
    server = RestServer(RestApi(ctl), "127.0.0.1", free_port())
    try:
        s1 = next(a for a in ctl.agents if a.sw.name == "s1")
        assert s1.wait_ready(60), s1.status
        feeder.start()
        server.start()
        yield "http://{}:{}".format(*server.address)
    finally:
        feeder.halt.set()
        server.stop()
        ctl.stop()
        sw.stop()
        registry.close()


CHARTS_JS = """
return [...document.querySelectorAll('svg.chart')].map((svg) => ({metric: svg.dataset.metric,
  span: Number(svg.dataset.spanS), unit: svg.dataset.unit,
  title: svg.querySelector('text').textContent}));
"""


def test_charts_fit_their_history_figures_have_units_reasons_are_words(fed, browser):
    from mpsched.testing.browser import console_errors, wait_rendered

    driver = browser
    driver.get(fed + "/ui/")
    wait_rendered(driver)
    time.sleep(12)  # more history than the axis' shortest span, far less than the window
    charts = driver.execute_script(CHARTS_JS)
    assert [c["metric"] for c in charts] == ["goodput_mbps", "srtt_ms", "owd_ms", "loss",
                                             "inflight_bytes"]
    assert all(10 <= c["span"] < 300 for c in charts), charts  # not the 5 min window
    assert [c["unit"] for c in charts][:4] == ["Mbit/s", "ms", "ms", "%"]
    assert charts[4]["unit"] in ("B", "kB", "MB")
    assert all(c["title"].endswith(", " + c["unit"]) for c in charts), charts
    heads = [th.text for th in driver.find_elements("css selector", "#paths thead th")]
    assert {"goodput Mbit/s", "srtt ms", "loss %", "in flight kB"} <= set(heads), heads
    assert_readable(driver, "fed telemetry", charts=True)
    check_reason_in_words(driver, fed)
    assert console_errors(driver) == []
