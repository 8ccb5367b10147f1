"""The page shows each answer's confidence and marks a low one, in a real
headless Chromium (skipped without Debian's chromium and chromium-driver)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

pytest.importorskip("selenium", reason="the browser tests need selenium: pip install -e '.[browser-test]'")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from coqa.explanation import LOW_CONFIDENCE  # noqa: E402
from coqa.kb.demo import DEMO_QUESTIONS  # noqa: E402
from coqa.testing.chromium import chromium_missing, headless_chromium  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.testing.local_process import clean_environment  # noqa: E402

WAIT = 60
pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


@pytest.fixture(scope="module")
def server(demo_store: str, demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    work = tmp_path_factory.mktemp("confidence-page")
    with coqa_serve(["--store", demo_store, "--model", str(demo_model)], work / "serve.log", env=clean_environment()) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium() as driver:
        yield driver


def test_the_page_shows_the_confidence_and_marks_a_low_one(browser: WebDriver, server: RunningServer) -> None:
    questions = [q for q in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if q.strip()]
    replies = {q: requests.post(server.url + "/answer", json={"question": q}, timeout=WAIT).json() for q in questions}
    answered = [q for q in questions if replies[q]["answers"]]
    low = [q for q in answered if replies[q]["confidence"] < LOW_CONFIDENCE]
    high = [q for q in answered if replies[q]["confidence"] >= LOW_CONFIDENCE]
    assert high, "the demo model is confident of some demo answer"
    browser.get(server.url + "/")
    for question in high[:1] + low[:1]:
        box = browser.find_element(By.ID, "question")
        box.clear()
        box.send_keys(question)
        browser.find_element(By.ID, "ask").click()
        shown = f"confidence {replies[question]['confidence']:.2f}"
        WebDriverWait(browser, WAIT).until(lambda b, shown=shown: b.find_element(By.ID, "confidence").text.startswith(shown))
        element = browser.find_element(By.ID, "confidence")
        is_low = question in low
        assert ("low" in element.get_attribute("class").split()) == is_low
        assert ("likely wrong" in element.text) == is_low
