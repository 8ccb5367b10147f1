"""Linking a hub (an entity with too many edges one way to read them whole,
`coqa.edges`): its predicates that way come from query generation's per-node
counts, which the result cache then answers for query generation, so its
edges are walked once; the facts-fit feature is the one its edges give."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CountingStore

from coqa.config import default_settings
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.loading.loader import load_kb
from coqa.kb.mention_index import MentionIndex
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.edges import IN_READ_WHOLE, OUT_READ_WHOLE
from coqa.linking.linker import EntityLinker
from coqa.linking.model import LinkerModel
from coqa.mentions.detection import detect_mentions
from coqa.templates import load_templates
from coqa.resources import QUERIES_DIR
from coqa.shapes import DISCOVER_IN, DISCOVER_OUT, EDGES_IN, EDGES_OUT

TEMPLATES = load_templates(QUERIES_DIR)
HUB, SMALL, STATION = Term.entity("枢纽"), Term.entity("小站"), Term.entity("车站")


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("hub-link-data")
    lines = [f"<枢纽>\t<关系{i}>\t<邻居{i}> ." for i in range(OUT_READ_WHOLE)]
    lines += ["<枢纽>\t<首都>\t<京城> .", "<来客>\t<到达>\t<枢纽> .", "<小站>\t<首都>\t<京城> .", "<车站>\t<首都>\t<京城> ."]
    lines += [f"<旅客{i}>\t<到达>\t<车站> ." for i in range(IN_READ_WHOLE + 1)]
    (data / "pkubase-triples.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "pkubase-mention2ent.txt").write_text("枢纽\t枢纽\t1\n小站\t小站\t1\n车站\t车站\t1\n", encoding="utf-8")
    store = tmp_path_factory.mktemp("hub-link-store") / "s"
    load_kb([data], store, progress=False)
    return store


def _context(store_dir: Path, question: str) -> tuple[dict[Term, float], list[str]]:
    store = CountingStore(store_dir / STORE_SUBDIR)
    try:
        linker = EntityLinker(CachedKnowledgeBase(store, 1000), TEMPLATES, LinkerModel({}), default_settings().linking)
        mentions = detect_mentions(question, MentionIndex.open(store_dir / INDEX_SUBDIR))
        return {c.term: c.features["t_context"] for c in linker.candidates(question, mentions)}, store.sent
    finally:
        store.close()


def _read_whole(entity: Term) -> set[str]:
    return {TEMPLATES[name].render({"e": entity, "limit": whole + 1}) for name, whole in ((EDGES_OUT, OUT_READ_WHOLE), (EDGES_IN, IN_READ_WHOLE))}


def test_a_hubs_predicates_are_those_query_generation_counts(store_dir: Path) -> None:
    context, sent = _context(store_dir, "枢纽的首都")  # OUT_READ_WHOLE + 1 edges out, one in
    assert context == {HUB: 1.0}
    assert _read_whole(HUB) <= set(sent)
    assert TEMPLATES[DISCOVER_OUT].render({"e": HUB}) in sent and TEMPLATES[DISCOVER_IN].render({"e": HUB}) not in sent
    assert _context(store_dir, "枢纽的到达")[0] == {HUB: 1.0}  # 到达 leads into the hub: both directions are read
    assert _context(store_dir, "枢纽的人口")[0] == {HUB: 0.0}


def test_the_other_entities_are_read_whole(store_dir: Path) -> None:
    context, sent = _context(store_dir, "小站的首都")
    assert context == {SMALL: 1.0}
    assert _read_whole(SMALL) <= set(sent)
    assert not [query for query in sent if "GROUP BY" in query]


def test_an_entity_with_few_edges_out_and_many_arriving_is_counted_as_a_hub(store_dir: Path) -> None:
    context, sent = _context(store_dir, "车站的到达")
    assert context == {STATION: 1.0}
    assert TEMPLATES[DISCOVER_IN].render({"e": STATION}) in sent and TEMPLATES[DISCOVER_OUT].render({"e": STATION}) not in sent
    assert _context(store_dir, "车站的首都")[0] == {STATION: 1.0}
