"""The main job's opt-in LLM step: the LLM baselines beside the named others on a seeded subset, CoRE on two of
them, tables printed (scripted models here; the step's default model is the packaged SmolLM2)."""

from __future__ import annotations

from tests.support.core import scripted
from tests.support.llm import ScriptedLLM
from tests.support.llm_baselines import WordEncoder, ranking_reply, write_data_dir
from trace_harness.main_job import llm_step
from trace_harness.main_job.options import DemoConfig


def core_reply(conv):
    return scripted()({"messages": conv})[1]


def test_llm_step_runs_on_a_seeded_subset_apart_from_the_main_runs(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo"
    write_data_dir(out / "hydrated")
    monkeypatch.setattr(llm_step, "LLM_STEP_DIALOGUES", 1)
    monkeypatch.setattr(
        "baselines.toolkit.dense.load_encoder", lambda *a, **k: WordEncoder()
    )  # no model here
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    config = DemoConfig(out=out, split="validation")

    def llms():
        return {"systems": ScriptedLLM(ranking_reply()), "core": ScriptedLLM(core_reply)}

    assert llm_step.run_llm_step(config, ["tfidf"], llms()) == {}
    runs = sorted(p.name for p in (out / "llm_runs").glob("*.jsonl"))
    assert runs == sorted(
        f"{n}.jsonl"
        for n in (
            "tfidf",
            "llm_zero_shot",
            "dst",
            "rag_citation",
            "multi_review_synthesis",
            "itinerary_llm",
            "memory_aug",
        )
    )
    assert not (out / "runs").exists() and not (out / "leaderboard").exists()  # the main runs are left alone
    assert sorted(p.parent.name for p in (out / "core").glob("*/summary.json")) == ["llm_zero_shot", "tfidf"]
    printed = capsys.readouterr().out
    assert (
        "(max_new_tokens=64, json_repairs=0, reviews_per_poi=1; dst: max_new_tokens=192) on a seeded 1-dialogue "
        "subset of the "
        "validation split" in printed
    )
    assert "LLM Zero-Shot (scripted-model)" in printed and "TF-IDF" in printed
    assert "Memory-Aug. (scripted-model)" in printed
    assert "CoRE (smollm2, {'limit': 1, 'max_new_tokens': 96, 'max_rounds': 1}) on tfidf:" in printed
    again = llm_step.run_llm_step(config, ["tfidf"], llms())  # done stages are skipped
    assert again == {} and "CoRE (smollm2" not in capsys.readouterr().out  # CoRE did not run again


def test_a_system_whose_run_did_not_complete_gets_no_core_run(tmp_path):
    from trace_dataset.io import write_json
    from trace_harness.protocols.teacher_forced.runner import meta_path
    from trace_harness.reproduce.jobs import Context, build_jobs, closed_run

    out = tmp_path / "demo"
    write_data_dir(out / "llm_subset")
    config = llm_step.llm_config(DemoConfig(out=out, split="validation"), ["tfidf"])
    ctx = Context(config)
    for system, complete in (("tfidf", True), ("llm_zero_shot", False)):  # llm_zero_shot's run was cut short
        closed_run(config, system).parent.mkdir(parents=True, exist_ok=True)
        closed_run(config, system).write_text("", encoding="utf-8")
        write_json(meta_path(closed_run(config, system)), {"complete": complete})
    assert [s.name for s in llm_step.core_stages(ctx, build_jobs(config))] == ["LLM step: CoRE on tfidf"]
