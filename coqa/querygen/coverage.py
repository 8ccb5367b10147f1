"""Which gold queries the templates can express.

A gold query is expressible when the template of some registered query shape
(coqa.shapes) matches it triple for triple: template placeholders take
the gold constants (consistently), template variables map one-to-one onto
gold variables, fixed names such as `<类型>` are equal, the projected
variable corresponds, and COUNT appears in both or neither.
"""

from __future__ import annotations

import re
from itertools import permutations
from typing import Mapping, Sequence

from coqa.gold import parse_query
from coqa.shapes import SHAPES
from coqa.templates import Template


def _pattern(template: Template) -> str:
    """Template text with each `{{name}}` turned into a parseable `<{{name}}>` term."""
    return re.sub(r"\{\{(\w+)\}\}", r"<{{\1}}>", template.text)


def _unify(template_triples: Sequence[tuple[str, ...]], gold: Sequence[tuple[str, ...]], projected: tuple[str, str]) -> bool:
    """True when some order of the gold triples matches the template's, with
    the template's projected variable bound to the gold's (`projected`)."""
    for order in permutations(gold):
        bindings = {projected[0]: projected[1]}
        used = {projected[1]: projected[0]}
        if all(_unify_term(t, g, bindings, used) for pair in zip(template_triples, order) for t, g in zip(*pair)):
            return True
    return False


def _unify_term(template_term: str, gold_term: str, bindings: dict[str, str], used: dict[str, str]) -> bool:
    if template_term.startswith("<{{"):
        if gold_term.startswith("?"):
            return False
    elif template_term.startswith("?"):
        if not gold_term.startswith("?"):
            return False
    else:
        return template_term == gold_term
    if bindings.setdefault(template_term, gold_term) != gold_term:
        return False
    return not gold_term.startswith("?") or used.setdefault(gold_term, template_term) == template_term


def expressing_template(sparql: str, templates: Mapping[str, Template]) -> str | None:
    """The name of the first registered shape whose template expresses the gold query, or None."""
    gold = parse_query(sparql)
    if not gold.triples or gold.answer_variable is None:
        return None
    for shape in SHAPES:
        pattern = parse_query(_pattern(templates[shape.name]))
        if pattern.is_count != gold.is_count or len(pattern.triples) != len(gold.triples):
            continue
        if pattern.answer_variable and _unify(pattern.triples, gold.triples, (pattern.answer_variable, gold.answer_variable)):
            return shape.name
    return None
