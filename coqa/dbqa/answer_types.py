"""What a question asks for, and what kinds of answer a sentence holds.

A question gets one type from its question words (the first rule that
matches, in the order of QUESTION_TYPES). A sentence is described by the
kinds of value it holds (years, dates, numbers with units, person, place and
organisation names from jieba's tags); `fits` says whether it holds the kind
the question's type asks for. The rules are written from how Chinese questions
are asked, not from the data files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from coqa.dbqa.text import Segmented

NUMBER = r"(?:\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万亿]+)"
MEASURE_UNITS = (
    "米|公里|千米|厘米|毫米|英里|英尺|海里|平方公里|平方米|平方千米|公顷|亩|立方米|升|毫升|吨|千克|公斤|克|斤|"
    "度|℃|°|瓦|千瓦|伏|赫兹|马力|km|m|cm|kg|mm"
)
TIME_UNITS = "年|个月|月|周|星期|天|日|小时|分钟|分|秒|世纪|岁"
COUNT_UNITS = (
    "个|种|人|名|位|座|部|本|首|集|次|届|只|条|家|所|项|件|颗|枚|场|支|层|级|册|卷|章|篇|国|省|市|县|区|万|亿|%|％"
)
MONEY_UNITS = "元|美元|欧元|英镑|日元|港元|港币|人民币|块"

YEAR = re.compile(r"(?:\d{3,4}|[零〇一二三四五六七八九]{4})\s*年|公元前?\s*\d+|\d{4}\s*[-/.]\s*\d{1,2}")
DATE = re.compile(
    rf"{NUMBER}\s*月\s*{NUMBER}\s*[日号]|\d{{4}}\s*[-/.]\s*\d{{1,2}}\s*[-/.]\s*\d{{1,2}}|[春夏秋冬]季|{NUMBER}\s*世纪|朝|年代"
)
MEASURE = re.compile(rf"{NUMBER}\s*(?:多|余)?\s*(?:{MEASURE_UNITS})")
DURATION = re.compile(rf"{NUMBER}\s*(?:多|余)?\s*(?:{TIME_UNITS})")
COUNT = re.compile(rf"{NUMBER}\s*(?:多|余)?\s*(?:{COUNT_UNITS})")
MONEY = re.compile(rf"{NUMBER}\s*(?:多|余)?\s*(?:{MONEY_UNITS})")
DIGITS = re.compile(r"\d")

PERSON_TAGS = ("nr", "nrt", "nrfg")
PLACE_TAGS = ("ns", "nsf")
ORGANISATION_TAGS = ("nt", "nz")
TIME_TAGS = ("t", "tg")

# (type, pattern over the normalised question), first match wins.
QUESTION_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("why", re.compile(r"为什么|为何|原因|何故|怎么会")),
    ("year", re.compile(r"哪一?年|几几年|什么年代|哪个年代|年份|何年|那一年")),
    ("when", re.compile(r"什么时候|何时|哪一?天|几月|几号|什么时间|哪个时期|日期|什么朝代|哪个朝代|哪一时期|时间是")),
    ("money", re.compile(r"多少钱|价格|票价|售价|费用|造价|多少元|资金")),
    ("how_long", re.compile(r"多长|多久|多高|多远|多大|多重|多深|多宽|多厚|面积|长度|高度|身高|海拔|距离|温度|体重|重量|寿命|周期")),
    ("how_many", re.compile(r"多少|几[个位名种次届部本首家所座条只件项]|几$|几？|有几|人口")),
    ("who", re.compile(r"谁|哪位|哪一位|什么人|哪个人|何人|作者|导演|创始人|主演|演唱|发明者|提出者|创立者|哪些人")),
    ("where", re.compile(r"哪里|哪儿|在哪|什么地方|何处|何地|哪个国家|哪国|哪个城市|哪个省|什么国家|什么省|位置|位于|首都|首府|产地|出生地|发源地|总部")),
    ("which", re.compile(r"哪[个些部家种所款本首位只一]|哪")),
    ("how", re.compile(r"怎么|怎样|如何|方法|步骤")),
    ("yes_no", re.compile(r"吗[？?]?$|是否|是不是|有没有|能不能|可不可以")),
    ("definition", re.compile(r"^.{1,20}(?:是)?(?:什么|啥)[？?]?$|^什么是|的意思|指什么|含义|定义|简介|是指")),
    ("what", re.compile(r"什么|啥|叫")),
)
TYPE_NAMES = tuple(name for name, _ in QUESTION_TYPES) + ("other",)


def question_type(normalised_question: str) -> str:
    """The type of a normalised question (TYPE_NAMES; `other` when no rule matches)."""
    for name, pattern in QUESTION_TYPES:
        if pattern.search(normalised_question):
            return name
    return "other"


@dataclass(frozen=True)
class SentenceValues:
    """Counts of the kinds of value a sentence holds."""

    years: int
    dates: int
    measures: int
    durations: int
    counts: int
    money: int
    digits: int
    persons: int
    places: int
    organisations: int
    times: int


def sentence_values(sentence: Segmented) -> SentenceValues:
    """The kinds of value found in a segmented sentence."""
    text = sentence.text
    tags = sentence.tags
    return SentenceValues(
        years=len(YEAR.findall(text)),
        dates=len(DATE.findall(text)),
        measures=len(MEASURE.findall(text)),
        durations=len(DURATION.findall(text)),
        counts=len(COUNT.findall(text)),
        money=len(MONEY.findall(text)),
        digits=len(DIGITS.findall(text)),
        persons=sum(1 for tag in tags if tag in PERSON_TAGS),
        places=sum(1 for tag in tags if tag in PLACE_TAGS),
        organisations=sum(1 for tag in tags if tag in ORGANISATION_TAGS),
        times=sum(1 for tag in tags if tag in TIME_TAGS),
    )


def fits(kind: str, values: SentenceValues) -> float:
    """1.0 when the sentence holds a value of the kind a question of type
    `kind` asks for, 0.0 when it holds none, 0.5 for the open types (what,
    which, definition, how, why, yes/no, other) that no value kind answers."""
    needed = {
        "year": values.years,
        "when": values.years + values.dates + values.times,
        "money": values.money,
        "how_long": values.measures + values.durations,
        "how_many": values.counts + values.measures + values.digits,
        "who": values.persons,
        "where": values.places,
    }
    if kind not in needed:
        return 0.5
    return 1.0 if needed[kind] else 0.0
