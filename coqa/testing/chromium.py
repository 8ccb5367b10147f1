"""Debian's headless Chromium driven by selenium, for the tests of the web page:
why it cannot run here (if it cannot), and a started browser.

The driver is given by path so that Selenium Manager never looks for one on the
network; as root Chromium needs --no-sandbox, and /dev/shm may be small.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from typing import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_LOAD_TIMEOUT = 60


def chromium_missing() -> str | None:
    """Why no browser test can run on this machine, or None when it can."""
    if shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER):
        return None
    return (
        f"no {CHROMIUM} or {CHROMEDRIVER}: install Debian's packages with `apt-get install chromium chromium-driver "
        "fonts-noto-cjk` (.ci/run does)"
    )


@contextmanager
def headless_chromium(width: int = 1200, height: int = 1800, lang: str | None = None) -> Iterator[WebDriver]:
    """A headless Chromium with a window of width x height (and the UI language
    `lang`), quit on exit; a page load taking over PAGE_LOAD_TIMEOUT seconds fails."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    flags = ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"]
    for flag in flags + ([f"--lang={lang}"] if lang else []):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
        yield driver
    finally:
        driver.quit()
