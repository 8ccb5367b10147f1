"""The gstore backend against a real gStore 1.2 server (../shared/tools/gstore-1.2),
started on 127.0.0.1 by the fixtures over `coqa export --to gstore` output."""

from __future__ import annotations

import pytest
from conftest import WRITER
from test_backends import QUERIES, QUERY_IDS, comparable

from coqa.kb.backends.gstore import GStore, join_exists
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KBError
from coqa.kb.names import Term, name_to_iri
from coqa.templates import load_templates
from coqa.resources import QUERIES_DIR
from coqa.testing.gstore_server import GStoreServer

E, L = Term.entity, Term.literal

# What gStore 1.2 itself cannot do (docs/backends.md, "gStore"): its SPARQL parser keeps
# the backslash of a string escape, so a literal constant holding a quote
# matches nothing; it has no casts (`xsd:integer(?n)`); its N-Triples parser
# reads a literal holding `"^^<` as a typed literal, so the PKU BASE value
# `198"^^<…#float>` comes back as `198`.
GSTORE_CANNOT_MATCH = {'select ?x where { ?x <别名> "又名\\"雪行\\"" }'}
GSTORE_HAS_NO_CASTS = "Unary operator not supported"


def as_gstore_reads_it(rows: list) -> set:
    """Rows with each malformed typed literal as gStore reads it (its value up to `"^^<`)."""
    return {tuple(term if term is None else term._replace(value=term.value.split('"^^<')[0]) for term in row) for row in rows}


@pytest.fixture
def gstore(gstore_server: GStoreServer) -> GStore:
    kb = GStore(gstore_server.url, gstore_server.db, timeout=10, retries=0, backoff=0)
    yield kb
    kb.close()


def test_every_exported_line_is_stored(gstore_server: GStoreServer, gstore: GStore) -> None:
    assert gstore_server.parse_errors == []
    count = gstore.select("select (count(*) as ?n) where { ?s ?p ?o }").rows[0][0]
    assert int(count.value) == gstore_server.triples_built > 0


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=QUERY_IDS)
def test_gstore_matches_embedded_store(gstore: GStore, embedded_kb: OxigraphStore, query: str, expected: list | None) -> None:
    if query in GSTORE_CANNOT_MATCH:
        assert gstore.select(query).rows == []
    elif "xsd:integer(" in query:
        with pytest.raises(KBError, match=GSTORE_HAS_NO_CASTS):
            gstore.select(query)
    elif query.startswith("select ?s ?p ?o"):
        assert set(gstore.select(query).rows) == as_gstore_reads_it(embedded_kb.select(query).rows)
    else:
        assert comparable(query, gstore.select(query)) == comparable(query, embedded_kb.select(query))


def test_names_gstore_cannot_hold_round_trip(gstore: GStore) -> None:
    """A name with a space (or |, ^, braces, a backslash, quotes) is written
    encoded in the export and in queries, and comes back decoded."""
    assert gstore.select("select ?s where { ?s <举办城市> <云溪市> }").rows == [(E("2030年云溪运动会"),)]
    assert gstore.select("select ?x where { <2030年云溪运动会 > <举办城市> ?x }").rows == [(E("云溪市"),)]
    assert gstore.select("select ?x where { <A^B {C}\\D> <备注> ?x }").rows == [(L("制表\t符"),)]
    assert gstore.select(f"select ?x where {{ <{name_to_iri('甲|乙')}> <组成> ?x }}").rows != []


def test_ask_and_counts(gstore: GStore) -> None:
    assert gstore.select(f"ask {{ <{WRITER}> <代表作品> <雪夜行> }}").boolean is True
    assert gstore.select(f"ask {{ <{WRITER}> <代表作品> <青石志> }}").boolean is False
    assert gstore.select(f"select (count(?x) as ?n) where {{ <{WRITER}> <代表作品> ?x }}").rows == [(L("2"),)]


