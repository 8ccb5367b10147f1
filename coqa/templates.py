"""SPARQL templates: the readable `*.rq` files of coqa/queries/, one per query shape.

A template is plain SPARQL with `{{name}}` placeholders. Terms reach a query
only through `sparql_term`, so question text can never break its syntax.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from coqa.kb.names import Term, sparql_name, sparql_string
from coqa.shapes import BATCHED_BY_LOOKUP, template_names

class TemplateError(ValueError):
    """Templates that cannot be used: none found, or not those the shape registry names."""


_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Template:
    """A SPARQL template: `{{name}}` placeholders take terms, `{{limit}}` a number."""

    name: str
    text: str
    # The text split at its placeholders: text, name, text, ..., text (rendering joins them, no regex per query).
    _parts: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_parts", tuple(_PLACEHOLDER.split(self.text)))

    @property
    def placeholders(self) -> list[str]:
        return list(dict.fromkeys(_PLACEHOLDER.findall(self.text)))

    def render(self, bindings: Mapping[str, Term | int | Sequence[Term]]) -> str:
        """The query with every placeholder replaced: a term by `sparql_term`,
        a sequence of terms by their terms joined with spaces, a number as it is."""
        parts = list(self._parts)
        for i in range(1, len(parts), 2):
            value = bindings[parts[i]]
            if isinstance(value, int):
                parts[i] = str(value)
            elif isinstance(value, Term):
                parts[i] = sparql_term(value)
            else:
                parts[i] = " ".join(map(sparql_term, value))
        return "".join(parts)


# Cached: the same entities and predicates are written into query after query.
@lru_cache(maxsize=1 << 16)
def sparql_term(term: Term) -> str:
    """A term as it stands in a query: `<name>` or an escaped string literal."""
    return sparql_string(term.value) if term.is_literal else sparql_name(term.value)


def load_templates(directory: str | Path) -> dict[str, Template]:
    """All `*.rq` templates of a directory, by file stem, comment lines removed;
    TemplateError unless they are exactly the templates coqa.shapes registers."""
    templates: dict[str, Template] = {}
    for path in sorted(Path(directory).glob("*.rq")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
        templates[path.stem] = Template(path.stem, "\n".join(lines).strip())
    if not templates:
        raise TemplateError(f"no query templates (*.rq) in {directory}: the coqa installation is incomplete; reinstall it")
    missing, unregistered = sorted(template_names() - templates.keys()), sorted(templates.keys() - template_names())
    if missing or unregistered:
        raise TemplateError(
            f"query templates in {directory} do not match the shape registry (coqa/shapes.py): "
            f"missing {', '.join(missing) or 'none'}; not registered {', '.join(unregistered) or 'none'}"
        )
    return templates


def template_digest(templates: Mapping[str, Template]) -> str:
    """SHA-256 over the templates' names and texts (comments excluded): a model
    records it, and a model trained with other templates is refused. The
    batched lookups (`coqa.shapes.BATCHED_BY_LOOKUP`) are left out: split per
    node they give the rows of the lookups they batch (tests/integration/
    test_batched_lookups.py), so no candidate depends on them."""
    digest = hashlib.sha256()
    batched = set(BATCHED_BY_LOOKUP.values())
    for name in sorted(templates.keys() - batched):
        digest.update(f"{name}\n{templates[name].text}\n\0".encode("utf-8"))
    return digest.hexdigest()
