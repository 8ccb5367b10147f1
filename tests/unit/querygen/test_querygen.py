"""Query templates: they load, render any term safely, and express the shapes
of the CCKS gold queries."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

import pytest

from coqa.config import default_settings
from coqa.dataset import read_ccks
from coqa.edges import IN_READ_WHOLE, OUT_READ_WHOLE
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KnowledgeBase
from coqa.kb.loading.loader import load_kb
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.linking.linker import LinkedNode
from coqa.querygen.candidate import Candidate, CapCut
from coqa.querygen.coverage import expressing_template
from coqa.querygen.generator import QueryGenerator
from coqa.querygen.relevance import most_relevant, node_relevance
from coqa.templates import load_templates
from coqa.resources import QUERIES_DIR

TRAIN = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "pkubase-bench" / "train.txt"
TEMPLATES = load_templates(QUERIES_DIR)


def test_every_template_renders_with_terms_for_its_placeholders() -> None:
    for name, template in TEMPLATES.items():
        bindings = {key: (5 if key == "limit" else [Term.entity("甲")] if key in ("entities", "predicates") else Term.entity(f"名{key}")) for key in template.placeholders}
        query = template.render(bindings)
        assert "{{" not in query and query.upper().startswith("SELECT"), name


def test_a_literal_slot_is_escaped() -> None:
    query = TEMPLATES["one_hop_in"].render({"e": Term.literal('a"} ?s ?p ?o {'), "p": Term.entity("别名")})
    assert query == 'SELECT DISTINCT ?x WHERE { ?x <别名> "a\\"} ?s ?p ?o {" . }'


@pytest.mark.parametrize(
    ("sparql", "expected"),
    [
        ("select ?x where { <甲> <作者> ?x. }", "one_hop_out"),
        ("select ?x where { ?x <作者> <甲> }", "one_hop_in"),
        ("select ?y where { <甲> <作者> ?x. ?x <国籍> ?y. }", "chain_out_out"),
        ("select ?x where { ?x <主演> <甲>. ?x <主演> <乙>. }", "star_in_in"),
        ('select ?x where { ?x <誉称> "万岛之国". }', "one_hop_in"),
        ("select ?x where { <甲> ?x <乙>. }", "predicate"),
        ("select ?x where { <甲> <导演> ?x. ?x <类型> <电影>. }", ("star_out_in", "type_out")),
        ("select (count(?x) as ?n) where { ?x <城市> <甲>. }", "count_in"),
        ("select ?x where { <甲> <城市> <乙>. <甲> <地址> ?x. }", "one_hop_out_checked"),
        ('select ?x where { ?y <生日> "1990". ?y <籍贯> <乙>. ?y <民族> ?x. }', "star_in_in_out"),
        ("select ?x where { ?x <a> ?y. ?y <b> ?z. ?z <c> <甲>. }", None),
    ],
)
def test_expressing_template(sparql: str, expected: str | tuple[str, ...] | None) -> None:
    found = expressing_template(sparql, TEMPLATES)
    assert found in expected if isinstance(expected, tuple) else found == expected


@pytest.mark.skipif(not TRAIN.exists(), reason="pkubase-bench not beside the repository")
def test_templates_express_at_least_95_percent_of_train_gold_queries() -> None:
    questions = read_ccks(TRAIN)
    expressible = sum(expressing_template(q.sparql, TEMPLATES) is not None for q in questions)
    assert expressible / len(questions) >= 0.95


# --- query generation around a hub: relevance before expansion, caps recorded ---

HUB_EDGES = 300  # more predicates than a small predicates_per_direction keeps


def _loaded_store(factory: pytest.TempPathFactory, name: str, lines: list[str], mention: str) -> Iterator[KnowledgeBase]:
    """The triple `lines` and one mention of the entity `mention`, loaded with
    `coqa load` into a real store that is closed after use."""
    data = factory.mktemp(f"{name}-data")
    (data / "pkubase-triples.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "pkubase-mention2ent.txt").write_text(f"{mention}\t{mention}\t1\n", encoding="utf-8")
    store = factory.mktemp(f"{name}-store") / "s"
    load_kb([data], store, progress=False)
    kb = OxigraphStore(store / STORE_SUBDIR)
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def hub_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where <枢纽> has one edge the question asks about among
    HUB_EDGES others, each by its own predicate, a typed neighbour, and 8 members."""
    lines = ["<枢纽>\t<首都>\t<京城> .", "<京城>\t<类型>\t<城市> .", "<京城>\t<人口>\t\"2000万\" ."]
    lines += [f"<枢纽>\t<关系{i}>\t<邻居{i}> ." for i in range(HUB_EDGES)]
    lines += [f"<邻居{i}>\t<人口>\t<远端{i}> ." for i in range(HUB_EDGES)]
    lines += [f"<枢纽>\t<成员>\t<成员{i}> ." for i in range(8)]
    yield from _loaded_store(tmp_path_factory, "hub", lines, "枢纽")


