"""Optional HanLP named-entity recognition for mention detection (`coqa[hanlp]`).

Off by default. HanLP downloads its models on first use; where that cannot
happen (no network, no cached model) `hanlp_spans` raises NERUnavailable
with a message that says so, instead of failing somewhere deep inside.
"""

from __future__ import annotations

from typing import Callable, Iterable

HANLP_MODEL = "MSRA_NER_ELECTRA_SMALL_ZH"


class NERUnavailable(RuntimeError):
    """HanLP or its model is not available on this machine."""


def hanlp_spans(model_name: str = HANLP_MODEL) -> Callable[[str], Iterable[tuple[int, int]]]:
    """A function giving the [start, end) spans of the named entities HanLP finds in a text."""
    try:
        import hanlp  # type: ignore[import-not-found]
    except ImportError:
        raise NERUnavailable("HanLP NER is enabled (hanlp: true) but hanlp is not installed: pip install 'coqa[hanlp]'") from None
    try:
        recognizer = hanlp.load(getattr(hanlp.pretrained.ner, model_name))
    except Exception as error:  # hanlp raises many kinds when its model cannot be fetched
        raise NERUnavailable(
            f"HanLP NER model {model_name} is not available ({type(error).__name__}); it is downloaded on first use, "
            "which needs network access: set hanlp: false or provide the model in HanLP's cache"
        ) from None

    def spans(text: str) -> list[tuple[int, int]]:
        entities = recognizer([list(text)])[0]
        return [(int(start), int(end)) for _, _, start, end in entities]

    return spans
