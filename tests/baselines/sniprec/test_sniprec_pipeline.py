"""SnipRec and its comparison systems as Trace pipelines, offline (rules snippets, the packaged MiniLM).

The model-backed tests are marked slow; they share one loaded encoder (`minilm`) where they build pipelines
directly.
"""

from __future__ import annotations

import json
import random
import re

import pytest

import baselines
from baselines.sniprec.pipeline import SnipRecBaseline
from baselines.sniprec.queries import QuerySnippet
from baselines.sniprec.scoring import accumulate
from baselines.sniprec.variants import DocumentBaseline, SentenceBaseline, SnippetBaseline
from tests.support.sniprec import CANDIDATES, dialogue, sample_dialogues, turn, write_data_dir
from trace_bench.cli import main
from trace_dataset.views import turn_rows
from trace_metrics.lib.entailment import NLIModelError

QUOTE_RE = re.compile(r'"([^"]+)" \[(R\d+)\]')


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))


def rows_of(dialogues, pool="closed"):
    return [r for d in dialogues for r in turn_rows(d, pool)]


def check_quotes(kb, pred):
    """Every quote is a verbatim substring of the review its label cites."""
    quotes = QUOTE_RE.findall(pred["response"])
    for span, label in quotes:
        assert span in kb.review_text(pred["citations"][label])
    return len(quotes)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [SnipRecBaseline, SnippetBaseline, SentenceBaseline, DocumentBaseline])
def test_every_system_answers_every_action_with_verbatim_quotes(kb, minilm, cls):
    pipe = cls(kb, encoder_model=minilm)
    assert pipe.name in baselines.SYSTEM_BASELINES and baselines.BASELINES[pipe.name] is cls
    dialogues = sample_dialogues(2)
    preds = list(pipe(rows_of(dialogues)))
    assert len(preds) == 8
    n_quotes = 0
    for row, pred in zip(rows_of(dialogues), preds, strict=True):
        if row["action"] == "farewell":
            assert pred["ranked_poi_ids"] == []
            continue
        assert sorted(pred["ranked_poi_ids"]) == sorted(set(CANDIDATES) - set(row["rejected_poi_ids"]))
        if row["action"] in ("recommend", "compare"):
            n_quotes += check_quotes(kb, pred)
            assert pred["meta"]["k"] == 10 and pred["meta"]["units"] == pipe.kind
    assert n_quotes >= 4
    described = pipe.describe()
    assert described["family"] == "non-LLM" and described["baseline"] == pipe.name
    assert "all-MiniLM-L6-v2" in described["variant"]
    assert described["parameters"]["units"] == pipe.kind


@pytest.mark.slow
def test_the_score_is_the_papers_rule_over_the_history(kb, minilm):
    pipe = SnipRecBaseline(kb, encoder_model=minilm, kappa=0)
    row = rows_of(sample_dialogues(1))[2]  # the compare turn after the rejection
    pred = next(pipe([row]))
    snippets = pred["meta"]["query_snippets"]
    by_turn: dict[int, list[QuerySnippet]] = {}
    for turn_id, sign, text, origin in snippets:
        by_turn.setdefault(turn_id, []).append(QuerySnippet(text, sign, origin))
    cands = tuple(p for p in CANDIDATES if p not in row["rejected_poi_ids"])
    groups = pipe._retrieve([(q.text, cands, 10) for qs in by_turn.values() for q in qs])
    turns = [[(q.sign, groups[(q.text, cands, 10)]) for q in qs] for qs in by_turn.values()]
    final = accumulate(turns, kappa=0)[-1]
    scores = [round(final.get(p, 0.0), 12) for p in pred["ranked_poi_ids"]]
    assert scores == sorted(scores, reverse=True)
    # "Not Harbor Fish House, it is too loud": a dislike of "loud" (the rejected POI's name generalised)
    assert [4, -1, "loud", "turn"] in snippets
    assert [2, -1, "long lines", "turn"] in snippets


@pytest.mark.slow
def test_a_rejection_without_a_stated_reason_dislikes_the_rejected_pois_categories(kb, minilm):
    turns = [
        turn(0, "user", "greet_and_seek", "Somewhere for dinner with fresh seafood."),
        turn(1, "system", "recommend", "Try Harbor Fish House.", refs=("p_sea",)),
        turn(
            2,
            "user",
            "reject_and_refine",
            "I'd rather skip Harbor Fish House. I'm not after that kind of place.",
        ),
        turn(3, "system", "recommend", "How about another?"),
    ]
    pipe = SnipRecBaseline(kb, encoder_model=minilm)
    pred = list(pipe(rows_of([dialogue("d", turns, CANDIDATES)])))[1]
    assert [2, -1, "This place is categorized as Seafood.", "rejection"] in pred["meta"]["query_snippets"]
    assert "p_sea" not in pred["ranked_poi_ids"]