def _generate(kb: KnowledgeBase, question: str, **limits: int) -> tuple[list[Candidate], list[CapCut]]:
    generator = QueryGenerator(kb, TEMPLATES, replace(default_settings().query_generation, **limits))
    hub = LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")
    return generator.generate_recorded([hub], question)


def test_relevance_is_the_share_of_predicate_characters_spelled_out_beside_the_mention() -> None:
    beside_hub = node_relevance("枢纽的首都是哪里", "枢纽", None)
    assert beside_hub("首都", True) == 1.0
    assert beside_hub("关系1", True) == 0.0
    spelled = node_relevance("枢纽的首都", "枢纽", None)
    assert most_relevant({"关系1": 1, "首都": 1, "人口": 9}, lambda p: spelled(p, True), 2) == ["首都", "关系1"]


def test_relevance_reads_the_predicate_name_as_the_question_is_normalized() -> None:
    # The question reaches query generation normalized (lower case, half width); so must the name.
    score = node_relevance("枢纽的roe是多少?", "枢纽", None)
    assert score("ROE", True) == 1.0
    assert score("ＲＯＥ", True) == 1.0
    assert most_relevant({"ceo": 1, "ROE": 1, "人口": 9}, lambda p: score(p, True), 1) == ["ROE"]


def test_a_learned_association_finds_a_predicate_the_question_does_not_spell() -> None:
    def association(text: str) -> Callable[[str, bool | None], float]:
        assert text == " 在哪"
        return lambda predicate, outward: 0.6 if predicate == "所属地区" and outward is True else 0.0

    score = node_relevance("枢纽在哪", "枢纽", association)
    assert most_relevant({"关系1": 1, "所属地区": 5, "人口": 9}, lambda p: score(p, True), 1) == ["所属地区"]


def test_chain_pairs_keeps_the_most_relevant_predicate_pairs(hub_kb: KnowledgeBase) -> None:
    candidates, cuts = _generate(hub_kb, "枢纽的首都的人口", predicates_per_direction=400, chain_predicates=20, chain_pairs=1)
    assert [c.predicates for c in candidates if c.shape.name == "chain_out_out"] == [("首都", "人口")]
    assert [(c.kept, c.found) for c in cuts if c.setting == "chain_pairs" and "chain_out_out" in c.where] == [(1, 20)]  # 20 first hops; 首都's second hops: 人口 (类型 is none)


def test_no_chain_ends_by_reading_the_type_of_its_middle_node(hub_kb: KnowledgeBase) -> None:
    """<枢纽> <首都> ?y . ?y <类型> ?x would answer 城市: the type predicate is no hop of a chain."""
    candidates, _ = _generate(hub_kb, "枢纽的首都是什么", predicates_per_direction=400, chain_predicates=20)
    chains = {c.predicates for c in candidates if c.shape.name == "chain_out_out"}
    assert ("首都", "人口") in chains and ("首都", "类型") not in chains


def test_a_fact_checked_query_does_not_ask_the_type_of_its_node(hub_kb: KnowledgeBase) -> None:
    """<京城> <类型> ?x . <枢纽> <首都> <京城> would answer 城市 to a question about its population."""
    settings = replace(default_settings().query_generation, predicates_per_direction=400, max_candidates=5000)
    generator = QueryGenerator(hub_kb, TEMPLATES, settings)
    hub = LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")
    capital = LinkedNode(Term.entity("京城"), 0.8, 5, 7, "京城")
    candidates, _ = generator.generate_recorded([hub, capital], "枢纽的首都京城的人口")
    checked = {c.predicates for c in candidates if c.shape.name == "one_hop_out_checked_in"}
    assert checked == {("人口", "首都")}


