"""Answer-type cues of a question: which kind of answer its wording asks for.

Interrogative words of Chinese questions, grouped by the kind of answer they
ask for; the ranker and the linker combine them with answer and entity
properties (is it a person, a place, a number, a date?).
"""

from __future__ import annotations

import functools
import re

from coqa.kb.surfaces import qualifier

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

# The cues whose wording asks rather than names (哪些, 什么, 谁): rare inside a
# name, common in a span of a question that ran from a name over them.
ASKING_CUES = ("who", "what", "which_many")

# Wording that asks rather than names a relation: interrogatives and function
# characters. What a question says besides these and its linked mentions is
# what the predicates of a query must explain.
_ASKING = re.compile(
    r"请问|是不是|是否|什么|哪里|哪儿|哪些|哪[一个位部种家年天]|多少|几|谁|啥|何[时处地]|怎么|如何|"
    r"是|的|了|呢|吗|啊|呀|有|在|和|与|及|叫|称|为|由|被|其|这|那|也"
)
_PUNCTUATION = set("？?，,。.、！!：:；;“”\"'《》「」（）() |")
PLURAL = re.compile(r"哪些|都有|都是|分别|有哪|几个|多少个|们")
SINGULAR = re.compile(r"哪一|哪个|哪位|谁|是什么|叫什么")
_DATE = re.compile(r"^\d{3,4}年|^\d{4}[-./]\d{1,2}|\d{1,2}月\d{1,2}日|^\d{4}$")
_PLACE_NAME = re.compile(r"(市|省|县|区|州|国|镇|村|乡|岛|山|河|湖|江|海|街|路|洲)$")
_PLACE_KIND = re.compile(r"首都|省会|首府|城市|省份|国家|地区")
_PERSON_NAME = re.compile(r"（[^（）]*(人物|演员|歌手|导演|作家|运动员|政治家|科学家|教授|主持人|画家|诗人|皇帝|学者|球员|作曲家|艺术家|企业家|编剧|模特)[^（）]*）$")

_NUMBER = re.compile(r"^[\d.,\-:：年月日%万亿千百米公里元岁]+$")


# What a question asks for by class: the words right after 哪个, 哪所, 哪些,
# 什么 (哪所学院, 什么菜系, 哪国人), cut at a function character; a right
# answer's name or description often holds them (云溪学院, 酸辣面_（川菜）).
_CLASS_ASKING = re.compile(r"哪一?[些个所部位家种座条首本只支张届款间门项名]?|什么|啥")
_CLASS_END = set("的是之中里儿在有呢吗了和与及呀啊被") | _PUNCTUATION
_CLASS_LENGTH = 4


@functools.lru_cache(maxsize=256)
def asked_classes(text: str) -> tuple[str, ...]:
    """The words after each asking word of `text` that name the class of
    thing it asks for (up to four characters, to the next function
    character): `("学院",)` for 李明任教于哪所学院, `()` for 谁写了这本书."""
    found = []
    for match in _CLASS_ASKING.finditer(text):
        words = ""
        for ch in text[match.end() : match.end() + _CLASS_LENGTH]:
            if ch in _CLASS_END or _CLASS_ASKING.match(ch):
                break
            words += ch
        if words:
            found.append(words)
    return tuple(found)


def question_cues(text: str) -> dict[str, float]:
    """1.0 for each cue whose wording occurs in the question, else 0.0."""
    return {f"cue_{name}": float(bool(pattern.search(text))) for name, pattern in CUES.items()}


def looks_numeric(value: str) -> bool:
    """True for literal values made of digits and units (dates, amounts, heights)."""
    return bool(_NUMBER.match(value.strip())) and any(ch.isdigit() for ch in value)


@functools.lru_cache(maxsize=256)
def content_mask(text: str) -> tuple[bool, ...]:
    """Per character of `text`: True when it is content (not asking wording,
    function characters, punctuation, nor a removed span written as `|`)."""
    mask = [ch not in _PUNCTUATION for ch in text]
    for match in _ASKING.finditer(text):
        for i in range(match.start(), match.end()):
            mask[i] = False
    return tuple(mask)


def looks_like_date(value: str) -> bool:
    """True for literal values that read as a date or a year."""
    return bool(_DATE.search(value.strip()))


def looks_like_place(name: str) -> bool:
    """True for entity names ending like a place name (市, 省, 山, 河, ...),
    or whose `_（…）` description does (辽宁省辖市) or names a kind of place
    (北京_（中华人民共和国首都）, 河南_（中国中部地区省份之一）)."""
    description = qualifier(name)
    return bool(_PLACE_NAME.search(name.split("_")[0]) or _PLACE_NAME.search(description) or _PLACE_KIND.search(description))


def looks_like_person(name: str) -> bool:
    """True for entity names whose disambiguation says it is a person."""
    return bool(_PERSON_NAME.search(name))
