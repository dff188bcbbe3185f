"""CoRE's factor stage: prompts built from the versioned files, ratings parsed from recorded model replies,
bounded retries, and the batch driver through the real LLM layer (openai backend against a scripted stub)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.core import scripted
from trace_dataset.io import TraceDataError
from trace_llm import load_llm
from trace_metrics.core.conversation import build_log
from trace_metrics.core.factors import FactorJob, factor_messages, parse_rating, rate_factors
from trace_metrics.core.prompts import FACTOR_IDS, PROMPTS_DIR, load_prompts, parse_factor_file
from trace_metrics.lib.toy import reference_predictions, toy_dialogues

RECORDED = Path(__file__).with_name("data") / "recorded_outputs.json"


@pytest.fixture(scope="module")
def conversation():
    d = toy_dialogues()[0]
    return build_log(d, reference_predictions([d]), system="tfidf")


# ---- parsing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value", "status"),
    [
        ("The system answers every request.\n<rating>4</rating>", 4, "ok"),
        ("Two responses ignore the user. <rating> 2 </rating>", 2, "ok"),
        ("<RATING>0</RATING>", 0, "ok"),
        ("Format: <rating>{score}</rating>. My rating: <rating>3</rating>", 3, "ok"),  # the template echoed
        ("I gave <rating>3</rating> and repeat it: <rating>3</rating>", 3, "ok"),  # several equal tags
        ("The coherence is good. I would give it 3 points.", None, "missing"),  # no tag
        ("<rating>{score}</rating>", None, "missing"),  # only the template
        ("<rating></rating>", None, "missing"),
        ("<rating>3", None, "missing"),  # unclosed (cut by max_new_tokens)
        ("<rating>5</rating>", None, "out_of_range"),
        ("<rating>-1</rating>", None, "out_of_range"),
        ("<rating>10</rating> out of 10", None, "out_of_range"),
        ("<rating>3.5</rating>", None, "not_integer"),
        ("first <rating>2</rating>, on reflection <rating>3</rating>", None, "ambiguous"),  # several tags
        ("<rating>3</rating> ... <rating>7</rating>", None, "ambiguous"),
    ],
)
def test_parse_rating(text, value, status):
    parsed = parse_rating(text)
    assert (parsed.value, parsed.status) == (value, status)
    assert (parsed.detail == "") == (status == "ok")


def test_recorded_smollm2_outputs_parse_as_recorded():
    """Replies SmolLM2-135M-Instruct gave to the packaged prompts (see data/recorded_outputs.json)."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert recorded["model"].startswith("SmolLM2-135M-Instruct")
    assert len(recorded["replies"]) >= 4
    for item in recorded["replies"]:
        parsed = parse_rating(item["text"])
        assert (parsed.value, parsed.status) == (item["value"], item["status"]), item["text"][-120:]


# ---- prompts -------------------------------------------------------------------------------------
def test_prompt_set_is_complete_and_hashed(prompts):
    assert tuple(f.id for f in prompts.factors) == FACTOR_IDS
    assert [r.name for r in prompts.roles] == ["Common User", "Travel Expert", "Linguist", "HCI Expert"]
    assert re.fullmatch(r"[0-9a-f]{64}", prompts.sha256)
    assert prompts.describe() == {"version": "core-prompts-1", "sha256": prompts.sha256, "packaged": True}
    assert [f.id for f in prompts.factors if f.evidence] == ["groundness"]
    diversity = prompts.factor("diversity").definition
    for scenario in ("Restaurants:", "Hotels:", "Attractions:"):
        assert scenario in diversity
    assert (
        "Movies" not in diversity and "movie" not in " ".join(f.definition for f in prompts.factors).lower()
    )


def test_factor_prompt_follows_table_2(prompts, conversation):
    for factor in prompts.factors:
        (message,) = factor_messages(conversation, factor, prompts)
        text = message["content"]
        assert message["role"] == "user"
        assert f"You will assess the {factor.name} of the recommender system" in text
        assert factor.definition in text and factor.standard in text and factor.steps in text
        assert text.rstrip().endswith("in the format of <rating>{score}</rating>.")  # kept literally
        assert not re.search(r"\{[A-Z_]+\}", text)  # every placeholder filled
        assert "<interaction>" in text and "Try Gumbo House" in text
        assert ("<cited_reviews>" in text) == factor.evidence
        assert "<groundtruth_list>" in text and "Bayou Grill" in text


def test_templates_fill_their_placeholders_once(prompts):
    text = prompts.retry.render("retry", FACTOR="$PROBLEM", PROBLEM="{score}")
    assert "($$" not in text and "the $PROBLEM of the system" in text and "({score})" in text
    assert text.endswith("<rating>{score}</rating>.")  # the literal braces of the template stay


def test_bad_prompt_folders_are_refused(tmp_path):
    with pytest.raises(TraceDataError, match="not a CoRE prompts folder"):
        load_prompts(tmp_path)
    with pytest.raises(TraceDataError, match=r"missing or empty section\(s\) \['evaluation_steps'\]"):
        parse_factor_file("=== definition ===\nd\n=== evaluation_standard ===\ns\n", "x.txt")
    with pytest.raises(TraceDataError, match="x.txt: prompt x.txt: no '=== section ===' line"):
        parse_factor_file("[definition]\nd\n", "x.txt")  # the format before the prompt formats were merged
    folder = tmp_path / "prompts"
    import shutil

    shutil.copytree(PROMPTS_DIR, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["roles"][0]["factors"] = ["coherence", "coherence", "novelty"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TraceDataError, match="share the twelve factors"):
        load_prompts(folder)
    shutil.copytree(PROMPTS_DIR, tmp_path / "other")
    (tmp_path / "other" / "retry.txt").write_text("=== retry ===\nRate the ${FACTOR} again, ${NAME}.\n")
    with pytest.raises(TraceDataError, match=r"retry.txt: placeholders \['NAME'\]; expected some of"):
        load_prompts(tmp_path / "other")


def test_edited_prompts_change_the_hash(tmp_path, prompts):
    import shutil

    folder = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, folder)
    path = folder / "factors" / "novelty.txt"
    path.write_text(path.read_text().replace("freshness", "newness"))
    edited = load_prompts(folder)
    assert edited.sha256 != prompts.sha256 and edited.describe()["packaged"] is False
    assert "newness" in edited.factor("novelty").definition


