"""The HTML report of the example inventories in a real browser: headless Chromium
(Debian's `chromium` and `chromium-driver`, which .ci/run installs) driven by Selenium.

It checks what a reader gets: no console error, no request but the file itself,
the verdict and the key figures on the first screen, one elevation per rack.
Where Chromium, its driver or Selenium is missing the test is skipped, naming
what is missing. `CHECKER_REGENERATE_GOLDEN=1` also rewrites the screenshot of
the first screen in docs/ (the README links it).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "example-readiness-first-screen.png"
WIDTH, HEIGHT = 1400, 900


def _missing() -> list[str]:
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    return missing


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing:
        pytest.skip(
            f"headless-browser test skipped: {', '.join(missing)} not found "
            "(Debian: apt-get install chromium chromium-driver; .ci/run installs them)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(shutil.which("chromium"))
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(shutil.which("chromedriver"))), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("html") / "readiness.html"
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        main(["report", "inventories", "--as-of", "2027-01-15", "--format", "html", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, 1, None)
    finally:
        os.chdir(cwd)
    browser.get_log("performance")  # what the blank start page did
    browser.get(out.as_uri())
    return browser


def test_no_console_errors(page: Any) -> None:
    errors = [e for e in page.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []


def test_no_request_but_the_file_itself(page: Any) -> None:
    requests = []
    for entry in page.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    assert requests and all(url == page.current_url for url in requests), requests


def test_verdict_and_key_figures_on_the_first_screen(page: Any) -> None:
    from selenium.webdriver.common.by import By

    h1 = page.find_element(By.TAG_NAME, "h1")
    assert h1.text == "Rollout readiness: READY WITH WARNINGS" and h1.is_displayed()
    figures = page.find_element(By.CSS_SELECTOR, "ul.figures")
    risks = page.find_element(By.CSS_SELECTOR, "ol.risks")
    for element in (figures, risks):
        assert element.is_displayed() and element.rect["y"] + element.rect["height"] <= HEIGHT, element.rect
    assert "248" in figures.text and "41" in figures.text  # GPUs, servers
    assert "2027-02-01" in figures.text  # the rollout
    table = page.find_element(By.CSS_SELECTOR, "#summary table")
    assert "220.6 kW" in table.text and "1,516,958 CNY" in table.text and table.rect["y"] < HEIGHT
    if os.environ.get("CHECKER_REGENERATE_GOLDEN"):
        page.execute_script("window.scrollTo(0, 0)")
        page.save_screenshot(str(SCREENSHOT))


def test_one_elevation_per_rack(page: Any) -> None:
    from selenium.webdriver.common.by import By

    elevations = page.find_elements(By.CSS_SELECTOR, "svg.elevation")
    labels = sorted(e.get_attribute("aria-label") for e in elevations)
    assert len(labels) == 13 and len(set(labels)) == 13, labels
    assert all(e.size["height"] > 100 for e in elevations)


def test_it_prints_a_page_per_section(page: Any) -> None:
    import base64

    pdf = base64.b64decode(page.print_page())
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    sections = len(page.find_elements("css selector", "section"))
    assert sections >= 6 and pages >= sections, (pages, sections)


def test_the_readme_shows_the_first_screen() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"]({SCREENSHOT.relative_to(ROOT).as_posix()})" in readme
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG")
