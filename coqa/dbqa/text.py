"""Normalising and segmenting the text of questions and sentences.

Words come from jieba's part-of-speech tokenizer over its shipped dictionary
(no HMM: faster, and new words are left as single characters, which the
character features still see). jieba downloads nothing: its dictionary is in
the package; on first use it writes a cache of it into the temporary directory.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import jieba
import jieba.posseg

# Characters longer than this are cut before features are computed: the
# longest common substring costs the product of the two lengths.
MAX_CHARS = 1000

# Words that say how a question is asked, not what it is about: a sentence need not contain them.
QUESTION_WORDS = frozenset(
    "什么 什么样 啥 谁 哪 哪里 哪儿 哪个 哪些 哪一 哪位 哪年 哪一年 哪天 哪家 哪部 哪种 哪国 何 何时 何地 "
    "为何 为什么 怎么 怎样 怎么样 如何 多少 几 几个 多 多久 多长 多大 多高 多远 多重 吗 呢 么 是 的 了 "
    "在 有 被 由 和 与 及 之 于 请问 叫 叫做 称为 是否 属于 位于 一个 年 月 日".split()
)
# Characters skipped by the character features: punctuation, spaces and the most common function characters.
FUNCTION_CHARS = frozenset("的了是在和与及之于吗呢么啊吧也都就而")


@dataclass(frozen=True)
class Segmented:
    """A text normalised (`text`), its content characters in order (`chars`:
    no punctuation, space or function character) and its words with jieba's
    part-of-speech tags (`words`, `tags`)."""

    text: str
    chars: str
    words: tuple[str, ...]
    tags: tuple[str, ...]

    @property
    def content_words(self) -> tuple[str, ...]:
        """The words that carry content: no punctuation, no question or function words."""
        return tuple(
            word for word, tag in zip(self.words, self.tags) if tag != "x" and word not in QUESTION_WORDS and word.strip()
        )


_tokenizer_lock = threading.Lock()


@lru_cache(maxsize=1)
def _tokenizer() -> jieba.posseg.POSTokenizer:
    """jieba's part-of-speech tokenizer, initialised once (about 1 s) without its progress log."""
    with _tokenizer_lock:
        jieba.setLogLevel(logging.WARNING)
        words = jieba.Tokenizer()
        words.initialize()
        return jieba.posseg.POSTokenizer(words)


def normalise(text: str) -> str:
    """NFKC (full-width letters, digits and punctuation to half width), lower
    case, runs of white space as one space, cut to MAX_CHARS."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())[:MAX_CHARS]


def is_content_char(char: str) -> bool:
    """Letters, digits and CJK characters other than FUNCTION_CHARS."""
    return char.isalnum() and char not in FUNCTION_CHARS


def segment(text: str) -> Segmented:
    """The normalised text, its content characters and its tagged words."""
    normal = normalise(text)
    pairs = _tokenizer().lcut(normal, HMM=False)
    words = tuple(pair.word for pair in pairs if pair.word.strip())
    tags = tuple(pair.flag for pair in pairs if pair.word.strip())
    return Segmented(normal, "".join(c for c in normal if is_content_char(c)), words, tags)


def ngrams(text: str, n: int) -> list[str]:
    """The character n-grams of `text`, in order, repeats kept."""
    return [text[i : i + n] for i in range(len(text) - n + 1)]