# ---- retries ---------------------------------------------------------------------------------------
def test_retries_are_bounded_then_missing(prompts, conversation):
    factor = prompts.factor("coherence")
    job = FactorJob("log", factor, factor_messages(conversation, factor, prompts), max_retries=2)
    job.record("It is fine. I give it 3.", prompts, "stop")
    assert not job.done and len(job.messages) == 3
    assert job.messages[1] == {"role": "assistant", "content": "It is fine. I give it 3."}
    assert "there is no <rating>N</rating> tag" in job.messages[2]["content"]
    assert (
        "Coherence" in job.messages[2]["content"] and "<rating>{score}</rating>" in job.messages[2]["content"]
    )
    job.record("<rating>9</rating>", prompts, "stop")
    assert not job.done and "outside 0-4" in job.messages[-1]["content"]
    job.record("<rating>", prompts, "length")
    assert job.done
    result = job.result()
    assert (result["score"], result["status"], result["attempts"]) == (None, "missing", 3)
    assert result["statuses"] == ["missing", "out_of_range", "missing"]
    assert "hit max_new_tokens" in result["detail"]
    with pytest.raises(RuntimeError):
        job.record("<rating>3</rating>", prompts)


def test_a_retry_can_succeed(prompts, conversation):
    factor = prompts.factor("novelty")
    job = FactorJob("log", factor, factor_messages(conversation, factor, prompts), max_retries=1)
    job.record("Most places are well known.", prompts)
    job.record("<rating>1</rating>", prompts)
    assert job.done and job.result()["score"] == 1 and job.result()["statuses"] == ["missing", "ok"]
    assert job.result()["rationale"] == "Most places are well known.\n\n<rating>1</rating>"


def test_rate_factors_through_the_llm_layer(stub_factory, prompts, conversation, tmp_path):
    server = stub_factory(
        scripted(
            {
                "Coherence": "<rating>4</rating>",
                "Novelty": ["no tag here", "<rating>2</rating>"],  # valid on the first retry
                "Diversity": ["no tag", "still none", "<rating>7</rating>"],  # never valid: missing
            }
        )
    )
    llm = load_llm(server.spec(), cache_path=tmp_path / "cache.sqlite")
    (results,) = rate_factors(llm, [conversation], prompts, max_retries=2)
    assert set(results) == set(FACTOR_IDS)
    assert results["coherence"]["score"] == 4 and results["coherence"]["attempts"] == 1
    assert results["novelty"]["score"] == 2 and results["novelty"]["attempts"] == 2
    assert results["diversity"]["score"] is None and results["diversity"]["status"] == "out_of_range"
    assert results["diversity"]["attempts"] == 3
    assert sum(r["score"] is None for r in results.values()) == 1
    assert llm.usage["requests"] == 12 + 1 + 2  # first tries, one retry for novelty, two for diversity
    # the same again is served from the cache, retries included
    llm.reset_usage()
    assert rate_factors(llm, [conversation], prompts, max_retries=2) == [results]
    assert llm.usage["requests"] == 0 and llm.usage["cache_hits"] == 15


def test_rate_factors_checks_arguments(prompts, conversation):
    with pytest.raises(ValueError, match="max_retries"):
        rate_factors(None, [conversation], prompts, max_retries=-1)
    with pytest.raises(KeyError, match="unknown factor"):
        rate_factors(None, [conversation], prompts, factors=["charm"])


# ---- the grammar fitted to the budget ------------------------------------------------------------
def test_the_rating_grammar_leaves_room_for_the_tag_within_the_budget():
    from trace_metrics.core.factors import RATING_GRAMMAR, TAG_CHARS, rating_grammar

    assert TAG_CHARS == len("<rating>4</rating>") == 18
    assert (
        rating_grammar(1018) == rating_grammar(4096) == rating_grammar() == RATING_GRAMMAR
    )  # cache keys kept
    assert "[^<]{0,1000}" in RATING_GRAMMAR
    assert rating_grammar(96) == 'root ::= [^<]{0,78} "<rating>" [0-4] "</rating>"'
    assert rating_grammar(18) == rating_grammar(8) == 'root ::= "<rating>" [0-4] "</rating>"'  # the tag alone


@pytest.mark.slow
def test_every_reply_under_a_small_budget_closes_with_its_rating(prompts, conversation, tmp_path):
    """The packaged SmolLM2 in process at 40 new tokens: the rationale is cut to 22 characters by the grammar,
    so each reply ends with its tag before the budget (at 1,000 characters, the demo's cut replies)."""
    from trace_llm import DecodingSettings, LLMConfigError
    from trace_llm.smollm2 import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    llm = load_llm("smollm2", DecodingSettings(max_new_tokens=40), cache_path=False, threads=1)
    try:
        (results,) = rate_factors(
            llm, [conversation], prompts, factors=["coherence", "novelty"], max_retries=0
        )
    finally:
        llm.close()
    assert {f: r["status"] for f, r in results.items()} == {"coherence": "ok", "novelty": "ok"}
    assert llm.usage["constrained"] == 2