@pytest.mark.slow
def test_session_isolation_and_turn_by_turn_use(kb, minilm):
    rows = rows_of(sample_dialogues(2))
    ref = {(p["dialogue_id"], p["turn_id"]): p for p in SnipRecBaseline(kb, encoder_model=minilm)(rows)}
    shuffled = list(rows)
    random.Random(1).shuffle(shuffled)
    pipe = SnipRecBaseline(kb, encoder_model=minilm)
    for batch_size in (1, 3):
        got = {(p["dialogue_id"], p["turn_id"]): p for p in pipe(shuffled, batch_size=batch_size)}
        assert got == ref
    # a plain turn row built by hand (what an interactive simulator sends), one turn at a time
    history = [turn(0, "user", "greet_and_seek", "Vegan food somewhere quiet, please.")]
    row = {
        "dialogue_id": "live",
        "turn_id": 1,
        "action": "recommend",
        "history": history,
        "rejected_poi_ids": [],
        "candidate_poi_ids": CANDIDATES,
        "scenario": sample_dialogues(1)[0]["scenario"],
    }
    first = next(pipe([row]))
    assert first["ranked_poi_ids"][0] == "p_veg"
    more = [
        *history,
        turn(1, "system", "ask_preference", "Anything else?"),
        turn(2, "user", "provide_preference", "I want barbecue and cold beer on a patio."),
    ]
    second = next(pipe([{**row, "turn_id": 3, "history": more}]))
    # SCORE_2 = SCORE_1 + the barbecue turn: the barbecue place moves up, the vegan place keeps its lead
    assert second["ranked_poi_ids"].index("p_bbq") < first["ranked_poi_ids"].index("p_bbq")
    assert next(pipe([row])) == first  # the later turn left nothing behind


@pytest.mark.slow
def test_nli_filter_with_a_model_and_without_one(kb, minilm, tmp_path):
    from trace_metrics.lib.tiny_nli import write_tiny_nli_model

    model = write_tiny_nli_model(tmp_path / "nli")
    pipe = SnipRecBaseline(kb, encoder_model=minilm, nli=str(model), t_ent=0.3)
    preds = list(pipe(rows_of(sample_dialogues(1))))
    assert all(p["meta"]["nli"] for p in preds)
    config = pipe.describe()["parameters"]
    assert config["nli_filter"] == "on" and config["nli_model"]["threshold"] == 0.3
    assert pipe.describe()["variant"].endswith("NLI nli")
    groups = [hits for hits in pipe._groups.values() if hits]
    assert groups, "the tiny model kept nothing at t_ent=0.3"
    for hits in pipe._groups.values():  # filtered at t_ent, ranked by entailment probability
        probs = [h.score for h in hits]
        assert all(p >= 0.3 for p in probs) and probs == sorted(probs, reverse=True)
    assert pipe.summary()["nli"]["pairs_computed"] > 0
    off = SnipRecBaseline(kb, encoder_model=minilm)
    assert off.describe()["parameters"]["nli_filter"] == "off (no NLI model given)"
    assert off.describe()["variant"].endswith("NLI off")
    with pytest.raises(NLIModelError, match="--nli /path/to/model"):
        SnipRecBaseline(kb, encoder_model=minilm, nli=str(tmp_path / "no" / "such" / "model"))


def test_parameters_are_checked_before_anything_is_loaded(kb):
    with pytest.raises(ValueError, match="snippets='llm' needs an LLM"):
        SnipRecBaseline(kb, snippets="llm")
    with pytest.raises(ValueError, match="expansion"):
        SnipRecBaseline(kb, expansion=True)
    with pytest.raises(ValueError, match="unknown query_mode"):
        SnipRecBaseline(kb, query_mode="both")
    with pytest.raises(ValueError, match="t_ent"):
        SnipRecBaseline(kb, t_ent=1.5)
    with pytest.raises(ValueError, match="k must be"):
        SnipRecBaseline(kb, k=0)
    with pytest.raises(TypeError, match="snippets"):
        SentenceBaseline(kb, snippets="rules")
    with pytest.raises(TypeError, match="nli"):
        SnippetBaseline(kb, nli="x")


