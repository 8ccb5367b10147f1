"""Which gold queries the templates can express.

A gold query is expressible when some candidate template (the non-discovery
files of queries/) matches it triple for triple: template placeholders take
the gold constants (consistently), template variables map one-to-one onto
gold variables, fixed names such as `<类型>` are equal, the projected
variable corresponds, and COUNT appears in both or neither.
"""

from __future__ import annotations

import re
from itertools import permutations
from typing import Mapping, Sequence

from coqa.dataset import gold_triples
from coqa.templates import Template

_SELECTED = re.compile(r"select\s+(?:distinct\s+)?(?:\(\s*count\s*\(\s*(?:distinct\s+)?)?(\?\w+)", re.I)
_COUNT = re.compile(r"\bcount\s*\(", re.I)
DISCOVERY_PREFIXES = ("discover_", "degree", "types")


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
    """The name of a template that expresses the gold query, or None."""
    gold = gold_triples(sparql)
    selected = _SELECTED.search(sparql)
    if not gold or not selected:
        return None
    is_count = bool(_COUNT.search(sparql))
    for name, template in templates.items():
        if name.startswith(DISCOVERY_PREFIXES) or bool(_COUNT.search(template.text)) != is_count:
            continue
        pattern = _pattern(template)
        triples = gold_triples(pattern)
        if len(triples) != len(gold):
            continue
        projected = _SELECTED.search(pattern)
        if projected and _unify(triples, gold, (projected.group(1), selected.group(1))):
            return name
    return None
