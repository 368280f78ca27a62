"""Headless Chromium for the dashboard: the browser the UI benchmarks (src/mpsched/bench/ui.py),
the browser tests (tests/integration/test_ui_*.py) and the demos' screenshots use.

Debian's `chromium` driven by its `chromedriver` through Selenium (`BROWSER_PREREQS`).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from mpsched.client.rest import RestClient
from mpsched.proc import prereqs

log = logging.getLogger("mpsched.testing.browser")

BROWSER_PREREQS = ("chromium", "chromedriver", "selenium")


def start_browser(width: int = 1400, height: int = 1000) -> Any:
    """Headless Chromium (Debian's `chromium`, driven by its `chromedriver`) with the page's
    console log kept; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root, in a container
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(
        executable_path=shutil.which("chromedriver") or "chromedriver",
        log_output=subprocess.DEVNULL,
    )
    return webdriver.Chrome(service=service, options=options)


def wait_rendered(driver: Any, timeout: float = 20.0) -> float:
    """Wait for the page's first full render; its time in ms since navigation start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ms = driver.execute_script("return window.mpschedUi && window.mpschedUi.firstRenderMs")
        if ms is not None:
            return float(ms)
        time.sleep(0.02)
    raise TimeoutError(f"the dashboard did not render within {timeout:g} s")


def console_errors(driver: Any, allow: tuple[str, ...] = ()) -> list[str]:
    """The page's console errors since the last call, less those containing an `allow` text."""
    return [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" and not any(a in e["message"] for a in allow)
    ]


# Every panel's HTML element (not inside an SVG) whose content is wider than its box: its text
# is clipped or needs a scroll bar. A pixel of slack for rounding.
CLIPPED_JS = """
return [...document.querySelectorAll('main > section, main > section *')]
  .filter((e) => !(e instanceof SVGElement) && e.offsetParent !== null && e.clientWidth > 0
    && e.scrollWidth > e.clientWidth + 1)
  .map((e) => `${e.closest('section').id} ${e.tagName.toLowerCase()}`
    + `${e.id ? '#' + e.id : ''}${e.className ? '.' + e.className : ''}: `
    + `${e.scrollWidth} > ${e.clientWidth} px (${e.textContent.trim().slice(0, 40)})`);
"""
# Per chart (its metric): the share of its time axis its lines cover, from the leftmost to the
# rightmost point drawn; null for a chart without a point.
CHART_COVER_JS = """
return Object.fromEntries([...document.querySelectorAll('svg.chart')].map((svg) => {
  const axis = svg.querySelector('line.x-axis');
  const x1 = Number(axis.getAttribute('x1')), x2 = Number(axis.getAttribute('x2'));
  const boxes = [...svg.querySelectorAll('path.series:not([data-empty])')].map((p) => p.getBBox());
  if (!boxes.length) return [svg.dataset.metric, null];
  const lo = Math.min(...boxes.map((b) => b.x)), hi = Math.max(...boxes.map((b) => b.x + b.width));
  return [svg.dataset.metric, (hi - lo) / (x2 - x1)];
}));
"""
WIDTHS = (1400, 1024)  # the viewport widths the dashboard must be readable at


def clipped(driver: Any) -> list[str]:
    """The dashboard's panel elements whose text is clipped (scrollWidth > clientWidth)."""
    return list(driver.execute_script(CLIPPED_JS))


def chart_cover(driver: Any) -> dict[str, float | None]:
    """Per chart, the share of its time axis its data covers (None: no data drawn)."""
    return dict(driver.execute_script(CHART_COVER_JS))


def set_width(driver: Any, width: int, settle_s: float = 0.5) -> None:
    """Resize the window to a viewport `width` px wide (its height kept) and let it reflow."""
    size = driver.get_window_size()
    inner = driver.execute_script("return window.innerWidth")
    driver.set_window_size(width + size["width"] - inner, size["height"])
    time.sleep(settle_s)


def shot_path(out: Path, width: int) -> Path:
    """Where the screenshot at `width` goes: `out` at the first of WIDTHS, else `out` with
    the width before its suffix (dashboard.png, dashboard-1024.png)."""
    return out if width == WIDTHS[0] else out.with_name(f"{out.stem}-{width}{out.suffix}")


def save_small_png(driver: Any, out: Path) -> None:
    """The page's screenshot as a PNG of at most 256 colours (a few times smaller than the
    browser's for a page of flat colours; kept as the browser's without Pillow). The octree
    keeps the few pixels of a rare colour (green "up" text) that median cut merges into grey."""
    out.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(out))
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(out) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    small.save(out, optimize=True)


def screenshot(url: str, out: Path, settle_s: float = 3.0) -> None:
    """Screenshots of the dashboard at `url`, once rendered and `settle_s` of live polling
    later, at each of WIDTHS (`shot_path`); what is clipped at a width is logged."""
    driver = start_browser(WIDTHS[0], 1150)
    try:
        driver.get(url)
        wait_rendered(driver)
        time.sleep(settle_s)
        for width in WIDTHS:
            set_width(driver, width)
            for problem in clipped(driver):
                log.warning("dashboard at %d px: clipped: %s", width, problem)
            save_small_png(driver, shot_path(out, width))
    finally:
        driver.quit()


def screenshot_later(rest: RestClient, out: Path, after_s: float) -> threading.Thread | None:
    """A screenshot of the dashboard into `out` `after_s` from now, in a thread (None, and
    logged, when headless Chromium, chromedriver or Selenium are missing)."""
    problems = prereqs.missing(*BROWSER_PREREQS)
    if problems:
        log.info("no dashboard screenshot: %s", "; ".join(problems))
        return None

    def take() -> None:
        time.sleep(after_s)
        try:
            screenshot(f"{rest.base}/ui/", out, settle_s=2.0)
            log.info("dashboard screenshots: %s", ", ".join(
                str(shot_path(out, w)) for w in WIDTHS))
        except Exception as error:  # the demo goes on without it
            log.warning("dashboard screenshot failed: %s", error)

    thread = threading.Thread(target=take, name="screenshot", daemon=True)
    thread.start()
    return thread


def screenshot_path(arg: str | None, default: Path) -> Path | None:
    """Where `--screenshot` puts the dashboard: `default` if not given, nowhere if ''."""
    if arg is None:
        return default
    return Path(arg) if arg else None