@pytest.fixture(scope="module")
def typed_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where the subject of a fact has a type of its own."""
    lines = ["<北国>\t<首都>\t<雪城> .", "<北国>\t<类型>\t<国家> .", "<北国>\t<人口>\t\"900万\" .", "<雪城>\t<人口>\t\"80万\" ."]
    yield from _loaded_store(tmp_path_factory, "typed", lines, "北国")


def test_a_fact_checked_query_does_not_ask_the_type_of_the_facts_subject(typed_kb: KnowledgeBase) -> None:
    """<北国> <类型> ?x . <北国> <首都> <雪城> would answer 国家 to a question about its population."""
    generator = QueryGenerator(typed_kb, TEMPLATES, default_settings().query_generation)
    country = LinkedNode(Term.entity("北国"), 0.9, 0, 2, "北国")
    capital = LinkedNode(Term.entity("雪城"), 0.8, 5, 7, "雪城")
    candidates, _ = generator.generate_recorded([country, capital], "北国的首都雪城的人口")
    checked = {c.predicates for c in candidates if c.shape.name == "one_hop_out_checked"}
    assert checked == {("人口", "首都")}


def test_the_asked_predicate_of_a_hub_is_expanded_and_the_cut_recorded(hub_kb: KnowledgeBase) -> None:
    candidates, cuts = _generate(hub_kb, "枢纽的首都是哪里", predicates_per_direction=10)
    one_hop = {c.predicates[0] for c in candidates if c.shape.name == "one_hop_out"}
    assert "首都" in one_hop and len(one_hop) == 10
    assert CapCut("predicates_per_direction", "<枢纽> out", 10, HUB_EDGES + 2)  # + 首都, 成员 in cuts
    chains = {c.predicates for c in candidates if c.shape.name == "chain_out_out"}
    assert ("首都", "人口") in chains


def test_a_predicate_with_more_than_answers_per_predicate_keeps_the_store_count_only(hub_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(hub_kb, TEMPLATES, replace(default_settings().query_generation, answers_per_predicate=5, predicates_per_direction=400))
    hub = LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")
    candidates, cuts = generator.generate_recorded([hub], "枢纽有多少成员", count_question=True)
    members = {c.shape.name: c for c in candidates if c.predicates == ("成员",)}
    assert members["one_hop_out"].answers == () and members["one_hop_out"].answer_count == 8
    assert members["count_out"].answers == (Term.literal("8"),)
    assert CapCut("answers_per_predicate", "<枢纽> out 成员", 0, 8) in cuts
    capital = [c for c in candidates if c.predicates == ("首都",) and c.shape.name == "one_hop_out"]
    assert capital[0].answers == (Term.entity("京城"),)



def test_only_one_hop_candidates_with_all_their_answers_read_are_exact(hub_kb: KnowledgeBase) -> None:
    """An exact candidate's answers are its query's, so the pipeline need not send it."""
    generator = QueryGenerator(hub_kb, TEMPLATES, replace(default_settings().query_generation, answers_per_predicate=5, predicates_per_direction=400))
    candidates = generator.generate([LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")], "枢纽有多少成员", count_question=True)
    exact = [c for c in candidates if c.exact]
    assert {c.shape.name for c in exact} == {"one_hop_out"} and len(exact) > HUB_EDGES  # <枢纽> has no edge in
    for candidate in exact:
        assert candidate.answers == tuple(sorted(hub_kb.select(candidate.sparql(TEMPLATES)).column(0)))
    assert [c.exact for c in candidates if c.predicates == ("成员",)] == [False, False]  # one hop past the cap; its count

def test_chain_rows_fetch_the_first_hops_whose_counted_paths_fit(hub_kb: KnowledgeBase) -> None:
    candidates, cuts = _generate(hub_kb, "枢纽的首都的人口", predicates_per_direction=400, chain_rows={"chain_out_out": 3, "chain_in_out": 1, "chain_out_in": 1})
    chains = {c.predicates: c.answers for c in candidates if c.shape.name == "chain_out_out"}
    assert chains[("首都", "人口")] == (Term.literal("2000万"),)
    # 首都 (2 paths fetched, through 人口 and 类型, which is no chain's hop) first, then one 关系 predicate (1 path)
    assert set(chains) == {("首都", "人口"), ("关系0", "人口")}
    cut = [c for c in cuts if c.setting == "chain_rows.chain_out_out"]
    assert cut and cut[0].kept == 2


def test_typed_discovery_keeps_only_neighbours_of_the_type(hub_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(hub_kb, TEMPLATES, replace(default_settings().query_generation, predicates_per_direction=400))
    hub = LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")
    city = LinkedNode(Term.entity("城市"), 0.8, 3, 5, "城市")
    candidates, _ = generator.generate_recorded([hub, city], "枢纽的哪个城市")
    typed = [c for c in candidates if c.shape.name == "type_out"]
    assert [(c.predicates[0], c.answers) for c in typed] == [("首都", (Term.entity("京城"),))]


def test_max_candidates_records_what_it_cut(hub_kb: KnowledgeBase) -> None:
    candidates, cuts = _generate(hub_kb, "枢纽的首都", max_candidates=5)
    assert len(candidates) == 5
    assert [cut for cut in cuts if cut.setting == "max_candidates"][0].kept == 5


class _CountingKB:
    """A real store whose SELECT texts are recorded."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb, self.sent, self.description = kb, [], kb.description

    def select(self, query: str):  # type: ignore[no-untyped-def]
        self.sent.append(query)
        return self.kb.select(query)


