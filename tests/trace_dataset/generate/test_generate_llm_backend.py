"""The llm backend's prompt, parsing, quote snapping, validation, retries and fallback, with a scripted model
through the real LLM layer (tests/support/llm.py)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tests.support.llm import ScriptedLLM
from trace_dataset.generate.attempts import build_context, plan_for
from trace_dataset.generate.llm_backend import PromptBuilder, run_llm
from trace_dataset.generate.llm_parse import parse_turns, snap_quote
from trace_dataset.generate.template_backend import render_template
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase

N = 4


@pytest.fixture(scope="module")
def ctx(fixture_kb):
    return build_context(KnowledgeBase.load(fixture_kb), N, 42)


def answer_for(ctx, index: int, mutate=None) -> dict:
    """What a good model would answer for dialogue `index`: the template text as App. G JSON, with the
    first letter inside each quote case-flipped (a near-verbatim quote the backend must snap back)."""
    plan, rng = plan_for(ctx, index, 0, Counter())
    rendered = render_template(plan, ctx.cells[(plan.city, plan.poi_type)], ctx.kb, rng)
    turns = []
    for k, (pt, rt) in enumerate(zip(plan.turns, rendered, strict=True)):
        text = re.sub(r'"(\w)', lambda m: '"' + m.group(1).swapcase(), rt.text)
        turns.append(
            {
                "turn_id": k,
                "role": pt.role,
                "action": pt.action,
                "text": text,
                "referenced_poi_ids": list(pt.pois),
                "referenced_review_ids": [c.review_id for c in rt.citations],
                "citations": [{"label": c.label, "review_id": c.review_id} for c in rt.citations],
            }
        )
    out = {"turns": turns}
    return mutate(out) if mutate else out


def plan_llm(ctx, script=None) -> ScriptedLLM:
    """A model that answers like a good one (`answer_for`, found by the persona in the prompt), through the real
    LLM layer. `script[index][k]` replaces its k-th answer for dialogue `index` (JSON repairs count): a JSON
    value, a function of the good answer, or a text the layer cannot read as JSON. `calls` counts the answers
    per dialogue."""
    personas = {plan_for(ctx, i, 0, Counter())[0].persona: i for i in range(N)}
    calls: Counter = Counter()

    def reply(conversation):
        index = next(i for persona, i in personas.items() if persona in conversation[1]["content"])
        k = calls[index]
        calls[index] += 1
        step = (script or {}).get(index, [])
        todo = step[k] if k < len(step) else None
        if callable(todo):
            return answer_for(ctx, index, todo)
        return todo if todo is not None else answer_for(ctx, index)

    llm = ScriptedLLM(reply, model="fake-llm-1")
    llm.calls = calls
    return llm


def test_snap_quote():
    review = "The rooftop pool was heated and spotless. Our room was spacious with a sitting area."
    s = snap_quote("the rooftop pool was heated and spotless", review)
    assert s is not None and review[s.start : s.end] == "The rooftop pool was heated and spotless"
    s = snap_quote("room was spacious with a siting area", review)  # a typo
    assert s is not None and review[s.start : s.end].startswith("room was spacious with a sitting area")
    assert snap_quote("the lobby smelled of fresh lilies every morning", review) is None
    assert snap_quote(review + " And the bar served great cocktails all night long, too.", review) is None


def test_prompt_has_the_app_g_instructions(ctx):
    plan, _ = plan_for(ctx, 0, 0, Counter())
    messages = PromptBuilder(plan, ctx).messages()
    text = messages[1]["content"]
    assert "strict user/system alternation" in text and "EXACT verbatim review quotes" in text
    assert "greet_and_seek" in text and "farewell" in text and "[R1]" in text
    assert f"exactly {len(plan.turns)} turns" in text
    for bid in plan.recommended:
        assert bid in text


def test_good_answers_are_grounded_and_snapped(ctx):
    llm = plan_llm(ctx)
    run = run_llm(ctx, llm, attempts=2)
    assert run.llm_dialogues == N and run.fallbacks == 0 and run.attempts == N
    for r in run.results:
        d = json.loads(r.line)
        assert d["metadata"]["backend"] == "llm" and d["metadata"]["model"] == "fake-llm-1"
        for span in d["quote_spans"]:
            assert ctx.kb.review_text(span["review_id"])[span["start"] : span["end"]]
        quoted = [q for t in d["turns"] for q in re.findall(r'"([^"]+)"', t["text"])]
        texts = [ctx.kb.review_text(s["review_id"])[s["start"] : s["end"]] for s in d["quote_spans"]]
        assert quoted == texts  # every quote is now the exact review span


def test_retry_with_feedback_then_success(ctx):
    def drop_turn(out):
        out["turns"] = out["turns"][:-1]
        return out

    def invent_quote(out):
        for t in out["turns"]:
            if t["action"] == "recommend":
                t["text"] = re.sub(
                    r'"[^"]+"', '"the lobby smelled of fresh lilies every single morning"', t["text"], count=1
                )
        return out

    llm = plan_llm(ctx, {0: [drop_turn], 1: [invent_quote, invent_quote], 2: [{"nonsense": 1}]})
    run = run_llm(ctx, llm, attempts=3)
    assert run.llm_dialogues == N and run.fallbacks == 0
    assert run.reasons["llm_turn_count"] == 1 and run.reasons["quote_mismatch"] == 2
    # JSON outside the schema never reaches the backend: the LLM layer asks again (one JSON repair)
    assert "llm_json_shape" not in run.reasons and llm.usage["json_repairs"] == 1
    assert llm.calls == Counter({0: 2, 1: 3, 2: 2, 3: 1})
    # the backend's retries carry the previous answer and what was wrong with it
    retries = [p for p in llm.seen if p[-2]["role"] == "assistant" and "problems" in p[-1]["content"]]
    assert len(retries) == 3


def test_fallback_to_template_and_error_mode(ctx):
    bad = ["{"] * 4  # cut off, at both attempts and their JSON repair
    llm = plan_llm(ctx, {1: bad})
    run = run_llm(ctx, llm, attempts=2, fallback="template")
    assert run.fallbacks == 1 and run.llm_dialogues == N - 1
    assert run.reasons["llm_invalid_json"] == 2
    backends = [json.loads(r.line)["metadata"]["backend"] for r in run.results]
    assert backends == ["llm", "template", "llm", "llm"]
    report = run.report()
    assert report["template_fallbacks"] == 1 and report["describe"]["model"] == "fake-llm-1"
    with pytest.raises(TraceDataError, match="failed validation 2 times"):
        run_llm(ctx, plan_llm(ctx, {1: bad}), attempts=2, fallback="error")
    with pytest.raises(ValueError, match="unknown llm fallback"):
        run_llm(ctx, plan_llm(ctx), fallback="retry")


def test_parse_turns_checks_the_plan(ctx):
    plan, _ = plan_for(ctx, 0, 0, Counter())
    good = answer_for(ctx, 0)
    assert len(parse_turns(good, plan, ctx)) == len(plan.turns)
    with pytest.raises(Exception, match="llm_json_shape"):
        parse_turns(
            {"nonsense": 1}, plan, ctx
        )  # what a model outside the LLM layer's schema check could send
    swapped = json.loads(json.dumps(good))
    swapped["turns"][1]["action"] = "recommend"
    with pytest.raises(Exception, match="llm_plan_mismatch"):
        parse_turns(swapped, plan, ctx)
    # stray double quotes and labels in a user turn are neutralised, not counted as quotes
    user = json.loads(json.dumps(good))
    user["turns"][0]["text"] += ' I loved "that place" [R1].'
    rendered = parse_turns(user, plan, ctx)
    assert '"' not in rendered[0].text and "[R1]" not in rendered[0].text
    # labels are renumbered in order of appearance
    rec = next(k for k, t in enumerate(plan.turns) if t.action == "recommend")
    relabel = json.loads(json.dumps(good))
    t = relabel["turns"][rec]
    t["text"] = t["text"].replace("[R1]", "[R9]")
    t["citations"] = [
        {"label": "R9" if c["label"] == "R1" else c["label"], "review_id": c["review_id"]}
        for c in t["citations"]
    ]
    out = parse_turns(relabel, plan, ctx)[rec]
    assert "[R9]" not in out.text and "[R1]" in out.text and out.citations[0].label == "R1"


def test_generate_corpus_llm_backend_end_to_end(fixture_kb, tmp_path, ctx):
    from trace_dataset.generate import generate_corpus

    report = generate_corpus(
        fixture_kb, tmp_path / "c", n=N, backend="llm", llm=plan_llm(ctx), progress=False
    )
    assert report["llm"]["dialogues_written_by_llm"] == N
    assert report["parameters"]["llm"]["model"] == "fake-llm-1"
    assert report["parameters"]["llm_fallback"] == "template"
    with pytest.raises(TypeError, match="a spec string or a trace_llm.LLM, got object"):
        generate_corpus(fixture_kb, tmp_path / "d", n=N, backend="llm", llm=object(), progress=False)
