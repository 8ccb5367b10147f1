"""The PKU BASE name codec and the rewriting of PKU-BASE-style queries, checked
by round trips and by running rewritten queries on a real pyoxigraph store."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coqa.kb.backends.oxigraph_store import results_from_oxigraph
from coqa.kb.names import (
    NAME_BASE,
    canonical_name,
    gstore_to_name,
    iri_to_name,
    name_to_gstore,
    name_to_iri,
    sparql_name,
    sparql_string,
    to_gstore_sparql,
    to_standard_sparql,
)

XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
QUIRKY_NAMES = ["2008年北京奥运会 ", '"口令蠕虫"病毒', "甲|乙", "A^B", "{x}", "C:\\dir", "100%", "a b", "a<b>c", " 前导空格", "=号"]

_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


@settings(max_examples=500, deadline=None)
@given(_names)
def test_codec_round_trips_any_name(name: str) -> None:
    iri = name_to_iri(name)
    assert iri.startswith(NAME_BASE)
    assert iri_to_name(iri) == canonical_name(name) == name.strip()
    assert name_to_iri(f" {name}\u3000") == iri
    ox.NamedNode(iri)  # a valid IRI, or pyoxigraph raises ValueError


@settings(max_examples=300, deadline=None)
@given(_names)
@example("http://www.w3.org/2001/XMLSchema#integer")
@example(NAME_BASE + "李白")
@example("=号")
def test_sparql_name_always_means_the_name(name: str) -> None:
    assert to_standard_sparql(f"select * where {{ {sparql_name(name)} ?p ?o }}") == (
        f"select * where {{ <{name_to_iri(name)}> ?p ?o }}"
    )


def test_plain_chinese_names_need_no_escaping() -> None:
    assert name_to_iri("李白_（唐朝著名诗人）") == NAME_BASE + "李白_（唐朝著名诗人）"
    assert name_to_iri("2008年北京奥运会 ") == name_to_iri("2008年北京奥运会") == NAME_BASE + "2008年北京奥运会"
    assert name_to_iri("a b") == NAME_BASE + "a%20b"
    assert name_to_iri("100%") == NAME_BASE + "100%25"


def test_foreign_iris_are_not_names() -> None:
    assert iri_to_name("http://example.org/x") is None


def test_sparql_name_falls_back_to_the_absolute_iri_only_when_needed() -> None:
    assert sparql_name("2008年北京奥运会 ") == "<2008年北京奥运会 >"
    for name in ["a<b>c", " 前导空格", "=号", "行\n断"]:
        assert sparql_name(name) == f"<{name_to_iri(name)}>"


def test_rewriting_leaves_strings_comparisons_and_w3c_iris_alone() -> None:
    query = (
        'select ?x where { ?x <简介> ?d . ?x <页数> ?n . '
        f'FILTER(?n < 5 && ?n <= 9 && ?d != "<不是名字>" && ?n = "3"^^<{XSD_INTEGER}>) }}'
    )
    rewritten = to_standard_sparql(query)
    assert f"<{NAME_BASE}简介>" in rewritten and f"<{NAME_BASE}页数>" in rewritten
    assert '"<不是名字>"' in rewritten and f"<{XSD_INTEGER}>" in rewritten
    assert "?n < 5" in rewritten and "?n <= 9" in rewritten
    assert to_standard_sparql(rewritten) == rewritten
    assert to_gstore_sparql(rewritten) == query


@settings(max_examples=500, deadline=None)
@given(_names)
@example("x%20y")
@example("x%%41")
@example("2008年北京奥运会 ")
def test_gstore_form_round_trips_and_holds_nothing_gstore_refuses(name: str) -> None:
    written = name_to_gstore(name)
    assert gstore_to_name(written) == canonical_name(name)
    assert not any(char in written for char in ' <>"{}|^`\\\t\n\r')


def test_gstore_form_keeps_ordinary_names_bare() -> None:
    for name in ["莫妮卡·贝鲁奇", "李白_（唐朝著名诗人）", "100%", "1.3%", "C#", "a&b"]:
        assert name_to_gstore(name) == name
    assert name_to_gstore("2008年北京奥运会 ") == "2008年北京奥运会"
    assert name_to_gstore("Rock and Roll") == "Rock%20and%20Roll"
    assert name_to_gstore("x%20y") == "x%2520y"
    assert to_gstore_sparql("select ?x where { <Rock and Roll> <类型> ?x }") == "select ?x where { <Rock%20and%20Roll> <类型> ?x }"


def test_sparql_string_escapes_everything_that_could_break_a_query() -> None:
    assert sparql_string('他说"好"\\n\t') == '"他说\\"好\\"\\\\n\\t"'


@pytest.fixture()
def quirky_store() -> ox.Store:
    store = ox.Store()
    for index, name in enumerate(QUIRKY_NAMES):
        subject = ox.NamedNode(name_to_iri(name))
        store.add(ox.Quad(subject, ox.NamedNode(name_to_iri("编号")), ox.Literal(str(index), datatype=ox.NamedNode(XSD_INTEGER))))
        store.add(ox.Quad(subject, ox.NamedNode(name_to_iri("简介")), ox.Literal(f'含"引号"与<尖括号>{index}')))
    return store


def run(store: ox.Store, query: str) -> list[str]:
    return sorted(str(term) for term in results_from_oxigraph(store.query(to_standard_sparql(query))).column())


def test_pku_base_style_queries_find_quirky_names(quirky_store: ox.Store) -> None:
    for index, name in enumerate(QUIRKY_NAMES):
        assert run(quirky_store, f"select ?x where {{ {sparql_name(name)} <编号> ?x . }}") == [f'"{index}"']
    expected = sorted(f"<{canonical_name(n)}>" for n in QUIRKY_NAMES[:2])
    assert run(quirky_store, "select ?x where { ?x <编号> ?n . FILTER(?n < 2) }") == expected


def test_literals_with_angle_brackets_in_queries(quirky_store: ox.Store) -> None:
    assert run(quirky_store, 'select ?x where { ?x <简介> "含\\"引号\\"与<尖括号>2" . }') == ["<甲|乙>"]
    assert run(quirky_store, f'select ?x where {{ ?x <编号> "4"^^<{XSD_INTEGER}> . }}') == ["<{x}>"]
