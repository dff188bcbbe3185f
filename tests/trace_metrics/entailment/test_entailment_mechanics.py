"""Entailment mechanics on a tiny random-weight DeBERTa-v2 (no Hub access): batching and order, label order
from id2label, thresholds, caching and resume, categories, CGS_ent, the no-model error, accelerate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trace_metrics.lib import entailment as ent
from trace_metrics.lib.entailment import (
    NLICache,
    NLIModelError,
    NLIScorer,
    aggregate_entailment,
    category_summary,
    cgs_ent,
    cited_premises,
    entailment_label_index,
    entailment_scores,
    rescore,
)
from trace_metrics.lib.stats import threshold_sweep

PAIRS = [
    ("the food was great and the service was friendly", "food great"),
    ("bad service slow", "the staff were friendly very friendly indeed and the room was clean"),
    ("cozy quiet place", "loud"),
    ("the hotel pool and gym were clean", "clean pool"),
    ("we loved the pizza tacos and sushi, definitely would visit again for dinner", "tasty pizza"),
    ("expensive but lovely views from the bar at night", "cheap bar"),
    ("the museum tour was amazing", "the museum tour was terrible and the staff were rude to us"),
]


def direct_probs(model_dir: Path, pairs) -> torch.Tensor:
    """Softmax over all labels, one pair at a time, straight from transformers (no batching, no padding)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    rows = []
    with torch.inference_mode():
        for premise, claim in pairs:
            enc = tok(premise, claim, return_tensors="pt")
            rows.append(model(**enc).logits.float().softmax(-1)[0])
    return torch.stack(rows)


def scorer(model_dir, tmp_path=None, **kw) -> NLIScorer:
    kw.setdefault("cache_path", False if tmp_path is None else tmp_path / "nli.sqlite")
    return NLIScorer(model_dir, show_progress=False, **kw)


# --- batching and order ---------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [1, 2, 3, 64])
def test_batched_probs_match_unbatched_in_input_order(tiny_nli_dir, batch_size):
    expected = direct_probs(tiny_nli_dir, PAIRS)[:, 2].tolist()
    s = scorer(tiny_nli_dir, batch_size=batch_size)
    got = s.entailment_probs(PAIRS)
    assert got == pytest.approx(expected, abs=1e-5)
    assert s.model_calls == -(-len(PAIRS) // batch_size)
    assert len(set(round(p, 4) for p in got)) > 3  # the tiny model does tell pairs apart


def test_batches_are_length_sorted_with_dynamic_padding(tiny_nli_dir, monkeypatch):
    s = scorer(tiny_nli_dir, batch_size=2)
    widths = []
    forward = s.model.forward

    def spy(*args, **kwargs):
        widths.append(kwargs["input_ids"].shape[1])
        return forward(*args, **kwargs)

    monkeypatch.setattr(s.model, "forward", spy)
    s.entailment_probs(PAIRS)
    assert widths == sorted(widths)  # shortest batches first
    lengths = sorted(len(s.tokenizer(p, c)["input_ids"]) for p, c in PAIRS)
    assert widths == [
        max(lengths[i : i + 2]) for i in range(0, len(lengths), 2)
    ]  # padded to the batch's longest


def test_duplicate_pairs_are_scored_once_and_returned_everywhere(tiny_nli_dir):
    s = scorer(tiny_nli_dir, batch_size=4)
    probs = s.entailment_probs(PAIRS + PAIRS[::-1])
    assert s.pairs_computed == len(PAIRS)
    assert probs[: len(PAIRS)] == probs[len(PAIRS) :][::-1]
    assert s.entailment_probs([]) == []


# --- label order ------------------------------------------------------------------------------------


def test_label_order_is_read_from_id2label(tiny_nli_dir, permuted_nli_dir):
    full = direct_probs(tiny_nli_dir, PAIRS)  # same weights in both folders
    a = scorer(tiny_nli_dir)
    b = scorer(permuted_nli_dir)
    assert (a.entail_index, b.entail_index) == (2, 0)
    assert a.entailment_probs(PAIRS) == pytest.approx(full[:, 2].tolist(), abs=1e-5)
    assert b.entailment_probs(PAIRS) == pytest.approx(full[:, 0].tolist(), abs=1e-5)
    assert max(abs(x - y) for x, y in zip(full[:, 0].tolist(), full[:, 2].tolist(), strict=True)) > 0.05
    assert a.describe()["entailment_label"] == "entailment"
    assert b.describe()["entailment_label"] == "ENTAILMENT"


@pytest.mark.parametrize(
    ("id2label", "index"),
    [
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, 0),
        ({"0": "CONTRADICTION", "1": "Entailment", "2": "NEUTRAL"}, 1),
        ({0: "not_entailment", 1: "entailment"}, 1),
    ],
)
def test_entailment_label_index(id2label, index):
    assert entailment_label_index(id2label) == index