def _edges_read(sent: list[str], node: str) -> list[str]:
    """The queries of `sent` that read the node's edges whole, either way."""
    reads = (("edges_out", OUT_READ_WHOLE), ("edges_in", IN_READ_WHOLE))
    queries = {TEMPLATES[name].render({"e": Term.entity(node), "limit": whole + 1}) for name, whole in reads}
    return [query for query in sent if query in queries]


def test_a_node_s_edges_are_read_once_across_questions_behind_the_result_cache(hub_kb: KnowledgeBase) -> None:
    kb = _CountingKB(hub_kb)
    settings = default_settings().query_generation
    generator = QueryGenerator(CachedKnowledgeBase(kb, 100_000), TEMPLATES, settings)  # type: ignore[arg-type]
    hub = LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")
    first = generator.generate([hub], "枢纽的首都")
    second = generator.generate([hub], "枢纽的首都")
    assert first == second
    assert len(_edges_read(kb.sent, "枢纽")) == 2  # out and in, once


def test_a_node_with_few_edges_is_read_whole_without_counting_or_expanding(hub_kb: KnowledgeBase) -> None:
    """<枢纽> has 309 edges out, fewer than OUT_READ_WHOLE: one query a
    direction gives its counts and answers, and its two-hop paths out, fewer
    than chain_rows, come in one query too (no discovery)."""
    kb = _CountingKB(hub_kb)
    settings = default_settings().query_generation
    candidates = QueryGenerator(kb, TEMPLATES, settings).generate([LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")], "枢纽的首都的人口")  # type: ignore[arg-type]
    assert len(_edges_read(kb.sent, "枢纽")) == 2
    assert not [q for q in kb.sent if "COUNT(?o)" in q or "COUNT(?s)" in q or "VALUES ?p" in q and "?p ?o" in q]
    assert not [q for q in kb.sent if "COUNT(?x)" in q and "?y ?p2 ?x" in q and "<枢纽> ?p1" in q]  # chain_out_out not counted
    chains = {c.predicates: c.answers for c in candidates if c.shape.name == "chain_out_out"}
    assert chains[("首都", "人口")] == (Term.literal("2000万"),)


@pytest.fixture(scope="module")
def big_hub_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where <枢纽> has more edges out than are read whole."""
    lines = ["<枢纽>\t<首都>\t<京城> ."]
    lines += [f"<枢纽>\t<关系{i}>\t<邻居{i}> ." for i in range(OUT_READ_WHOLE)]
    lines += [f"<枢纽>\t<成员>\t<成员{i}> ." for i in range(8)]
    yield from _loaded_store(tmp_path_factory, "big-hub", lines, "枢纽")


def test_a_node_with_more_edges_than_are_read_whole_is_counted_then_expanded(big_hub_kb: KnowledgeBase) -> None:
    kb = _CountingKB(big_hub_kb)
    limits = replace(default_settings().query_generation, predicates_per_direction=400)
    candidates, cuts = QueryGenerator(kb, TEMPLATES, limits).generate_recorded([LinkedNode(Term.entity("枢纽"), 0.9, 0, 2, "枢纽")], "枢纽的首都有哪些成员")  # type: ignore[arg-type]
    assert TEMPLATES["discover_out"].render({"e": Term.entity("枢纽")}) in kb.sent
    assert any(q.startswith("SELECT ?p ?o WHERE { VALUES ?p") for q in kb.sent)  # expand_out
    one_hop = {c.predicates[0]: c for c in candidates if c.shape.name == "one_hop_out"}
    assert one_hop["首都"].answers == (Term.entity("京城"),)
    assert one_hop["成员"].answer_count == 8 and len(one_hop["成员"].answers) == 8
    assert CapCut("predicates_per_direction", "<枢纽> out", 400, OUT_READ_WHOLE + 2) in cuts


@pytest.fixture(scope="module")
def middle_hub_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where <甲>'s 国籍 leads to a middle node 21 things point at
    (a hub) and its 母校 to one that <乙> alone points at."""
    lines = ["<甲>\t<国籍>\t<大国> .", "<甲>\t<母校>\t<小校> .", "<乙>\t<母校>\t<小校> ."]
    lines += [f"<人{i}>\t<国籍>\t<大国> ." for i in range(20)]
    yield from _loaded_store(tmp_path_factory, "middle-hub", lines, "甲")


def _chains_out_in(kb: KnowledgeBase, bound: int) -> tuple[dict[tuple[str, ...], tuple[Term, ...]], list[CapCut], list[str]]:
    counting = _CountingKB(kb)
    generator = QueryGenerator(counting, TEMPLATES, replace(default_settings().query_generation, chain_middle_edges=bound))  # type: ignore[arg-type]
    node = LinkedNode(Term.entity("甲"), 0.9, 0, 1, "甲")
    candidates, cuts = generator.generate_recorded([node], "甲的校友有谁")
    chains = {c.predicates: c.answers for c in candidates if c.shape.name == "chain_out_in"}
    return chains, cuts, counting.sent


def test_chain_out_in_does_not_count_paths_through_a_middle_node_with_more_edges_than_the_bound(middle_hub_kb: KnowledgeBase) -> None:
    chains, cuts, sent = _chains_out_in(middle_hub_kb, 10)
    assert chains == {("母校", "母校"): (Term.entity("乙"),)}
    assert CapCut("chain_middle_edges", "<甲> chain_out_in", 1, 2) in cuts
    recount = TEMPLATES["discover_chain_out_in"].render({"e": Term.entity("甲"), "predicates": [Term.entity("母校")], "limit": 3})
    assert recount in sent  # again, the first hop through a small middle node only, walking its 2 paths


def test_chain_out_in_below_the_bound_counts_every_middle_node_without_checking_them_one_by_one(middle_hub_kb: KnowledgeBase) -> None:
    chains, cuts, sent = _chains_out_in(middle_hub_kb, 100)
    assert ("国籍", "国籍") in chains and len(chains[("国籍", "国籍")]) == 20
    assert not [cut for cut in cuts if cut.setting == "chain_middle_edges"]
    assert not any("VALUES ?e" in q for q in sent)  # no in_degree count of a middle node


# --- link_score_margin: a homonym far below the best term of its mention span gets no candidates ---


@pytest.fixture(scope="module")
def homonym_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where 乌克兰 names a country and a game character, each with its own facts."""
    data = tmp_path_factory.mktemp("homonym-data")
    lines = [
        "<乌克兰>\t<气候>\t<温带大陆性气候> .",
        "<乌克兰>\t<首都>\t<基辅> .",
        "<乌克兰_（游戏人物）>\t<登场作品>\t<黑塔利亚> .",
        "<乌克兰_（游戏人物）>\t<气候>\t\"寒冷\" .",
        "<温带大陆性气候>\t<类型>\t<气候类型> .",
    ]
    (data / "pkubase-triples.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "pkubase-mention2ent.txt").write_text("乌克兰\t乌克兰\t1\n乌克兰\t乌克兰_（游戏人物）\t2\n", encoding="utf-8")
    store = tmp_path_factory.mktemp("homonym-store") / "s"
    load_kb([data], store, progress=False)
    kb = OxigraphStore(store / STORE_SUBDIR)
    yield kb
    kb.close()


HOMONYM_LINKS = [
    LinkedNode(Term.entity("乌克兰"), 0.99, 0, 3, "乌克兰"),
    LinkedNode(Term.entity("气候类型"), 0.02, 5, 9, "气候类型"),  # the best (only) term of its span
    LinkedNode(Term.entity("乌克兰_（游戏人物）"), 0.05, 0, 3, "乌克兰"),
]


def test_a_homonym_far_below_the_best_term_of_its_span_gets_no_candidates(homonym_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(homonym_kb, TEMPLATES, replace(default_settings().query_generation, link_score_margin=0.1))
    candidates, cuts = generator.generate_recorded(HOMONYM_LINKS, "乌克兰的气候类型是什么")
    used = {node.term.value for c in candidates for node in c.nodes}
    assert used == {"乌克兰", "气候类型"}
    assert ("气候",) in {c.predicates for c in candidates if c.shape.name == "one_hop_out"}
    assert CapCut("link_score_margin", "question", 2, 3) in cuts


def test_without_a_margin_the_homonym_gets_its_candidates(homonym_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(homonym_kb, TEMPLATES, replace(default_settings().query_generation, link_score_margin=0.0))
    candidates, cuts = generator.generate_recorded(HOMONYM_LINKS, "乌克兰的气候类型是什么")
    assert "乌克兰_（游戏人物）" in {node.term.value for c in candidates for node in c.nodes}
    assert not [cut for cut in cuts if cut.setting == "link_score_margin"]


# --- star_in_in_out: the hop from the few things two constraints pin down ---


@pytest.fixture(scope="module")
def star_hop_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """A real store where one person has both 籍贯 甲城 and 职务 乙职, another only
    甲城 and three more only 乙职; each person has a 民族 and a 性别."""
    lines = ["<张三>\t<籍贯>\t<甲城> .", "<张三>\t<职务>\t<乙职> .", "<李四>\t<籍贯>\t<甲城> ."]
    lines += [f"<路人{i}>\t<职务>\t<乙职> ." for i in range(3)]
    for person in ("张三", "李四", "路人0", "路人1", "路人2"):
        lines += [f"<{person}>\t<民族>\t<{person}的民族> .", f"<{person}>\t<性别>\t\"{person}的性别\" ."]
    yield from _loaded_store(tmp_path_factory, "star-hop", lines, "甲城")


STAR_HOP_LINKS = [LinkedNode(Term.entity("甲城"), 0.9, 0, 2, "甲城"), LinkedNode(Term.entity("乙职"), 0.8, 3, 5, "乙职")]


def test_a_star_that_pins_down_one_thing_gets_its_hop(star_hop_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(star_hop_kb, TEMPLATES, default_settings().query_generation)
    candidates, _ = generator.generate_recorded(STAR_HOP_LINKS, "甲城的乙职的民族")
    hops = {c.predicates: [a.value for a in c.answers] for c in candidates if c.shape.name == "star_in_in_out"}
    # A star's two nodes come in one order (by name), so 乙职 first.
    assert hops == {("职务", "籍贯", "民族"): ["张三的民族"], ("职务", "籍贯", "性别"): ["张三的性别"]}
    sparql = next(c for c in candidates if c.shape.name == "star_in_in_out").sparql(TEMPLATES)
    assert [row[0].value for row in star_hop_kb.select(sparql).rows] in (["张三的民族"], ["张三的性别"])


def test_star_hop_predicates_keeps_the_most_relevant_hops_and_records_the_cut(star_hop_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(star_hop_kb, TEMPLATES, replace(default_settings().query_generation, star_hop_predicates=1))
    candidates, cuts = generator.generate_recorded(STAR_HOP_LINKS, "甲城的乙职的性别")
    assert [c.predicates for c in candidates if c.shape.name == "star_in_in_out"] == [("职务", "籍贯", "性别")]
    assert CapCut("star_hop_predicates", "<乙职> <甲城> star_in_in_out", 1, 2) in cuts


def test_a_star_with_more_answers_than_star_hop_middles_gets_no_hop(star_hop_kb: KnowledgeBase) -> None:
    generator = QueryGenerator(star_hop_kb, TEMPLATES, replace(default_settings().query_generation, star_hop_middles=0))
    candidates, cuts = generator.generate_recorded(STAR_HOP_LINKS, "甲城的乙职的民族")
    assert not [c for c in candidates if c.shape.name == "star_in_in_out"]
    assert CapCut("star_hop_middles", "question", 0, 1) in cuts
