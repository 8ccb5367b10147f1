"""The query-shape registry: it and the template files agree, and every
shape's template, filled with entities, is a gold query of its category."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.evaluation.categories import query_shape
from coqa.kb.names import Term
from coqa.querygen.coverage import expressing_template
from coqa.templates import TemplateError, load_templates
from coqa.resources import QUERIES_DIR
from coqa.shapes import SHAPES, SHAPES_BY_NAME, Shape, template_names

TEMPLATES = load_templates(QUERIES_DIR)


def test_every_template_file_is_registered_and_every_registered_template_exists() -> None:
    assert {path.stem for path in QUERIES_DIR.glob("*.rq")} == template_names()


def _copy_templates(tmp_path: Path) -> Path:
    for path in QUERIES_DIR.glob("*.rq"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def test_a_template_without_a_registry_entry_is_refused(tmp_path: Path) -> None:
    (_copy_templates(tmp_path) / "chain_in_in.rq").write_text("SELECT ?x WHERE { ?y {{p1}} {{e}} . ?x {{p2}} ?y . }")
    with pytest.raises(TemplateError, match="not registered chain_in_in"):
        load_templates(tmp_path)


def test_a_registered_shape_without_its_template_is_refused(tmp_path: Path) -> None:
    (_copy_templates(tmp_path) / "star3_in.rq").unlink()
    with pytest.raises(TemplateError, match="missing star3_in"):
        load_templates(tmp_path)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.name)
def test_a_shape_filled_with_entities_is_a_gold_query_of_its_category_that_coverage_sees(shape: Shape) -> None:
    template = TEMPLATES[shape.name]
    bindings = {name: Term.entity(f"名{name}") for name in template.placeholders}
    sparql = template.render(bindings)
    assert query_shape(sparql) == shape.gold_category
    assert expressing_template(sparql, TEMPLATES) is not None


def test_count_shapes_count_a_registered_shape_and_discovery_templates_exist() -> None:
    for shape in SHAPES:
        assert shape.counts is None or shape.counts in SHAPES_BY_NAME
        assert shape.discovery is None or shape.discovery in TEMPLATES
