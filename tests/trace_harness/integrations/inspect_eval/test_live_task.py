"""`inspect eval trace_bench/trace_live` with a scripted model: the rules traveller talks to the Inspect model
through the interaction loop, and the log's scores are `trace-bench interact`'s for the same replies."""

from __future__ import annotations

from tests.support.inspect_model import zero_shot_reply
from tests.trace_harness.integrations.inspect_eval.conftest import N_BOOT, run_task
from trace_dataset.io import read_json, read_jsonl
from trace_harness.integrations.inspect_eval.live import ITEM_KEY, flat_live_metrics
from trace_harness.integrations.inspect_eval.live_setup import ModelSystem, load_live
from trace_harness.protocols.interactive.run import run_interactive

TRAVELLERS = 2


def test_the_live_task_scores_as_trace_bench_interact(small_corpus, tmp_path):
    log, script = run_task(
        "trace_bench/trace_live", small_corpus, tmp_path / "logs", n=TRAVELLERS, turns=4, n_boot=N_BOOT
    )
    assert log.eval.task_registry_name == "trace_bench/trace_live"
    logged = {name: m.value for name, m in log.results.scores[0].metrics.items()}

    setup = load_live(small_corpus, n=TRAVELLERS, max_turns=4)
    system = ModelSystem(setup.turns, lambda request: [(zero_shot_reply(request.messages), False)])
    expected = run_interactive(
        system, small_corpus, tmp_path / "interact", n=TRAVELLERS, turns=4, n_boot=N_BOOT, progress=False
    )
    assert logged == flat_live_metrics(expected)
    assert {"success_rate", "turns_to_success", "sniprec_hit@1", "hit@1", "tsr", "cgs"} <= set(logged)
    assert logged["dialogues"] == TRAVELLERS

    records = {
        r["dialogue_id"]: r for r in read_jsonl(tmp_path / "interact" / "data" / "interactive.jsonl.gz")
    }
    system_turns = 0
    for sample in log.samples:
        item = sample.store[ITEM_KEY]
        assert item["record"]["turns"] == records[sample.id]["turns"]  # the same conversation
        assert [m.text for m in sample.messages] == [t["text"] for t in item["record"]["turns"]]
        score = sample.scores["trace_live_scores"]
        assert score.metadata[ITEM_KEY] == item
        for turn in item["record"]["turns"]:
            for c in turn["citations"]:
                assert f"[{c['label']}] review `{c['review_id']}`" in score.explanation
        system_turns += sum(t["role"] == "system" for t in item["record"]["turns"])
    assert len(script.seen) == system_turns  # one request per system turn (every answer valid)
    assert read_json(tmp_path / "interact" / "metrics.json")["n_dialogues"] == TRAVELLERS
