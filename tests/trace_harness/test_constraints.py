"""Every constraint the package sends compiles to a grammar with both in-process engines (xgrammar for the hf
backend, llama.cpp's GBNF for the llamacpp backend), and the compiled grammar says what the schema says: enum
ids, list bounds, required keys, no extra keys, nested objects, CoRE's rating tag."""

from __future__ import annotations

import json

import pytest

from tests.support.requires import needs_llama_cpp
from trace_harness.constraints import SAMPLE_CATALOGUE, SAMPLE_LABELS, package_constraints
from trace_llm.jsonout import validation_errors

xgr = pytest.importorskip("xgrammar")


@pytest.fixture(scope="module")
def compiler(tmp_path_factory):
    from transformers import AutoTokenizer

    from tests.support.tiny_llama import build_tiny_llama
    from trace_llm.grammar import GrammarCompiler

    folder = build_tiny_llama(tmp_path_factory.mktemp("tiny"))
    return GrammarCompiler(AutoTokenizer.from_pretrained(folder))


def accepts(compiler, name: str, text: str) -> bool:
    """Does the compiled grammar of constraint `name` accept `text` as a whole reply?"""
    matcher = xgr.GrammarMatcher(compiler.compile(package_constraints()[name]))
    return matcher.accept_string(text) and matcher.is_completed()


def dump(value) -> str:
    return json.dumps(value, ensure_ascii=False)  # xgrammar's own separators: ", " and ": "


def test_every_constraint_compiles_and_its_json_schema_is_one_the_validator_takes(compiler):
    constraints = package_constraints()
    assert {
        "llm_baselines.ranking",
        "dst.delta",
        "collab_rec.agent",
        "judge.ratings",
        "core.factor_rating",
        "core.debate",
        "sniprec.item_snippets",
        "sniprec.query_snippets",
        "generator.turns",
    } <= set(constraints)
    for name, constraint in constraints.items():
        compiler.compile(constraint)  # raises LLMConfigError naming the constraint kind when it cannot
        if constraint.kind == "json":
            assert validation_errors({}, constraint.schema) is not None, name


def test_ranking_grammar_allows_only_the_shown_ids_within_bounds(compiler):
    good = {"ranked_ids": ["P2", "P1"], "response": "Try P2."}
    assert accepts(compiler, "llm_baselines.ranking", dump(good))
    assert not accepts(compiler, "llm_baselines.ranking", dump({**good, "ranked_ids": ["P9"]}))  # not shown
    assert not accepts(compiler, "llm_baselines.ranking", dump({**good, "ranked_ids": []}))  # minItems 1
    too_many = list(SAMPLE_LABELS) + ["P1"]
    assert not accepts(compiler, "llm_baselines.ranking", dump({**good, "ranked_ids": too_many}))  # maxItems
    assert not accepts(compiler, "llm_baselines.ranking", dump({**good, "why": "x"}))  # no extra key
    assert not accepts(compiler, "llm_baselines.ranking", dump({"response": "x"}))  # required key
    assert accepts(compiler, "llm_baselines.response", dump({"response": "Hello!"}))


def test_agent_grammar_names_only_catalogue_items(compiler):
    assert accepts(compiler, "collab_rec.agent", dump({"candidates": list(SAMPLE_CATALOGUE[:3])}))
    assert not accepts(compiler, "collab_rec.agent", dump({"candidates": ["Atlantis"]}))
    assert accepts(
        compiler, "collab_rec.agent_open", dump({"candidates": ["Atlantis"]})
    )  # the paper's open list
    assert not accepts(
        compiler, "collab_rec.agent_open", dump({"candidates": ["Porto"], "mood": "x"})
    )  # strict


def test_delta_judge_and_nested_grammars(compiler):
    delta = {
        "price_max": 2,
        "cuisine_likes": ["thai"],
        "cuisine_avoids": [],
        "ambience": [],
        "noise": "quiet",
        "features": [],
        "location": None,
        "rejected": [],
        "accepted": [],
    }
    assert accepts(compiler, "dst.delta", dump(delta))
    assert not accepts(compiler, "dst.delta", dump({**delta, "price_max": 5}))
    assert not accepts(compiler, "dst.delta", dump({k: v for k, v in delta.items() if k != "noise"}))
    scales = {"relevance": 4, "informativeness": 3, "grounding": 5, "flow": 2, "safety": 1}
    judge = package_constraints()["judge.ratings"].schema
    ratings = {k: scales.get(k, 3) for k in judge["properties"]}
    assert accepts(compiler, "judge.ratings", dump(ratings))
    assert not accepts(compiler, "judge.ratings", dump({**ratings, next(iter(ratings)): 6}))
    turn = {
        "turn_id": 1,
        "role": "system",
        "action": "recommend",
        "text": "Try Cafe Uno [R1].",
        "citations": [{"label": "R1", "review_id": "r9"}],
    }
    assert accepts(compiler, "generator.turns", dump({"turns": [turn]}))
    assert not accepts(compiler, "generator.turns", dump({"turns": [{**turn, "role": "narrator"}]}))
    assert accepts(compiler, "sniprec.query_snippets", dump([{"prop": "quiet", "sentiment": "preference"}]))
    assert not accepts(compiler, "sniprec.query_snippets", dump([{"prop": "quiet", "sentiment": "meh"}]))


