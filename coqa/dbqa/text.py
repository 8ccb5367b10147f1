"""Normalising and segmenting the text of questions and sentences.

Words come from jieba's tokenizer over its shipped dictionary (no HMM:
faster, and new words are left as single characters, which the character
features still see), tagged with the part of speech its dictionary gives the
word (what jieba.posseg does without HMM, at a third less time: posseg's own
loop re-splits every word). jieba downloads nothing: its dictionary is in
the package; on first use it writes a cache of it into the temporary directory.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import jieba
import jieba.posseg

# Characters longer than this are cut before features are computed: the
# longest common substring costs the product of the two lengths.
MAX_CHARS = 1000

# The words that stand where the answer would: the slot a question asks to fill.
INTERROGATIVES = frozenset(
    "什么 什么样 啥 谁 哪 哪里 哪儿 哪个 哪些 哪一 哪位 哪年 哪一年 哪天 哪家 哪部 哪种 哪国 何 何时 何地 "
    "为何 为什么 怎么 怎样 如何 多少 几 几个 多久 多长 多大 多高 多远 多重".split()
)
# Words that say how a question is asked, not what it is about: a sentence need not contain them.
QUESTION_WORDS = INTERROGATIVES | frozenset(
    "吗 呢 么 是 的 了 在 有 被 由 和 与 及 之 于 请问 叫 叫做 称为 是否 属于 位于 一个 年 月 日 多 怎么样".split()
)
# Characters skipped by the character features: punctuation, spaces and the most common function characters.
FUNCTION_CHARS = frozenset("的了是在和与及之于吗呢么啊吧也都就而")


@dataclass(frozen=True)
class Segmented:
    """A text normalised (`text`), its content characters in order (`chars`:
    no punctuation, space or function character), its words with their
    part-of-speech tags (`words`, `tags`: jieba's tag set; `x` for punctuation,
    `m` for digits, `eng` for other Latin text, `un` for words jieba does not
    know) and its content words (`content_words`: no punctuation, no question
    or function words)."""

    text: str
    chars: str
    words: tuple[str, ...]
    tags: tuple[str, ...]
    content_words: tuple[str, ...]


_tokenizer_lock = threading.Lock()


@lru_cache(maxsize=1)
def _tokenizer() -> tuple[jieba.Tokenizer, dict[str, str]]:
    """jieba's tokenizer, initialised once (about 1 s) without its progress
    log, and its dictionary's part-of-speech tag of each word."""
    with _tokenizer_lock:
        jieba.setLogLevel(logging.WARNING)
        words = jieba.Tokenizer()
        words.initialize()
        return words, jieba.posseg.POSTokenizer(words).word_tag_tab


def _tag(word: str, tags: dict[str, str]) -> str:
    known = tags.get(word)
    if known:
        return known
    if not any(char.isalnum() for char in word):
        return "x"
    if word.isascii():
        return "m" if word.isdigit() else "eng"
    return "un"


def normalise(text: str) -> str:
    """NFKC (full-width letters, digits and punctuation to half width), lower
    case, runs of white space as one space, cut to MAX_CHARS."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())[:MAX_CHARS]


NOT_CONTENT = re.compile(r"[\W_" + "".join(sorted(FUNCTION_CHARS)) + "]")


def content_chars(text: str) -> str:
    """The letters, digits and CJK characters of `text` other than FUNCTION_CHARS, in order."""
    return NOT_CONTENT.sub("", text)


def segment(text: str) -> Segmented:
    """The normalised text, its content characters and its tagged words."""
    normal = normalise(text)
    tokenizer, known_tags = _tokenizer()
    words = tuple(word for word in tokenizer.lcut(normal, HMM=False) if word.strip())
    tags = tuple(_tag(word, known_tags) for word in words)
    content = tuple(word for word, tag in zip(words, tags) if tag != "x" and word not in QUESTION_WORDS)
    return Segmented(normal, content_chars(normal), words, tags, content)


def ngrams(text: str, n: int) -> list[str]:
    """The character n-grams of `text`, in order, repeats kept."""
    return [text[i : i + n] for i in range(len(text) - n + 1)]


SENTENCE_END = re.compile(r"(?<=[。！？!?；;…])\s*|\n+")


def split_sentences(passage: str) -> list[str]:
    """The sentences of a passage: cut after 。！？!?；; and … and at line
    breaks, surrounding space trimmed, empty pieces dropped (a closing quote or
    bracket after the end mark starts the next piece, a known limit)."""
    return [piece.strip() for piece in SENTENCE_END.split(passage) if piece.strip()]