@pytest.mark.parametrize("name", ["discover_type_out", "discover_type_in"])
def test_typed_discovery_gives_the_embedded_rows(gstore: GStore, embedded_kb: OxigraphStore, name: str) -> None:
    """The typed-discovery templates hold FILTER EXISTS, which gStore 1.2
    refuses (`Unary operator not supported`); sent as a join, their rows are the embedded store's."""
    template = load_templates(QUERIES_DIR)[name]
    query = template.render(
        {"e": E(WRITER) if name.endswith("out") else E("青石出版社"), "t": E("虚构长篇小说"),
         "predicates": [E("代表作品"), E("出生日期"), E("出版社")], "limit": 100}
    )
    expected = set(embedded_kb.select(query).rows)
    assert expected and set(gstore.select(query).rows) == expected


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("select ?x where { <a> <b> ?x . FILTER EXISTS { ?x <类型> <T> } }", "select ?x where { <a> <b> ?x . ?x <类型> <T> . }"),
        ("select ?x where { <a> <b> ?x . filter exists { ?x <类型> \"}\" . } }", "select ?x where { <a> <b> ?x . ?x <类型> \"}\" . }"),
        # a variable bound only inside the group, or more than one pattern: left as it is
        ("select ?x where { <a> <b> ?x . FILTER EXISTS { ?y <类型> <T> } }", None),
        ("select ?x where { <a> <b> ?x . FILTER EXISTS { ?x <类型> <T> . ?x <c> <d> } }", None),
        ("select ?x where { <a> <b> ?x . FILTER NOT EXISTS { ?x <类型> <T> } }", None),
    ],
)
def test_filter_exists_on_one_pattern_is_sent_as_a_join(query: str, sent: str | None) -> None:
    assert join_exists(query) == (sent or query)


def test_check_operation_answers(gstore: GStore) -> None:
    gstore.check()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"password": "nope"}, "answered StatusCode 1001: Username or password is wrong."),
        ({"db": "nodb"}, "answered StatusCode 1005: Database not build yet."),
    ],
)
def test_error_status_is_one_line_with_the_status_message(gstore_server: GStoreServer, change: dict, message: str) -> None:
    settings = {"url": gstore_server.url, "db": gstore_server.db, "retries": 2, "backoff": 0.01} | change
    kb = GStore(**settings)
    with pytest.raises(KBError) as caught:
        kb.select("select ?x where { ?x ?p ?o }")
    assert str(caught.value) == f"the gStore server {gstore_server.url} database {settings['db']} {message}"
    kb.close()


def test_updates_never_reach_the_server(gstore_server: GStoreServer, gstore: GStore) -> None:
    before = gstore.select("select (count(*) as ?n) where { ?s ?p ?o }").rows
    for update in ("DELETE WHERE { ?s ?p ?o }", "insert data { <a> <b> <c> }", "DROP ALL", "CLEAR DEFAULT"):
        with pytest.raises(KBError, match="updates are refused"):
            gstore.select(update)
    assert gstore.select("select (count(*) as ?n) where { ?s ?p ?o }").rows == before


def test_query_text_with_ampersand_and_plus_arrives_intact(gstore: GStore) -> None:
    """POST with a JSON body: `&` and `+` (which the GET form mangles) reach gStore as written."""
    query = 'select ?x where { ?x <誉称> ?y . filter(?y = "千湖之城" && 1 + 1 = 2) }'
    assert gstore.select(query).rows == [(E("云溪市"),)]


@pytest.mark.slow
def test_gstore_loads_every_line_of_the_pkubase_bench_export(bench_gstore: GStoreServer) -> None:
    """`coqa export --to gstore` of pkubase-bench: gbuild stores every exported
    line (90k, names with spaces among them) and reports no parse error."""
    kb = GStore(bench_gstore.url, bench_gstore.db, timeout=30, retries=0)
    written = sum(1 for _ in bench_gstore.nt_file.open(encoding="utf-8"))
    count = kb.select("select (count(*) as ?n) where { ?s ?p ?o }").rows[0][0]
    assert bench_gstore.parse_errors == []
    assert written == bench_gstore.triples_built == int(count.value) > 90_000
    assert kb.select("select ?x where { <2008年北京奥运会 > <口号> ?x. }").rows == [(L("同一个世界，同一个梦想"),)]
    kb.close()