def test_core_rating_grammar_keeps_the_paper_format(compiler):
    assert accepts(compiler, "core.factor_rating", "The response names the cafe.\n<rating>3</rating>")
    assert not accepts(compiler, "core.factor_rating", "Fine. <rating>7</rating>")  # 0-4 only
    assert not accepts(compiler, "core.factor_rating", "<rating>3</rating> and more")  # nothing after the tag
    assert not accepts(compiler, "core.factor_rating", "x" * 1001 + "<rating>2</rating>")  # bounded rationale


@pytest.fixture(scope="module")
def llama_vocab():
    """The packaged GGUF's vocabulary alone (no weights), for llama.cpp's grammar parser."""
    llama_cpp = needs_llama_cpp()
    from trace_llm.errors import LLMConfigError
    from trace_llm.smollm2 import smollm2_gguf_path

    try:
        path = smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    yield llama
    llama.close()


def test_every_constraint_becomes_a_grammar_llama_cpp_parses(llama_vocab):
    """llama-cpp-python only parses a grammar when it builds the sampler, and leaves out one its parser refuses
    (the reply is then decoded with no constraint): each grammar goes through llama.cpp's own parser here. The
    CoRE debate's score pattern (`\\s`, `\\d`, `\\.`) and its 1,500-character statement were refused before."""
    from trace_llm.llamacpp import grammar_error, json_gbnf

    for name, constraint in package_constraints().items():
        gbnf = json_gbnf(constraint.schema) if constraint.kind == "json" else constraint.grammar
        assert "root ::=" in gbnf, name
        if (
            constraint.kind == "json"
        ):  # no raw control character inside a JSON string (json.loads refuses them)
            chars = [line for line in gbnf.splitlines() if line.startswith("char ::=")]
            assert all(r"\x00-\x1F]" in line for line in chars), name
        assert grammar_error(llama_vocab, gbnf) is None, name
    assert grammar_error(llama_vocab, 'root ::= "\\q"') is not None  # the check can fail


def test_patterns_and_long_strings_are_spelled_for_llama_cpp():
    pytest.importorskip("llama_cpp.llama_grammar")
    from trace_llm.llama_schema import converter_pattern
    from trace_llm.llamacpp import _flatten_repetitions, json_gbnf

    assert converter_pattern(r"^\s*(100(\.0+)?|\d{1,2}(\.\d+)?)\s*$") == (
        r"^[ \t\n\r]*(100([.]0+)?|[0-9]{1,2}([.][0-9]+)?)[ \t\n\r]*$"
    )
    assert converter_pattern(r"^[\d.]+\-x\w$") == r"^[0-9.]+[\-]x[a-zA-Z0-9_]$"
    assert _flatten_repetitions('s ::= "a" (c (c (c)?)?)? "b"') == 's ::= "a" c{0,3} "b"'
    assert _flatten_repetitions("s ::= ((c (c)?)?)?") == "s ::= (c{0,2})?"  # an outer group keeps its ")?"
    assert _flatten_repetitions("s ::= (c (cd)?)? (c)?") == "s ::= (c (cd)?)? (c)?"  # not one item repeated
    from trace_metrics.core.debate import MAX_STATEMENT_CHARS

    debate = json_gbnf(package_constraints()["core.debate"].schema)
    assert f"char{{0,{MAX_STATEMENT_CHARS - 1}}}" in debate and r"\d" not in debate and r"\s" not in debate
    ranking = json_gbnf(package_constraints()["llm_baselines.ranking"].schema)
    assert r"\"P8\"" in ranking and r"\"P9\"" not in ranking  # the enum reaches the grammar
    assert "char ::=" in ranking and r"\x00-\x1F]" in ranking  # the response string: no raw control character


def test_llama_cpp_grammars_keep_bounds_and_type_lists():
    pytest.importorskip("llama_cpp.llama_grammar")
    from trace_llm.llama_schema import converter_schema
    from trace_llm.llamacpp import json_gbnf

    judge = json_gbnf(package_constraints()["judge.ratings"].schema)
    assert (
        '::= "1" | "2" | "3" | "4" | "5"' in judge
    )  # integer bounds as an enum (the converter drops bounds)
    assert converter_schema({"type": ["string", "null"], "enum": ["quiet", None]}) == {
        "anyOf": [{"type": "string", "enum": ["quiet"]}, {"type": "null"}]
    }
    delta = json_gbnf(package_constraints()["dst.delta"].schema)
    assert '"\\"quiet\\""' in delta and '"1" | "2" | "3" | "4"' in delta
