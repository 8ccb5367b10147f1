"""`POST /dbqa/rank` of a real `coqa serve` process on 127.0.0.1 (hand-written passages)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

pytest.importorskip("fastapi", reason="coqa serve needs the serve extra: pip install -e '.[serve]'")

from coqa.serve.dbqa import MAX_SENTENCES  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.testing.local_process import clean_environment  # noqa: E402

TIMEOUT = 60
PASSAGE = "长江是中国第一大河。长江全长约6300公里，流域面积180万平方公里。长江流经青海、西藏、四川等省区。"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    work = tmp_path_factory.mktemp("serve-dbqa")
    env = clean_environment(COQA_CACHE_DIR=str(work / "cache"))
    with coqa_serve([], Path(work) / "serve.log", env=env) as running:
        yield running


def post(server: RunningServer, body: object) -> requests.Response:
    return requests.post(server.url + "/dbqa/rank", json=body, timeout=TIMEOUT)


def test_a_passage_is_split_and_ranked(server):
    reply = post(server, {"question": "长江全长多少公里？", "passage": PASSAGE})
    assert reply.status_code == 200, reply.text
    ranked = reply.json()["ranked"]
    assert sorted(item["index"] for item in ranked) == [0, 1, 2]
    assert ranked[0]["index"] == 1 and ranked[0]["sentence"].startswith("长江全长约6300公里")
    assert ranked[0]["score"] >= ranked[1]["score"] >= ranked[2]["score"]


def test_given_sentences_score_as_the_passage_does(server):
    by_passage = post(server, {"question": "长江全长多少公里？", "passage": PASSAGE}).json()["ranked"]
    sentences = [item["sentence"] for item in sorted(by_passage, key=lambda item: item["index"])]
    by_list = post(server, {"question": "长江全长多少公里？", "sentences": sentences}).json()["ranked"]
    assert by_list == by_passage


@pytest.mark.parametrize(
    "body, words",
    [
        ({"question": "长江有多长？"}, "either passage"),
        ({"question": "长江有多长？", "passage": "长江。", "sentences": ["长江。"]}, "either passage"),
        ({"question": "  ", "passage": "长江。"}, "must not be blank"),
        ({"question": "长江有多长？", "passage": " \n "}, "no sentence"),
        ({"question": "长江有多长？", "sentences": []}, "no sentence"),
        ({"question": "长江有多长？", "passage": "长江。" * (MAX_SENTENCES + 1)}, "more than the"),
        ({"question": "长江有多长？", "passage": "长" * 20_001}, "passage"),
        ({"question": "长江有多长？", "passage": "长江。", "top": 3}, "top"),
    ],
)
def test_bad_requests_get_a_one_line_422(server, body, words):
    reply = post(server, body)
    assert reply.status_code == 422
    message = reply.json()["error"]
    assert words in message and "\n" not in message
