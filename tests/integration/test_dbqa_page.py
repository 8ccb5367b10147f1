"""The "Rank sentences" tab of the web page (NLPCC DBQA) in a real headless
Chromium against a real `coqa serve` on 127.0.0.1: the page lists the sentences
in the order POST /dbqa/rank gives for the same input, shows the API's errors
and a server that is down, shows markup in a passage as text, and works from
the keyboard. The passages are written for this test (an invented lake).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

pytest.importorskip("fastapi", reason="coqa serve needs the serve extra: pip install -e '.[serve]'")
pytest.importorskip("selenium", reason="the browser tests need selenium: pip install -e '.[browser-test]'")

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from coqa.serve.dbqa import MAX_PASSAGE  # noqa: E402
from coqa.testing.chromium import chromium_missing, headless_chromium  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.testing.local_process import stop_process  # noqa: E402
from coqa.testing.local_process import clean_environment  # noqa: E402

WAIT = 60
pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

QUESTION = "青湖的面积有多大？"
PASSAGE = (
    "青湖位于云溪市的西北部，是当地最大的淡水湖。"
    "青湖的面积约为42平方公里，平均水深6米！"
    "每年春天，成群的候鸟会飞到湖边栖息。\n"
    "湖边的小镇以出产莲藕闻名；镇上有一座百年石桥。"
)
INJECTION = "<img src=x onerror=window.coqaInjected=1>"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """`coqa serve` with its defaults (DBQA needs no knowledge base)."""
    work = tmp_path_factory.mktemp("dbqa-page")
    with coqa_serve([], work / "serve.log", env=clean_environment(COQA_CACHE_DIR=str(work / "cache"))) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(lang="zh-CN") as driver:
        yield driver


def open_dbqa_tab(browser: WebDriver, url: str) -> None:
    """A fresh page (nothing left from an earlier test) with the DBQA tab selected."""
    browser.get(url + "/")
    WebDriverWait(browser, WAIT).until(EC.element_to_be_clickable((By.ID, "tab-dbqa"))).click()
    WebDriverWait(browser, WAIT).until(EC.visibility_of_element_located((By.ID, "dbqa-question")))


def fill(browser: WebDriver, question: str, passage: str) -> None:
    """Put the texts into the form as they are (send_keys would type line breaks as Enter)."""
    browser.execute_script(
        "arguments[0].value = arguments[1]; arguments[2].value = arguments[3];",
        browser.find_element(By.ID, "dbqa-question"),
        question,
        browser.find_element(By.ID, "dbqa-passage"),
        passage,
    )


def wait_for_ranking(browser: WebDriver) -> list[tuple[int, float, str]]:
    """The ranked rows once the page shows them: (sentence number from 1, score, sentence)."""
    WebDriverWait(browser, WAIT).until(lambda b: "best first" in b.find_element(By.ID, "dbqa-status").text)
    rows = []
    for row in browser.find_elements(By.CSS_SELECTOR, "#dbqa-ranked tbody tr"):
        rank, position, score, sentence = (cell.text for cell in row.find_elements(By.TAG_NAME, "td"))
        assert int(rank) == len(rows) + 1
        rows.append((int(position), float(score), sentence))
    return rows


def wait_for_error(browser: WebDriver) -> str:
    WebDriverWait(browser, WAIT).until(EC.visibility_of_element_located((By.ID, "dbqa-error")))
    return browser.find_element(By.ID, "dbqa-error").text


def api_ranking(server: RunningServer, body: dict) -> list[tuple[int, float, str]]:
    reply = requests.post(server.url + "/dbqa/rank", json=body, timeout=WAIT)
    assert reply.status_code == 200, reply.text
    return [(item["index"] + 1, item["score"], item["sentence"]) for item in reply.json()["ranked"]]


def assert_same_ranking(shown: list[tuple[int, float, str]], expected: list[tuple[int, float, str]]) -> None:
    """The same sentences in the same order at the same places, scores as shown to 3 decimals."""
    assert [(position, sentence) for position, _, sentence in shown] == [(position, sentence) for position, _, sentence in expected]
    for (_, shown_score, _), (_, score, _) in zip(shown, expected):
        assert shown_score == pytest.approx(score, abs=0.0006)


def test_the_page_ranks_the_passage_as_the_api_does(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    open_dbqa_tab(browser, server.url)
    fill(browser, QUESTION, PASSAGE)
    browser.find_element(By.ID, "dbqa-rank").click()
    shown = wait_for_ranking(browser)

    expected = api_ranking(server, {"question": QUESTION, "passage": PASSAGE})
    assert len(expected) == 5  # split after 。！； and at the line break
    assert_same_ranking(shown, expected)
    rows = browser.find_elements(By.CSS_SELECTOR, "#dbqa-ranked tbody tr")
    assert [("best" in (row.get_attribute("class") or "").split()) for row in rows] == [True] + [False] * 4
    assert not browser.find_element(By.ID, "dbqa-error").is_displayed()
    browser.save_screenshot(str(screenshots / "dbqa.png"))


def test_an_oversized_passage_shows_the_error_and_no_stale_ranking(browser: WebDriver, server: RunningServer) -> None:
    open_dbqa_tab(browser, server.url)
    fill(browser, QUESTION, PASSAGE)
    browser.find_element(By.ID, "dbqa-rank").click()
    wait_for_ranking(browser)

    fill(browser, QUESTION, "湖" * (MAX_PASSAGE + 1))
    browser.find_element(By.ID, "dbqa-rank").click()
    message = wait_for_error(browser)
    assert message.startswith("passage:") and str(MAX_PASSAGE) in message
    assert not browser.find_element(By.ID, "dbqa-result").is_displayed()
    assert browser.find_element(By.ID, "dbqa-rank").is_enabled()


@pytest.mark.parametrize(
    "question_js, passage, words",
    [
        ("''", PASSAGE, ["question:", "at least 1 character"]),
        ("'青湖有多大？'", " \n ", ["passage:", "no sentence"]),
        # a lone surrogate: text that is not Unicode reaches the server as JSON escapes, which it refuses
        ("'青湖' + String.fromCharCode(0xD800) + '有多大？'", PASSAGE, ["question:", "valid string"]),
    ],
    ids=["empty-question", "blank-passage", "bad-character"],
)
def test_a_refused_request_shows_the_servers_reason(browser: WebDriver, server: RunningServer, question_js: str, passage: str, words: list[str]) -> None:
    open_dbqa_tab(browser, server.url)
    fill(browser, "", passage)
    browser.execute_script(f"document.getElementById('dbqa-question').value = {question_js};")
    browser.find_element(By.ID, "dbqa-rank").click()
    message = wait_for_error(browser)
    assert all(word in message for word in words), message
    assert not browser.find_element(By.ID, "dbqa-result").is_displayed()


def test_markup_in_a_passage_is_shown_as_text(browser: WebDriver, server: RunningServer) -> None:
    passage = f"青湖的面积约为42平方公里。{INJECTION}湖边有一座小镇。"
    open_dbqa_tab(browser, server.url)
    fill(browser, QUESTION, passage)
    browser.find_element(By.ID, "dbqa-rank").click()
    shown = wait_for_ranking(browser)

    assert f"{INJECTION}湖边有一座小镇。" in [sentence for _, _, sentence in shown]
    assert browser.find_elements(By.CSS_SELECTOR, "#dbqa-ranked img") == []
    assert browser.execute_script("return window.coqaInjected === undefined")


def test_sentences_one_per_line_from_the_keyboard(browser: WebDriver, server: RunningServer) -> None:
    lines = ["青湖很大。湖水清澈见底", "青湖的面积约为42平方公里", "", "湖边的小镇以出产莲藕闻名"]
    open_dbqa_tab(browser, server.url)
    browser.find_element(By.ID, "dbqa-question").send_keys(QUESTION)
    keys = ActionChains(browser)
    keys.send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "dbqa-passage"
    keys.send_keys("\n".join(lines)).send_keys(Keys.TAB).send_keys(Keys.SPACE).perform()  # Enter in the passage is a line break
    assert browser.find_element(By.ID, "dbqa-lines").is_selected()
    keys.send_keys(Keys.TAB).perform()
    assert browser.switch_to.active_element.get_attribute("id") == "dbqa-rank"
    keys.send_keys(Keys.ENTER).perform()
    shown = wait_for_ranking(browser)

    expected = api_ranking(server, {"question": QUESTION, "sentences": [line for line in lines if line]})
    assert len(expected) == 3  # blank lines dropped, no split at 。 inside a line
    assert_same_ranking(shown, expected)


def test_ctrl_enter_in_the_passage_ranks(browser: WebDriver, server: RunningServer) -> None:
    open_dbqa_tab(browser, server.url)
    fill(browser, QUESTION, PASSAGE)
    ActionChains(browser).click(browser.find_element(By.ID, "dbqa-passage")).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()
    assert_same_ranking(wait_for_ranking(browser), api_ranking(server, {"question": QUESTION, "passage": PASSAGE}))


def test_a_server_that_is_down_is_named_as_such(browser: WebDriver, tmp_path: Path) -> None:
    with coqa_serve([], tmp_path / "serve.log", env=clean_environment(COQA_CACHE_DIR=str(tmp_path / "cache"))) as running:
        open_dbqa_tab(browser, running.url)
        fill(browser, QUESTION, PASSAGE)
        stop_process(running.process, WAIT)
        browser.find_element(By.ID, "dbqa-rank").click()
        assert wait_for_error(browser).startswith("cannot reach the coqa server")
        assert not browser.find_element(By.ID, "dbqa-result").is_displayed()


def test_the_ranking_fits_a_phone_screen(browser: WebDriver, server: RunningServer, screenshots: Path) -> None:
    browser.set_window_size(390, 1400)
    try:
        open_dbqa_tab(browser, server.url)
        fill(browser, QUESTION, PASSAGE)
        browser.find_element(By.ID, "dbqa-rank").click()
        assert len(wait_for_ranking(browser)) == 5
        assert browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth") <= 0
        browser.save_screenshot(str(screenshots / "dbqa-phone.png"))
    finally:
        browser.set_window_size(1200, 1800)
