"""The synthetic generator: exact sizes, determinism, PKU BASE formats, quirks.

Run with `pytest tests/test_synthetic.py` (a few seconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import synthetic  # noqa: E402

from coqa.kb.backends.oxigraph_store import OxigraphStore  # noqa: E402
from coqa.kb.loading.formats import parse_mention_line, parse_triple_line  # noqa: E402
from coqa.kb.loading.loader import load_kb  # noqa: E402
from coqa.kb.names import sparql_name  # noqa: E402
from conftest import BENCH_DIR

TRIPLES = 20_000
MENTIONS = 5_000


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synthetic")
    synthetic.generate(out, TRIPLES, MENTIONS, seed=7)
    return out


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def test_exact_line_counts(files: Path) -> None:
    assert len(lines(files / synthetic.TRIPLES_FILE)) == TRIPLES
    assert len(lines(files / synthetic.MENTIONS_FILE)) == MENTIONS
    assert len(lines(files / synthetic.TYPES_FILE)) > 0


def test_same_seed_same_bytes_other_seed_other_bytes(files: Path, tmp_path: Path) -> None:
    synthetic.generate(tmp_path / "again", TRIPLES, MENTIONS, seed=7)
    synthetic.generate(tmp_path / "other", TRIPLES, MENTIONS, seed=8)
    for name in (synthetic.TRIPLES_FILE, synthetic.TYPES_FILE, synthetic.MENTIONS_FILE):
        assert (tmp_path / "again" / name).read_bytes() == (files / name).read_bytes()
        assert (tmp_path / "other" / name).read_bytes() != (files / name).read_bytes()


def test_every_triple_and_type_line_parses_without_repair(files: Path) -> None:
    for name in (synthetic.TRIPLES_FILE, synthetic.TYPES_FILE):
        for line in lines(files / name):
            _, repairs = parse_triple_line(line)
            assert repairs == [], line


def test_mention_lines_parse_except_the_empty_mentions(files: Path) -> None:
    empty = 0
    for line in lines(files / synthetic.MENTIONS_FILE):
        if line.startswith("\t"):
            empty += 1
            continue
        mention, repairs = parse_mention_line(line)
        assert repairs == [] and mention.rank >= 1
    assert empty < MENTIONS * 0.01


def test_quirks_are_present(files: Path) -> None:
    text = (files / synthetic.TRIPLES_FILE).read_text(encoding="utf-8")
    names = {field[1:-1] for line in text.split("\n")[:-1] for field in line.split("\t")[:2]}
    assert any(" " in name.strip() for name in names)
    assert any("_（" in name and name.endswith("）") for name in names)
    assert any("·" in name for name in names)
    assert '"^^<http://www.w3.org/2001/XMLSchema#' in text
    assert any(len(line) > 500 for line in text.split("\n"))


def test_zipf_ranks_stay_in_range_and_favour_low_ranks() -> None:
    ranks = synthetic.zipf_ranks(np.random.default_rng(0).random(10_000), 50, 1.2)
    assert ranks.min() == 1 and ranks.max() <= 50
    assert (ranks == 1).sum() > (ranks == 10).sum() > (ranks == 50).sum()


def test_loader_loads_the_files_and_one_hop_queries_answer(files: Path, tmp_path: Path) -> None:
    report = load_kb([files], tmp_path / "store", mode="new", progress=False)
    total = report.total
    assert total.rejected == sum(1 for line in lines(files / synthetic.MENTIONS_FILE) if line.startswith("\t"))
    assert total.loaded + total.repaired + total.rejected + total.blank == total.lines
    kb = OxigraphStore(tmp_path / "store" / "oxigraph")
    for line in lines(files / synthetic.TRIPLES_FILE)[:200]:
        subject, predicate, _ = line.split("\t")
        query = f"select ?x where {{ {sparql_name(subject[1:-1])} {sparql_name(predicate[1:-1])} ?x }}"
        assert kb.select(query).rows, line
    kb.close()


BENCH = BENCH_DIR


@pytest.fixture(scope="module")
def distractors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("distractors")
    if not BENCH.is_dir():
        pytest.skip(f"the pkubase-bench data set is not at {BENCH}")
    synthetic.generate_distractors(out, BENCH, seed=7)
    return out


@pytest.fixture(scope="module")
def vocabulary() -> synthetic.KBVocabulary:
    if not BENCH.is_dir():
        pytest.skip(f"the pkubase-bench data set is not at {BENCH}")
    return synthetic.KBVocabulary.read(BENCH)


def distractor_triples(directory: Path) -> list[tuple[str, str, str]]:
    return [tuple(line[:-2].split("\t")) for line in lines(directory / synthetic.DISTRACTOR_TRIPLES_FILE)]


def test_distractors_same_seed_same_bytes_other_seed_other_bytes(distractors: Path, tmp_path: Path) -> None:
    synthetic.generate_distractors(tmp_path / "again", BENCH, seed=7)
    synthetic.generate_distractors(tmp_path / "other", BENCH, seed=8)
    for name in (synthetic.DISTRACTOR_TRIPLES_FILE, synthetic.DISTRACTOR_TYPES_FILE, synthetic.DISTRACTOR_MENTIONS_FILE):
        assert (tmp_path / "again" / name).read_bytes() == (distractors / name).read_bytes()
        assert (tmp_path / "other" / name).read_bytes() != (distractors / name).read_bytes()


def test_distractor_lines_parse_without_repair_and_never_touch_a_kb_entity(
    distractors: Path, vocabulary: synthetic.KBVocabulary
) -> None:
    for name in (synthetic.DISTRACTOR_TRIPLES_FILE, synthetic.DISTRACTOR_TYPES_FILE):
        for line in lines(distractors / name):
            triple, repairs = parse_triple_line(line)
            assert repairs == [], line
            assert triple.subject not in vocabulary.entities, line
            if name == synthetic.DISTRACTOR_TRIPLES_FILE and not triple.object.is_literal:
                assert triple.object.value not in vocabulary.entities, line
    for line in lines(distractors / synthetic.DISTRACTOR_MENTIONS_FILE):
        mention, repairs = parse_mention_line(line)
        assert repairs == [] and mention.entity not in vocabulary.entities, line


def test_homonyms_share_a_kb_base_name_with_another_description_and_have_their_own_edges(
    distractors: Path, vocabulary: synthetic.KBVocabulary
) -> None:
    subjects = {s[1:-1] for s, _, _ in distractor_triples(distractors)}
    kb_described = {name for name in vocabulary.entities if "_（" in name}
    kb_bases = {name.split("_（")[0] for name in kb_described}
    homonyms = {name for name in subjects if "_（" in name and name.split("_（")[0] in kb_bases}
    assert len(homonyms) > len(kb_described) // 4
    assert not homonyms & vocabulary.entities
    mentioned = {line.split("\t")[0] for line in lines(distractors / synthetic.DISTRACTOR_MENTIONS_FILE)}
    assert len(kb_bases & mentioned) > len(kb_bases) // 4


def test_tokens_and_common_words_name_entities_and_literals(
    distractors: Path, vocabulary: synthetic.KBVocabulary
) -> None:
    assert {"C9", "985", "3D"} <= set(vocabulary.tokens)
    tokens, words = set(vocabulary.tokens), set(vocabulary.words)
    mentions = {line.split("\t")[0] for line in lines(distractors / synthetic.DISTRACTOR_MENTIONS_FILE)}
    assert mentions >= tokens
    assert len(mentions & words) > len(words) // 3
    triples = distractor_triples(distractors)
    literal_values = {o[1:-1] for _, _, o in triples if o.startswith('"')}
    assert literal_values <= set(vocabulary.phrases)
    assert literal_values & tokens and literal_values & words
    assert 0.2 < len([o for _, _, o in triples if o.startswith('"')]) / len(triples) < 0.4


def test_the_kb_answers_as_before_with_the_distractors_loaded(distractors: Path, tmp_path: Path) -> None:
    for name in (synthetic.TRIPLES_FILE, synthetic.TYPES_FILE, synthetic.MENTIONS_FILE):
        (distractors / name).symlink_to(BENCH / name)
    load_kb([distractors], tmp_path / "store", mode="new", progress=False)
    kb = OxigraphStore(tmp_path / "store" / "oxigraph")
    bench_lines = lines(BENCH / synthetic.TRIPLES_FILE)
    expected: dict[tuple[str, str], set[str]] = {}
    for line in bench_lines[:: len(bench_lines) // 300]:
        triple, _ = parse_triple_line(line)
        expected[(triple.subject, triple.predicate)] = set()
    for line in bench_lines:
        triple, _ = parse_triple_line(line)
        if (triple.subject, triple.predicate) in expected:
            expected[(triple.subject, triple.predicate)].add(str(triple.object))
    for (subject, predicate), objects in expected.items():
        query = f"select ?x where {{ {sparql_name(subject)} {sparql_name(predicate)} ?x }}"
        assert {str(term) for term in kb.select(query).column(0)} == objects, (subject, predicate)
    kb.close()
