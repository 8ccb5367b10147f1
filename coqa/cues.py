"""Answer-type cues of a question: which kind of answer its wording asks for.

Interrogative words of Chinese questions, grouped by the kind of answer they
ask for; the ranker and the linker combine them with answer and entity
properties (is it a person, a place, a number, a date?).
"""

from __future__ import annotations

import re

CUES: dict[str, re.Pattern[str]] = {
    "who": re.compile(r"谁|哪位|哪个人|什么人|哪一位"),
    "where": re.compile(r"哪里|哪儿|什么地方|哪个城市|哪个国家|哪个省|在哪|何处|何地|位于"),
    "when": re.compile(r"什么时候|何时|哪一年|哪年|哪天|几月|时间|日期|年份|多少年"),
    "count": re.compile(r"多少个|(?<!哪)几[个部位家种次座]|多少[部种次位家座]|(?<!哪)有几|有多少"),
    "quantity": re.compile(r"多少|几|多高|多长|多大|多重|多远|多久|多深|面积|人口|海拔|身高|价格|票价"),
    "which_many": re.compile(r"哪些|有什么|都有|包括"),
    "what": re.compile(r"什么|啥|哪个|哪部|哪种|哪一"),
    "yes_no": re.compile(r"是不是|是否|吗[？?]?$"),
    "relation": re.compile(r"什么关系|关系是|是.{0,4}的什么"),
}

_NUMBER = re.compile(r"^[\d.,\-:：年月日%万亿千百米公里元岁]+$")


def question_cues(text: str) -> dict[str, float]:
    """1.0 for each cue whose wording occurs in the question, else 0.0."""
    return {f"cue_{name}": float(bool(pattern.search(text))) for name, pattern in CUES.items()}


def looks_numeric(value: str) -> bool:
    """True for literal values made of digits and units (dates, amounts, heights)."""
    return bool(_NUMBER.match(value.strip())) and any(ch.isdigit() for ch in value)