@pytest.mark.slow
def test_offline_runs_are_valid_predictions_and_leaderboard_rows(tmp_path, capsys):
    from trace_harness.leaderboard.build import build_leaderboard

    data = write_data_dir(tmp_path / "corpus", sample_dialogues(3))
    runs = tmp_path / "runs"
    # the build command as its help prints it (`trace-bench sniprec build --kb DIR`): units and vectors first
    assert main(["sniprec", "build", "--kb", str(data / "knowledge_base")]) == 0
    assert "rules units of 4 POIs (4 extracted now, " in capsys.readouterr().out
    assert (
        main(
            [
                "run",
                "sniprec",
                "--snippets",
                "rules",
                "--data",
                str(data),
                "--out",
                str(runs / "sniprec.jsonl"),
                "--no-progress",
            ]
        )
        == 0
    )
    for name in ("sniprec_snippet", "sniprec_sentence", "sniprec_document"):
        assert (
            main(["run", name, "--data", str(data), "--out", str(runs / f"{name}.jsonl"), "--no-progress"])
            == 0
        )
    meta = json.loads((runs / "sniprec.jsonl.meta.json").read_text())
    assert meta["family"] == "non-LLM" and meta["variant"] == "rules snippets, all-MiniLM-L6-v2, NLI off"
    assert meta["parameters"]["snippets"] == "rules" and "llm" not in meta["parameters"]
    assert meta["summary"]["usage"]["units_extracted_pois"] == 0  # the build's store
    assert meta["summary"]["usage"]["texts_encoded"] > 0  # the query snippets (the units' vectors are cached)
    results = tmp_path / "results.json"
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(data),
                "--predictions",
                str(runs / "sniprec.jsonl"),
                "--out",
                str(results),
            ]
        )
        == 0
    )
    values = json.loads(results.read_text())["values"]
    assert values["grounding_score"] == 1.0 and values["recall@1"] is not None
    rows = build_leaderboard(data, runs, n_boot=0)
    labels = {r["baseline"]: r["system"] for r in rows}
    assert labels == {
        "sniprec": "SnipRec [rules snippets, all-MiniLM-L6-v2, NLI off]",
        "sniprec_snippet": "SnipRec-Snippet [rules snippets, all-MiniLM-L6-v2]",
        "sniprec_sentence": "SnipRec-Sentence [sentences, all-MiniLM-L6-v2]",
        "sniprec_document": "SnipRec-Document [documents, all-MiniLM-L6-v2]",
    }
    assert {r["family"] for r in rows} == {"non-LLM"} and all(r["session_isolated"] for r in rows)
    # the unit store was built once and is reused: a second run encodes nothing new
    assert (
        main(["run", "sniprec", "--data", str(data), "--out", str(runs / "again.jsonl"), "--no-progress"])
        == 0
    )
    again = json.loads((runs / "again.jsonl.meta.json").read_text())
    assert again["summary"]["usage"]["texts_encoded"] == 0
    assert (runs / "again.jsonl").read_bytes() == (runs / "sniprec.jsonl").read_bytes()


def test_cli_refuses_what_does_not_fit(tmp_path, capsys):
    data = write_data_dir(tmp_path / "corpus", sample_dialogues(1))
    out = str(tmp_path / "x.jsonl")
    assert main(["run", "tfidf", "--snippets", "rules", "--data", str(data), "--out", out]) == 2
    assert "has no parameter 'snippets'" in capsys.readouterr().err
    assert main(["run", "sniprec_sentence", "--snippets", "llm", "--data", str(data), "--out", out]) == 2
    assert (
        main(["run", "sniprec", "--snippets", "llm", "--data", str(data), "--out", out, "--no-progress"]) == 2
    )
    assert "needs an LLM" in capsys.readouterr().err