@pytest.mark.parametrize(
    "id2label",
    [
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {0: "entailment", 1: "Entailment"},
        {0: "positive", 1: "negative"},
    ],
)
def test_model_without_one_entailment_label_is_refused(id2label, tiny_nli_dir, tmp_path):
    with pytest.raises(NLIModelError, match="named 'entailment'"):
        entailment_label_index(id2label)
    if len(id2label) == 3:
        from trace_metrics.lib.tiny_nli import relabel

        bad = tmp_path / "bad"
        shutil.copytree(tiny_nli_dir, bad)
        relabel(bad, id2label)
        with pytest.raises(NLIModelError, match="LABEL_0"):
            scorer(bad)


# --- no model -------------------------------------------------------------------------------------


def test_missing_local_folder_fails_with_how_to_supply(tmp_path):
    with pytest.raises(NLIModelError) as err:
        NLIScorer(tmp_path / "no-such-model", cache_path=False)
    message = str(err.value)
    assert "does not exist" in message and "--nli /path/to/model" in message and "hf download" in message


def test_unreachable_hub_model_fails_with_how_to_supply(tmp_path):
    # local_files_only and an empty Hub cache: what an offline machine without the model sees
    with pytest.raises(NLIModelError) as err:
        NLIScorer(
            "cross-encoder/nli-deberta-v3-base",
            cache_path=False,
            local_files_only=True,
            hub_cache_dir=tmp_path,
        )
    message = str(err.value)
    assert "cross-encoder/nli-deberta-v3-base" in message and "--nli /path/to/model" in message
    assert "No other score is substituted" in message


