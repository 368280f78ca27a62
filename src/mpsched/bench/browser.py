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

log = logging.getLogger("mpsched.bench.browser")

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


def screenshot(url: str, out: Path, settle_s: float = 3.0) -> None:
    """A screenshot of the dashboard at `url` into `out` (PNG), once rendered and `settle_s`
    of live polling later."""
    driver = start_browser(1400, 1300)
    try:
        driver.get(url)
        wait_rendered(driver)
        time.sleep(settle_s)
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
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
            log.info("dashboard screenshot: %s", out)
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
