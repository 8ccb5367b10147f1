"""The web page of `coqa serve` in a real headless Chromium (Debian's chromium
and chromium-driver, driven by selenium): ask, read the answers and the
explanation, use the SPARQL tab, see errors. Screenshots go to
COQA_SCREENSHOT_DIR, else to `screenshots0/` in pytest's temporary directory
(/tmp/pytest-of-$USER/pytest-current/ after a run).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("fastapi", reason="coqa serve needs the serve extra: pip install -e '.[serve]'")
pytest.importorskip("selenium", reason="the browser tests need selenium: pip install -e '.[browser-test]'")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from coqa.testing.chromium import chromium_missing, headless_chromium  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.testing.local_process import clean_environment  # noqa: E402

WAIT = 60

if reason := chromium_missing():
    pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """`coqa serve` over the shipped demo knowledge base."""
    work = tmp_path_factory.mktemp("serve-browser")
    env = clean_environment(COQA_CACHE_DIR=str(work / "cache"))
    with coqa_serve(["--sparql-timeout", "5"], work / "serve.log", env=env) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(lang="zh-CN") as driver:
        yield driver


def open_page(browser: WebDriver, server: RunningServer) -> None:
    browser.get(server.url + "/")
    WebDriverWait(browser, WAIT).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#examples .example")))


def visible_text(browser: WebDriver, selector: str) -> str:
    WebDriverWait(browser, WAIT).until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))
    return browser.find_element(By.CSS_SELECTOR, selector).text


def wait_for_answer(browser: WebDriver) -> None:
    WebDriverWait(browser, WAIT).until(
        lambda b: b.find_element(By.ID, "result").is_displayed() and not b.find_element(By.ID, "busy").is_displayed()
    )


def test_typing_a_question_shows_answers_and_explanation(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    open_page(browser, server)
    box = browser.find_element(By.ID, "question")
    box.send_keys("周星驰的身高是多少？")
    browser.find_element(By.ID, "ask").click()
    wait_for_answer(browser)

    assert visible_text(browser, "#answers") == "174cm"
    marks = [mark.text for mark in browser.find_elements(By.CSS_SELECTOR, "#mentions mark")]
    assert len(marks) == 1 and marks[0].startswith("周星驰")  # the mark holds the span and its source
    linked = browser.find_elements(By.CSS_SELECTOR, "#linked tbody tr")
    assert "周星驰" in linked[0].text and re.search(r"\b[01]\.\d{3}\b", linked[0].text)  # the link's score is shown
    assert browser.find_element(By.ID, "chosen-sparql").text == "SELECT DISTINCT ?x WHERE { <周星驰> <身高> ?x . }"
    candidates = browser.find_elements(By.CSS_SELECTOR, "#candidates tbody tr")
    assert len(candidates) >= 2 and "one_hop_out" in candidates[0].text and "174cm" in candidates[0].text
    assert "chosen" in candidates[0].get_attribute("class")
    graph_texts = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#query-graph svg text")]
    assert "身高" in graph_texts and "周星驰" in graph_texts and "?x" in graph_texts
    assert browser.find_element(By.CSS_SELECTOR, "#query-graph .node.answer").is_displayed()
    path = screenshots / "answer.png"
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000


def test_an_example_question_is_one_click_away(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    open_page(browser, server)
    example = next(b for b in browser.find_elements(By.CSS_SELECTOR, ".example") if b.text == "徐峥和黄渤共同出演的电影有哪些？")
    example.click()
    wait_for_answer(browser)
    assert browser.find_element(By.ID, "question").get_attribute("value") == "徐峥和黄渤共同出演的电影有哪些？"
    answers = visible_text(browser, "#answers")
    assert "人再囧途之泰囧" in answers
    assert len(browser.find_elements(By.CSS_SELECTOR, "#query-graph svg path.edge")) >= 2
    browser.find_element(By.ID, "query-graph").screenshot(str(screenshots / "example-graph.png"))

    browser.find_element(By.XPATH, "//*[@id='answers']//button[text()='人再囧途之泰囧']").click()  # explore an answer
    WebDriverWait(browser, WAIT).until(lambda b: "rows" in b.find_element(By.ID, "sparql-status").text)
    assert browser.find_element(By.ID, "sparql-query").get_attribute("value") == "SELECT ?p ?o WHERE { <人再囧途之泰囧> ?p ?o . }"
    rows = [tr.text for tr in browser.find_elements(By.CSS_SELECTOR, "#sparql-results tbody tr")]
    assert any("导演" in row for row in rows)


def test_an_empty_question_shows_the_error(browser: WebDriver, server: RunningServer) -> None:
    open_page(browser, server)
    browser.find_element(By.ID, "question").send_keys(Keys.ENTER)
    message = visible_text(browser, "#error")
    assert "question" in message and "at least 1 character" in message
    assert not browser.find_element(By.ID, "result").is_displayed()


def test_sparql_tab_runs_a_query_and_shows_errors(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    open_page(browser, server)
    browser.find_element(By.ID, "tab-sparql").click()
    assert not browser.find_element(By.ID, "panel-ask").is_displayed()
    query = browser.find_element(By.ID, "sparql-query")
    query.clear()
    query.send_keys("SELECT ?p ?o WHERE { <周星驰> ?p ?o . }")
    browser.find_element(By.ID, "sparql-run").click()
    WebDriverWait(browser, WAIT).until(lambda b: "rows" in b.find_element(By.ID, "sparql-status").text)
    header = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#sparql-results thead th")]
    assert header == ["?p", "?o"]
    rows = [tr.text for tr in browser.find_elements(By.CSS_SELECTOR, "#sparql-results tbody tr")]
    assert any("身高" in row and "174cm" in row for row in rows)
    browser.save_screenshot(str(screenshots / "sparql.png"))

    query.clear()
    query.send_keys("ASK { ?s ?p ?o }")
    browser.find_element(By.ID, "sparql-run").click()
    assert "only SELECT" in visible_text(browser, "#sparql-error")


def test_page_fits_a_phone_screen(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    browser.set_window_size(390, 1400)
    try:
        open_page(browser, server)
        browser.find_element(By.ID, "question").send_keys("《我不是药神》是谁导演的？", Keys.ENTER)
        wait_for_answer(browser)
        assert visible_text(browser, "#answers")
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        browser.save_screenshot(str(screenshots / "phone.png"))
    finally:
        browser.set_window_size(1200, 1800)


def test_api_docs_render_without_internet(browser: WebDriver, server: RunningServer) -> None:
    browser.get(server.url + "/docs")
    WebDriverWait(browser, WAIT).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".opblock-summary-path")))
    paths = {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert {"/answer", "/answer/batch", "/sparql", "/health"} <= paths
