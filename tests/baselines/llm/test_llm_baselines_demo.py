"""The main job's opt-in LLM step: the LLM baselines beside the named others on a seeded subset, tables printed
(scripted model answers here; the step's default model is the packaged SmolLM2)."""

from __future__ import annotations

from spaces_app import demo
from tests.support.llm import ScriptedLLM
from tests.support.llm_baselines import WordEncoder, ranking_reply


def test_llm_step_runs_on_a_seeded_subset_apart_from_the_main_runs(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo, "DEMO_LLM_SETTINGS", {"llm": ScriptedLLM(ranking_reply()), "max_new_tokens": 8})
    monkeypatch.setattr(demo, "DEMO_LLM_DIALOGUES", 1)
    # no model here
    monkeypatch.setattr("baselines.toolkit.dense.load_encoder", lambda *a, **k: WordEncoder())
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    # CoRE's part of the step runs against a real server in tests/spaces_app/test_demo_core_step.py
    monkeypatch.setattr(demo, "run_core_step", lambda *a, **k: {})
    failed = demo.run_llm_step(data_dir, tmp_path, "validation", 42, ["tfidf"])
    assert failed == {}
    runs = sorted(p.name for p in (tmp_path / "llm_runs").glob("*.jsonl"))
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
    assert not (tmp_path / "runs").exists()  # the main leaderboard's folder is left alone
    out = capsys.readouterr().out
    assert "1-dialogue subset of the validation split" in out
    assert (
        "LLM Zero-Shot (scripted-model)" in out and "TF-IDF" in out and "Memory-Aug. (scripted-model)" in out
    )
    again = demo.run_llm_step(data_dir, tmp_path, "validation", 42, ["tfidf"])  # done stages are skipped
    assert again == {}