def test_a_run_encodes_every_searched_unit_once_before_its_first_batch(kb, tmp_path):
    from tests.support.sniprec import CountingEncoder

    rows = rows_of(sample_dialogues(2))
    model = CountingEncoder()
    pipe = SnipRecBaseline(kb, batch_size=1, encoder_model=model, cache_dir=str(tmp_path / "c"))
    preds = list(pipe(iter(rows)))  # any iterable of rows, one row per batch
    assert len(preds) == len(rows)
    pools = {pid for row in rows if row["action"] != "farewell" for pid in row["candidate_poi_ids"]}
    distinct = {u.text for pid in pools for u in pipe.store.units(pid)}
    assert model.calls[0] == len(distinct) and pipe.store.extracted == len(
        pools
    )  # one pass, before any batch
    assert pipe.index.memory_bytes()["distinct_texts"] == len(distinct)
    assert sum(model.calls[1:]) == pipe.index.encoded - len(distinct)  # later calls: query texts only
    again = SnipRecBaseline(kb, encoder_model=CountingEncoder(), cache_dir=str(tmp_path / "c"))
    assert list(again(rows)) == preds and again.index.encoded == 0 and again.store.extracted == 0


def test_quote_fallbacks_count_turns_so_their_share_is_of_turns(kb, tmp_path, monkeypatch):
    """A turn whose quotes all come from the query-term rule counts once: `quote_fallbacks` is divided by the
    run's system turns in the fallback report (12 quotes over 10 turns read as 120%)."""
    from baselines.sniprec import pipeline
    from tests.support.sniprec import CountingEncoder
    from trace_harness.fallbacks import report_of

    monkeypatch.setattr(
        pipeline, "best_units", lambda *args: {}
    )  # no unit behind any POI: every quote falls back
    rows = rows_of(sample_dialogues(2))
    pipe = SnipRecBaseline(kb, encoder_model=CountingEncoder(), cache_dir=str(tmp_path / "c"))
    preds = list(pipe(rows))
    counts = [p["meta"].get("counts", {}).get("quote_fallbacks", 0) for p in preds]
    quoted = [len(QUOTE_RE.findall(p["response"])) for p in preds]
    assert max(quoted) >= 2  # a turn with several quotes, each from the rule
    assert counts == [int(n > 0) for n in quoted]
    report = report_of({"quote_fallbacks": sum(counts)}, len(preds))
    assert report["kinds"]["quote_fallbacks"]["share"] == round(sum(counts) / len(preds), 4) <= 1


def test_the_llm_units_bar_moves_per_request_answered(kb, tmp_path, monkeypatch):
    """A chunk of POIs is one batch of LLM requests: the units bar counts the requests as they are answered
    (one per review), not the POIs once the whole chunk is back."""
    from baselines.sniprec.llm_snippets import LLMExtractor
    from baselines.sniprec.prompts import PromptRunner
    from baselines.sniprec.store import UnitStore
    from tests.support.llm import ScriptedLLM

    bars: list[dict] = []

    class Bar:
        def __init__(self, *args, **kwargs):
            bars.append({"total": kwargs["total"], "unit": kwargs["unit"], "moves": []})

        def update(self, n=1):
            bars[-1]["moves"].append(n)

        def close(self):
            pass

    monkeypatch.setattr("tqdm.auto.tqdm", Bar)
    extractor = LLMExtractor(PromptRunner(ScriptedLLM(lambda conv: ["the staff was friendly"])))
    store = UnitStore(kb, extractor, cache_dir=tmp_path / "c")
    pois = sorted(kb.pois)
    reviews = sum(len(kb.reviews_of(p)) for p in pois)
    assert store.ensure(pois, progress=True) == len(pois) and reviews > len(pois)
    assert bars == [{"total": reviews, "unit": "req", "moves": [1] * reviews}]
    assert extractor.llm.progress is None and extractor.on_request is None  # put back after the pass


def test_query_failures_count_a_turn_once_however_long_its_history(kb, tmp_path, monkeypatch):
    """Each system turn re-reads every earlier user turn: a failed extraction counts once per system turn
    whose queries include it, never once per earlier utterance (which passed 100% of the turns)."""
    from tests.support.sniprec import CountingEncoder

    pipe = SnipRecBaseline(kb, encoder_model=CountingEncoder(), cache_dir=str(tmp_path / "c"))
    real = pipe._query_snippets

    def all_failed(inputs):
        return [[(ex, snips, True) for ex, snips, _ in rows] for rows in real(inputs)]

    monkeypatch.setattr(pipe, "_query_snippets", all_failed)
    preds = list(pipe(rows_of(sample_dialogues(2))))
    counts = [p["meta"].get("counts", {}).get("query_failures", 0) for p in preds]
    histories = [len(p["meta"].get("query_snippets", [])) for p in preds]
    assert max(histories) >= 2 and set(counts) == {0, 1}  # several earlier turns, still one per turn
    assert counts == [int("k" in p["meta"]) for p in preds]  # every turn that read its history
