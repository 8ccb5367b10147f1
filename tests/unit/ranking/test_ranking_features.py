"""Whole-query features of the ranker: what the path's predicates explain of
the question, the two-hop wording learned from gold predicate pairs, and the
answer forms against the question's cues."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coqa.kb.names import Term
from coqa.kb.surfaces import matching_name
from coqa.linking.linker import LinkedNode
from coqa.mentions.cues import (
    asked_classes,
    content_mask,
    looks_like_date,
    looks_like_person,
    looks_like_place,
    question_cues,
)
from coqa.querygen.candidate import Candidate
from coqa.ranking.answer_features import (
    answer_class_features,
    answer_class_keys,
    answer_form_features,
    asked_class_features,
    stated_features,
)
from coqa.ranking.associations import AnswerClassCounts, GramAssociations, PredicateAssociations
from coqa.ranking.model import fit_statistics
from coqa.ranking.settings import RankingSettings
from coqa.ranking.features import (
    _asked_of_earlier_node,
    _de_after_nodes,
    _explanation_features,
)
from coqa.ranking.keys import answer_class_key, directed, is_predicate_key, name_piece_key, name_pieces, pair_key, shape_key
from coqa.ranking.name_features import name_neighbour_scores, name_overlap
from coqa.ranking.neighbours import CharTfidf, PredicateNeighbours
from coqa.ranking.wording import grams, remove_spans
from coqa.shapes import (
    CHAIN_OUT_OUT,
    ONE_HOP_OUT,
    ONE_HOP_OUT_CHECKED,
    ONE_HOP_OUT_CHECKED_IN,
    STAR_IN_IN,
)
from coqa.training import gold_terms

QUESTION = "无名之辈的导演的出生地在哪里？"
FILM = LinkedNode(Term.entity("无名之辈"), 0.9, 0, 4, "无名之辈")


def content(text: str) -> str:
    return "".join(ch for ch, kept in zip(text, content_mask(text)) if kept)


def explanation(predicates: tuple[str, ...], associations: PredicateAssociations) -> dict[str, float]:
    shape = CHAIN_OUT_OUT if len(predicates) == 2 else ONE_HOP_OUT
    candidate = Candidate(shape, {}, (FILM,), predicates, (Term.entity("某城"),))
    rest = remove_spans(QUESTION, [(FILM.start, FILM.end)])
    return _explanation_features(candidate, rest, associations.against(grams(rest)), associations, 0.2)


def test_content_leaves_out_asking_words_punctuation_and_mentions() -> None:
    assert content(remove_spans(QUESTION, [(0, 4)])) == "导演出生地"
    assert content("周星驰的身高是多少？") == "周星驰身高"


def test_a_chain_explains_what_its_first_hop_leaves_unexplained() -> None:
    associations = PredicateAssociations(5.0)
    one_hop, chain = explanation(("出生地",), associations), explanation(("导演", "出生地"), associations)
    assert one_hop["x_unexplained"] == 2.0 and one_hop["x_explained"] == 0.6
    assert chain["x_unexplained"] == 0.0 and chain["x_explained"] == 1.0
    assert chain["x_explained_min"] == 0.4 and chain["x_explained_last"] == 0.6


def test_wording_learned_for_a_predicate_explains_it() -> None:
    associations = PredicateAssociations(1.0)
    candidate = Candidate(ONE_HOP_OUT, {}, (FILM,), ("导演",), (Term.entity("某人"),))
    rest = remove_spans("无名之辈是谁拍摄的", [(0, 4)])
    assert content(rest) == "拍摄"
    assert _explanation_features(candidate, rest, associations.against(grams(rest)), associations, 0.2)["x_explained"] == 0.0
    for _ in range(4):
        associations.add(grams("谁拍摄的"), ["导演"])
    assert _explanation_features(candidate, rest, associations.against(grams(rest)), associations, 0.2)["x_explained"] == 1.0
    associations.add(grams("拍摄地点"), ["拍摄地点"])
    assert _explanation_features(candidate, rest, associations.against(grams(rest)), associations, 0.7)["x_explained"] == 0.0


def test_gold_chains_teach_the_wording_of_their_predicate_pair() -> None:
    _, predicates = gold_terms("select ?x where { ?y <出生地> ?x . <无名之辈> <导演> ?y . }")
    assert pair_key(["导演", "出生地"]) in predicates
    associations = PredicateAssociations(1.0)
    associations.add(grams("||||的导演的出生地在哪里"), predicates)
    assert explanation(("导演", "出生地"), associations)["x_pair_assoc"] > 0.0
    assert explanation(("编剧", "出生地"), associations)["x_pair_assoc"] == 0.0
    _, one_hop = gold_terms("select ?x where { <无名之辈> <导演> ?x . }")
    assert not any(key.endswith("+") for key in one_hop)


def test_answer_forms_against_cues_and_plural_wording() -> None:
    assert looks_like_date("1962年6月22日") and looks_like_date("1999") and not looks_like_date("320")
    assert looks_like_place("云溪市") and not looks_like_place("雪夜行")
    # A place whose name has no place ending is known by its description: its own ending or a kind of place.
    assert looks_like_place("云溪_（北原省辖市）") and looks_like_place("北原_（南陆国首都）") and looks_like_place("东川_（南陆中部地区省份之一）")
    assert not looks_like_place("北原") and not looks_like_place("林远_（南陆国现代作家）")
    assert looks_like_person("林海_（虚构作家）") and not looks_like_person("雪夜行_（小说）")
    when = "雪夜行是哪一年出版的？"
    dated = Candidate(ONE_HOP_OUT, {}, (FILM,), ("出版时间",), (Term.literal("2001年"),))
    assert answer_form_features(dated, when, question_cues(when))["a_when_date"] == 1.0
    which = "林海有哪些作品？"
    works = Candidate(ONE_HOP_OUT, {}, (FILM,), ("代表作品",), (Term.entity("雪夜行"), Term.entity("北河记")))
    features = answer_form_features(works, which, question_cues(which))
    assert features["a_plural_many"] == 1.0 and features["a_singular_one"] == 0.0


def test_answers_the_question_states_are_counted() -> None:
    question = "等级为4a的云溪公园的官方网站是什么？"
    grade, park = Term.literal("4A"), Term.entity("云溪公园_（某市）")
    linked = frozenset({park, grade})
    assert stated_features((grade,), question, linked)["a_stated"] == 1.0
    assert stated_features((Term.literal("4a"),), question, frozenset({park}))["a_stated"] == 1.0  # written in it, not linked
    assert stated_features((park,), question, frozenset())["a_stated"] == 1.0  # an entity by its name without qualifier
    assert stated_features((Term.literal("http://yunxi.example"), grade), question, linked)["a_stated"] == 0.5
    assert stated_features((Term.literal("的"),), question, frozenset())["a_stated"] == 0.0  # one character says nothing
    assert stated_features((), question, linked)["a_stated"] == 0.0


def test_the_class_a_question_asks_for_is_the_wording_after_its_asking_word() -> None:
    assert asked_classes("李明任教于哪所学院？") == ("学院",)
    assert asked_classes("林海是哪国人？") == ("国人",)
    assert asked_classes("云溪市有哪些景点和什么美食？") == ("景点", "美食")
    assert asked_classes("雪夜行的作者是谁？") == ()
    assert asked_classes("雪夜行是什么？") == ()
    assert asked_classes("林海在哪里出生？") == ()  # 哪里 asks where, not for a class


def test_answers_are_judged_by_the_class_the_question_asks_for() -> None:
    classes = asked_classes("李明任教于哪所学院？")
    college, address = Term.entity("云溪学院_（某市高校）"), Term.literal("云溪市北路1号")
    assert asked_class_features((college,), classes) == {"a_class_asked": 1.0, "a_class_chars": 1.0, "a_class_bigram": 1.0}
    assert asked_class_features((address,), classes) == {"a_class_asked": 1.0, "a_class_chars": 0.0, "a_class_bigram": 0.0}
    assert asked_class_features((college, Term.entity("学术委员会")), classes) == {
        "a_class_asked": 1.0, "a_class_chars": 0.75, "a_class_bigram": 0.5,  # 学 alone is half the class, no bigram
    }  # fmt: skip
    assert asked_class_features((), classes)["a_class_asked"] == 1.0
    assert asked_class_features((college,), ()) == {"a_class_asked": 0.0, "a_class_chars": 0.0, "a_class_bigram": 0.0}


def test_what_an_answer_is_is_read_from_its_form_or_the_end_of_its_name_and_description() -> None:
    keys = answer_class_keys
    assert keys(Term.entity("北河_（古代朝代）")) == tuple(sorted(map(answer_class_key, ("北河", "河", "朝代", "代"))))
    assert keys(Term.entity("云溪学院")) == (answer_class_key("学院"), answer_class_key("院"))
    assert keys(Term.literal("2001年3月5日")) == (answer_class_key("#date"),)
    assert keys(Term.literal("4200人")) == (answer_class_key("#number"), answer_class_key("#number人"))
    assert keys(Term.literal("320")) == (answer_class_key("#number"),)
    assert keys(Term.literal("一座建在河边的古城，城中有三座石桥和一座塔")) == (answer_class_key("#text"),)
    assert not any(is_predicate_key(key) for key in keys(Term.entity("云溪学院")))


def test_wording_that_asked_for_a_class_of_answer_in_training_scores_answers_of_that_class() -> None:
    wordings = ["||是哪个朝代的", "||建于哪个朝代", "||的作者是谁"]
    dynasty, person = Term.entity("北河_（古代朝代）"), Term.entity("林海_（虚构作家）")
    classes = [list(answer_class_keys(dynasty)), list(answer_class_keys(dynasty)), list(answer_class_keys(person))]
    tables, _ = fit_statistics(wordings, [["朝代"], ["建立时间"], ["作者"]], classes, [None] * 3, [0, 1, 2], 3, RankingSettings(0.3, 5.0, False, False))
    against = tables[3].against(grams("||属于哪个朝代"))

    def score(answer: Term) -> float:
        return against.best_answer_class(answer_class_keys(answer))

    features = answer_class_features((dynasty,), score)
    assert features["a_class_assoc_mean"] == features["a_class_assoc_max"] > 0.0
    by_person = answer_class_features((person,), score)["a_class_assoc_max"]
    assert by_person < features["a_class_assoc_max"]  # only the separator the wordings share asked for a writer
    both = answer_class_features((dynasty, person), score)
    assert both == {"a_class_assoc_mean": (features["a_class_assoc_max"] + by_person) / 2, "a_class_assoc_max": features["a_class_assoc_max"]}
    assert answer_class_features((), score) == {"a_class_assoc_mean": 0.0, "a_class_assoc_max": 0.0}
    assert tables[0].against(grams("||属于哪个朝代")).best(answer_class_key("朝代")) < against.best(answer_class_key("朝代"))  # fold 0 left out


def test_a_checked_one_hop_knows_whether_it_asks_about_the_node_named_first() -> None:
    # "the opening hours of ride 飞天梭 in park 云溪乐园": 云溪乐园 comes first, 飞天梭 last.
    park = LinkedNode(Term.entity("云溪乐园"), 0.9, 0, 4, "云溪乐园")
    ride = LinkedNode(Term.entity("飞天梭"), 0.8, 5, 8, "飞天梭")
    hours = (Term.literal("09:00-17:00"),)
    of_park = Candidate(ONE_HOP_OUT_CHECKED, {}, (park, ride), ("营业时间", "娱乐项目名称"), hours)
    of_ride = Candidate(ONE_HOP_OUT_CHECKED_IN, {}, (ride, park), ("项目营业时间", "娱乐项目名称"), hours)
    assert _asked_of_earlier_node(of_park) == 1.0 and _asked_of_earlier_node(of_ride) == 0.0
    assert _asked_of_earlier_node(Candidate(STAR_IN_IN, {}, (park, ride), ("地点", "项目"), hours)) == 0.0
    assert _asked_of_earlier_node(Candidate(ONE_HOP_OUT, {}, (park,), ("营业时间",), hours)) == 0.0


def test_wording_learned_for_one_predicate_carries_to_names_sharing_its_words() -> None:
    associations = PredicateAssociations(1.0)
    rest = "||||有多少人遇难"
    for _ in range(3):
        associations.add(grams(rest), ["死亡人数", *(name_piece_key(piece) for piece in name_pieces("死亡人数"))])
    # `死亡人员` was never a gold predicate: only the name pieces it shares with `死亡人数` score.
    assert associations.score("死亡人员", grams(rest)) == (0.0, 0.0)
    assert associations.name_score("死亡人员", grams(rest)) > associations.name_score("受伤人数", grams(rest)) > 0.0
    assert associations.name_score("出版社", grams(rest)) == 0.0


def test_predicate_names_match_without_inner_white_space_or_full_width() -> None:
    assert matching_name("页 数") == "页数" and matching_name("ＩＳＢＮ") == "isbn"
    assert name_pieces("页 数") == {"页数"} and name_pieces("重") == {"重"}


def test_wording_of_the_nearest_training_questions_carries_to_predicates_named_alike() -> None:
    texts = ["||||多少钱", "||||多少钱一个", "||||的作者是谁", "||||哪一年出版"]
    golds = [["售价", directed("售价", True)], ["参考价格"], ["作者"], ["出版时间"]]
    neighbours = PredicateNeighbours.fit(texts, golds, [0, 1, 2, 3])
    assert neighbours.gold_predicates[0] == ("售价",)  # directed keys are not gold predicates
    sims = neighbours.similarities("||||卖多少钱", None)
    nearest = neighbours.nearest(sims, 2)
    assert sorted(golds for _, golds in nearest) == [("参考价格",), ("售价",)]
    assert neighbours.nearest(neighbours.similarities("||||多少钱", 0), 1)[0][1] == ("参考价格",)  # a hidden fold is never nearest
    # `价格` was never a gold predicate: it scores by the characters it shares with those of the nearest questions.
    price, author = name_neighbour_scores("价格", nearest), name_neighbour_scores("作者", nearest)
    assert price[0] > author[0] == 0.0 and price[1] > author[1] == 0.0
    assert name_overlap("售价", "价格") == 0.5 and name_overlap("页 数", "页数") == 1.0 and name_overlap("作者", "isbn") == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="作者的是谁多少钱 |a", max_size=30), min_size=1, max_size=12))
def test_a_question_vector_is_its_row_of_the_fitted_matrix_bit_for_bit(texts: list[str]) -> None:
    vectorizer, matrix = CharTfidf.fit(texts)
    for row, text in enumerate(texts):
        assert vectorizer.vector(text).tobytes() == matrix[row].toarray().ravel().tobytes()
    assert not vectorizer.vector("xyz").any()  # no gram training saw: the zero vector


def test_questions_score_by_their_likeness_to_training_questions_of_each_gold_shape() -> None:
    texts = ["||||的作者的出生地在哪里", "||||的导演的妻子是谁", "||||的作者是谁"]
    golds = [["作者", "出生地", shape_key("chain_out_out")], ["导演", "妻子", shape_key("chain_out_out")], ["作者", shape_key("one_hop_out")]]
    neighbours = PredicateNeighbours.fit(texts, golds, [0, 1, 2])
    assert all(shape_key("one_hop_out") not in names for names in neighbours.gold_predicates.values())  # no predicate
    sims = neighbours.similarities("||||的编剧的出生地是哪里", None)
    chain, one_hop = neighbours.score(shape_key("chain_out_out"), sims), neighbours.score(shape_key("one_hop_out"), sims)
    assert chain[0] > one_hop[0] > 0.0
    assert neighbours.score(shape_key("star_in_in"), sims) == (0.0, 0.0)  # no training question had that shape
    assert neighbours.score(shape_key("one_hop_out"), neighbours.similarities("||||的作者是谁", 2)) == (0.0, 0.0)  # its fold hidden


def test_association_scores_follow_their_definition_and_see_later_training() -> None:
    associations = PredicateAssociations(1.0)
    associations.add(grams("谁拍摄的"), ["导演"])
    associations.add(grams("谁拍的电影"), ["导演", "主演"])
    associations.add(grams("在哪里出生"), ["出生地"])
    question = grams("这部电影是谁拍的")
    against = associations.against(question)
    for predicate in ("导演", "主演", "出生地", "编剧"):
        values = sorted(
            (associations.pair_counts[g][predicate] / (associations.gram_counts[g] + 1.0)
             for g in question if predicate in associations.pair_counts.get(g, {})),
            reverse=True,
        )  # fmt: skip
        assert against.score(predicate) == ((values[0], sum(values[:3]) / 3.0) if values else (0.0, 0.0))
    assert against.score("导演")[0] == 2 / 3 and against.score("出生地") == (0.0, 0.0)
    associations.add(grams("电影是谁写的"), ["编剧"])
    assert associations.against(question).score("编剧")[0] > 0.0


_WORDINGS = st.text(alphabet="|的是哪个朝代谁写", min_size=1, max_size=8)
_CLASS_PIECES = st.lists(st.sampled_from(["代", "朝代", "家", "作家", "#date"]), max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_WORDINGS, _CLASS_PIECES), min_size=1, max_size=8), _WORDINGS, st.integers(1, 6))
def test_answer_class_bests_of_all_keys_at_once_are_their_associations_key_by_key(
    training: list[tuple[str, list[str]]], question: str, dense_from: int
) -> None:
    associations = PredicateAssociations(1.0)
    for wording, pieces in training:
        associations.add(grams(wording), ["作者", *map(answer_class_key, pieces)])
    against = associations.against(grams(question))
    counts = AnswerClassCounts(associations.pair_counts, associations.gram_counts, associations.smoothing, dense_from)
    rows = GramAssociations(against.grams_by_predicate, against.seen, counts)
    keys = [*map(answer_class_key, ["代", "朝代", "家", "作家", "#date", "城"])]
    for key in keys:
        assert rows.best_answer_class([key]) == against.best_answer_class([key]) == against.best(key)
    assert against.best_answer_class(keys) == max(map(against.best, keys)) and against.best_answer_class([]) == 0.0
    associations.add(grams(question), [answer_class_key("城")])
    assert associations.against(grams(question)).best_answer_class([answer_class_key("城")]) > 0.0  # later training is seen


def test_the_de_after_the_last_node_are_counted() -> None:
    director = Candidate(ONE_HOP_OUT, {}, (FILM,), ("导演",), (Term.entity("某导演"),))
    assert _de_after_nodes(director, "无名之辈的导演的妻子是谁？") == 2.0
    assert _de_after_nodes(director, "无名之辈导演是谁？") == 0.0
    named_later = LinkedNode(Term.entity("导演"), 0.5, 5, 7, "导演")
    both = Candidate(ONE_HOP_OUT, {}, (FILM, named_later), ("导演",), (Term.entity("某导演"),))
    assert _de_after_nodes(both, "无名之辈的导演的妻子是谁？") == 1.0  # counted after the node named last