def test_folder_that_is_not_a_model_fails(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(NLIModelError, match="cannot load NLI model"):
        NLIScorer(tmp_path / "empty", cache_path=False)


# --- caching and resume ---------------------------------------------------------------------------


def test_second_run_makes_no_model_call(tiny_nli_dir, tmp_path):
    first = scorer(tiny_nli_dir, tmp_path, batch_size=3)
    probs = first.entailment_probs(PAIRS)
    assert first.model_calls == 3 and first.pairs_computed == len(PAIRS)
    first.close()
    second = scorer(tiny_nli_dir, tmp_path, batch_size=3)
    assert second.entailment_probs(PAIRS[::-1]) == probs[::-1]
    assert (second.model_calls, second.pairs_computed, second.cache_hits) == (0, 0, len(PAIRS))
    assert len(NLICache(tmp_path / "nli.sqlite")) == len(PAIRS)


def test_cache_is_keyed_by_model(tiny_nli_dir, permuted_nli_dir, tmp_path):
    a = scorer(tiny_nli_dir, tmp_path)
    a.entailment_probs(PAIRS)
    b = scorer(permuted_nli_dir, tmp_path)  # other labels: another model, nothing reused
    b.entailment_probs(PAIRS)
    assert b.pairs_computed == len(PAIRS)
    assert a.model_key != b.model_key
    assert scorer(tiny_nli_dir, tmp_path, dtype="float32").model_key == a.model_key
    assert scorer(tiny_nli_dir, tmp_path, max_length=64).model_key != a.model_key


def test_interrupted_run_resumes_from_the_cache(tiny_nli_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(ent, "CHUNK_BATCHES", 1)  # one batch per chunk: cached after every batch
    s = scorer(tiny_nli_dir, tmp_path, batch_size=2)
    forward = s._forward
    calls = {"n": 0}

    def flaky(pairs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return forward(pairs)

    monkeypatch.setattr(s, "_forward", flaky)
    with pytest.raises(KeyboardInterrupt):
        s.entailment_probs(PAIRS)
    resumed = scorer(tiny_nli_dir, tmp_path, batch_size=2)
    probs = resumed.entailment_probs(PAIRS)
    assert resumed.pairs_computed == len(PAIRS) - 4  # two chunks of two were saved before the interruption
    assert probs == pytest.approx(scorer(tiny_nli_dir, batch_size=2).entailment_probs(PAIRS), abs=1e-6)


# --- responses, thresholds, categories, CGS_ent ------------------------------------------------------

RESPONSES = [
    'I recommend Cafe A [R1]. The beignets are "fresh and hot" [R1]. It has 4.5 stars. The patio faces the river.',
    "Here are two options. Cafe B is quiet [R2].",
    "No citation at all. Nothing to entail.",
    "",
]
SOURCES = [
    ["The beignets are fresh and hot."],
    ["Cafe A review", "Cafe B is quiet and cozy."],
    ["unused"],
    [],
]


def test_claims_premises_and_scores(fake_scorer):
    probs = {
        "I recommend Cafe A.": 0.1,
        'The beignets are "fresh and hot".': 0.97,
        "It has 4.5 stars.": 0.5,
        "The patio faces the river.": 0.49,
        "Here are two options.": 0.2,
        "Cafe B is quiet.": 0.8,
    }
    s = fake_scorer(probs)
    res = entailment_scores(RESPONSES, SOURCES, s)
    assert [r["n_claims"] for r in res] == [4, 2, 2, 0]
    assert [r["n_premises"] for r in res] == [1, 1, 0, 0]  # only the labels the response contains
    assert [r["entailment"] for r in res] == [0.5, 0.5, 0.0, 0.0]  # 0.5 is entailed at threshold 0.5
    assert [c["category"] for c in res[0]["claims"]] == ["Framing", "Quote", "Rating-meta", "Other-claim"]
    assert res[1]["claims"][1]["prob"] == 0.8 and res[1]["claims"][1]["premise"] == 0
    assert res[2]["claims"][0]["prob"] is None and not res[2]["claims"][0]["entailed"]
    pairs = [p for call in s.calls for p in call]
    assert ("Cafe B is quiet and cozy.", "Cafe B is quiet.") in pairs and all(p[0] != "unused" for p in pairs)
    assert rescore(res, 0.51) == [0.25, 0.5, 0.0, 0.0]
    assert [r["entailment"] for r in entailment_scores(RESPONSES, SOURCES, s, threshold=0.0)] == [
        1.0,
        1.0,
        0.0,
        0.0,
    ]
    sweep = threshold_sweep([[c["prob"] for c in r["claims"]] for r in res])
    # per item at 0.3/0.4: 3/4, 1/2, 0, 0; at 0.5: 2/4, 1/2; at 0.6/0.7: 1/4, 1/2
    assert sweep == {0.3: 0.3125, 0.4: 0.3125, 0.5: 0.25, 0.6: 0.1875, 0.7: 0.1875}
    with pytest.raises(ValueError, match="threshold"):
        entailment_scores(RESPONSES, SOURCES, s, threshold=1.5)
    with pytest.raises(ValueError, match="one per response"):
        entailment_scores(RESPONSES, SOURCES[:2], s)


def test_max_over_premises(fake_scorer):
    class ByPremise(fake_scorer):
        def entailment_probs(self, pairs):
            return [0.9 if premise == "second" else 0.2 for premise, _ in pairs]

    res = entailment_scores(["It is good [R1] [R2]."], [["first", "second"]], ByPremise({}))
    claim = res[0]["claims"][0]
    assert (claim["prob"], claim["premise"], claim["entailed"]) == (0.9, 1, True)


def test_premise_scope():
    assert cited_premises("x [R2]", ["a", "b", "c"]) == ["b"]
    assert cited_premises("x [R2] [R9]", ["a", None, "c"]) == []
    assert cited_premises("x", ["a", None, "a", "c"], "all") == ["a", "c"]
    with pytest.raises(ValueError, match="premise scope"):
        cited_premises("x", [], "some")


def test_category_summary_and_aggregate(fake_scorer):
    s = fake_scorer({'The beignets are "fresh and hot".': 0.97, "Cafe B is quiet.": 0.8})
    res = entailment_scores(RESPONSES, SOURCES, s)
    summary = category_summary(res)
    assert summary["n_quote"] == 1 and summary["n_framing"] == 2 and summary["n_other_claim"] == 4
    assert summary["share_rating_meta"] == 1 / 8 and summary["entailed_quote"] == 1.0
    assert summary["entailed_other_claim"] == 0.25
    agg = aggregate_entailment(res, [0.025, 0.1, 0.0, 0.0], [0.5, 1.0, 1.0, 1.0], thresholds=[0.3, 0.9])
    assert agg["entailment"] == pytest.approx((0.25 + 0.5) / 4)
    # per response: 0.25*0.5*0.75, 0.5*1*1, 0, 0
    assert agg["cgs_ent_turn_mean"] == pytest.approx((0.25 * 0.5 * 0.75 + 0.5) / 4)
    # the leaderboard's cgs_ent: the formula on the means (Table 22)
    assert agg["cgs_ent"] == pytest.approx(0.1875 * min(1, 0.03125 / 0.05) * (0.5 + 0.5 * 0.875))
    assert agg["entailment@0.9"] == pytest.approx(0.25 / 4)
    assert (agg["n"], agg["n_claims"], agg["n_without_premises"]) == (4, 8, 2)
    with pytest.raises(ValueError, match="both"):
        aggregate_entailment(res, [0.1] * 4, None)


def test_cgs_ent_uses_the_cgs_formula():
    from trace_metrics.lib.grounding import composite

    assert cgs_ent([1.0, 0.4], [0.025, 0.2], [0.5, 0.0]) == [0.375, 0.2]
    assert cgs_ent([0.3], [0.02], [0.2], gate=0.1) == [composite(0.3, 0.02, 0.2, gate=0.1)]
    with pytest.raises(ValueError, match="lengths"):
        cgs_ent([1.0], [0.1, 0.2], [1.0])


def test_real_model_end_to_end_on_tiny(tiny_nli_dir, tmp_path):
    s = scorer(tiny_nli_dir, tmp_path, batch_size=2)
    res = entailment_scores(RESPONSES, SOURCES, s)
    assert all(0.0 <= r["entailment"] <= 1.0 for r in res)
    probs = [c["prob"] for r in res[:2] for c in r["claims"]]
    assert all(0.0 <= p <= 1.0 for p in probs)
    again = scorer(tiny_nli_dir, tmp_path, batch_size=5)
    assert entailment_scores(RESPONSES, SOURCES, again) == res and again.model_calls == 0


# --- accelerate -----------------------------------------------------------------------------------


def test_single_process_goes_through_accelerate_split_and_gather(tiny_nli_dir, monkeypatch):
    import accelerate.utils
    from accelerate import PartialState

    expected = scorer(tiny_nli_dir).entailment_probs(PAIRS)
    seen = {"split": [], "gather": []}
    split = PartialState.split_between_processes
    gather = accelerate.utils.gather_object

    def spy_split(self, inputs, *args, **kwargs):
        seen["split"].append(len(inputs))
        return split(self, inputs, *args, **kwargs)

    def spy_gather(obj):
        seen["gather"].append(len(obj))
        return gather(obj)

    monkeypatch.setattr(PartialState, "split_between_processes", spy_split)
    monkeypatch.setattr(accelerate.utils, "gather_object", spy_gather)
    monkeypatch.setattr(ent, "CHUNK_BATCHES", 2)
    s = scorer(tiny_nli_dir, batch_size=2)
    assert s.entailment_probs(PAIRS) == pytest.approx(expected, abs=1e-5)
    assert seen == {"split": [4, 3], "gather": [4, 3]}  # chunks of 2 batches x 2 pairs x 1 process
    state = PartialState()
    assert state.num_processes == 1 and state.is_main_process
    assert s.describe()["num_processes"] == 1
    assert s.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert s.dtype == ("float16" if s.device.type == "cuda" else "float32")


DIST_SCRIPT = """
import json, sys
from trace_metrics.lib.entailment import NLIScorer
pairs = json.loads(sys.argv[2])
s = NLIScorer(sys.argv[1], batch_size=2, cache_path=sys.argv[4], show_progress=False)
probs = s.entailment_probs([tuple(p) for p in pairs])
with open(sys.argv[3] + f".{s._state.process_index}", "w") as f:
    json.dump({"probs": probs, "computed": s.pairs_computed, "processes": s._state.num_processes}, f)
"""


@pytest.mark.slow
def test_two_cpu_processes_split_and_gather_in_order(tiny_nli_dir, tmp_path):
    """torchrun starts two CPU processes (what `accelerate launch` does on GPUs); each scores half."""
    script = tmp_path / "dist.py"
    script.write_text(DIST_SCRIPT)
    pairs = PAIRS + [(p, c + " again") for p, c in PAIRS]
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        "29561",
        str(script),
        str(tiny_nli_dir),
        json.dumps(pairs),
        str(tmp_path / "out"),
        str(tmp_path / "cache.sqlite"),
    ]
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    subprocess.run(cmd, check=True, env=env, timeout=300, capture_output=True)
    outs = [json.loads((tmp_path / f"out.{i}").read_text()) for i in range(2)]
    assert [o["processes"] for o in outs] == [2, 2]
    assert sorted(o["computed"] for o in outs) == [7, 7]
    expected = scorer(tiny_nli_dir).entailment_probs(pairs)
    for o in outs:  # every process holds all results, in input order
        assert o["probs"] == pytest.approx(expected, abs=1e-5)
    assert len(NLICache(tmp_path / "cache.sqlite")) == len(pairs)  # the main process wrote the cache
