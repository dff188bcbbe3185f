"""The reliability report end to end through the real LLM layer with scripted judges: a judge that rates
length shows the bias and its LC score removes it; a CoRE judge that reads the list's order shows the flips;
the report's bytes are the same on a rerun; the CLI writes it and the CoRE table shows the verdicts."""

from __future__ import annotations

import json

import pytest

from tests.support.core import scripted
from tests.support.judges import LengthLovingJudge, order_sensitive_core
from tests.support.llm import ScriptedLLM
from trace_bench.cli import main
from trace_dataset.io import read_jsonl, write_jsonl
from trace_metrics.core.reliability import build_report, read_verdicts, write_report
from trace_metrics.core.report import format_reliability, format_summary
from trace_metrics.core.rerate import core_subject, judge_subject, system_models
from trace_metrics.core.runner import collect_logs, run_corpus
from trace_metrics.lib.reliability import CARE, NOT_RELIABLE

FILLER = "It is a pleasant place with friendly staff and a calm terrace that many visitors praise warmly."


def _padded(predictions, path):
    """The same predictions with longer responses (each padded by 1-3 filler sentences: length varies)."""
    rows = list(read_jsonl(predictions))
    for i, row in enumerate(rows):
        row["response"] = row["response"] + (" " + FILLER) * (1 + i % 3)
    write_jsonl(path, rows)
    return path


def test_a_length_loving_judge_shows_the_bias_and_lc_removes_it(data_dir, predictions, tmp_path):
    long = _padded(predictions, tmp_path / "verbose.jsonl")
    llm = LengthLovingJudge()
    subject = judge_subject(llm, data_dir, [predictions, long])
    report = build_report(subject, 2, judge=llm.describe())
    entry = report["keys"]["judge_relevance"]
    assert entry["length"]["spearman"] > 0.7 and entry["verdicts"]["length_rho"] == NOT_RELIABLE
    systems = entry["length"]["systems"]
    raw_gap = systems["verbose"]["raw"] - systems["tfidf"]["raw"]
    lc_gap = systems["verbose"]["lc"] - systems["tfidf"]["lc"]
    assert raw_gap > 1.0 and abs(lc_gap) < 0.25 * raw_gap
    # it ignores order and seed: no flip, every repeat the same
    assert entry["order"]["flip_rate"] == 0.0 and entry["repeat"]["identical_share"] == 1.0
    assert entry["verdicts"]["order_flip_rate"] != NOT_RELIABLE


def _core_run(tmp_path, data_dir, predictions, prompts, reply):
    logs, source = collect_logs(predictions, data_dir)
    llm = ScriptedLLM(reply)
    out = tmp_path / "core"
    run_corpus(llm, logs, out, prompts, source=source, factors=["appropriateness", "diversity"], max_rounds=1)
    return llm, out


def test_core_report_counts_order_flips_and_is_deterministic(data_dir, predictions, prompts, tmp_path):
    llm, run = _core_run(tmp_path, data_dir, predictions, prompts, order_sensitive_core)
    subject = core_subject(llm, [run])
    assert subject.keys == ("appropriateness", "diversity", "factor_mean", "overall")
    report = build_report(subject, 3, judge=llm.describe())
    flips = report["keys"]["appropriateness"]["order"]
    assert flips["n_pairs"] == 3 and flips["flip_rate"] == 1.0  # every toy list has two or more places
    assert report["keys"]["appropriateness"]["verdict"] == NOT_RELIABLE
    assert report["keys"]["overall"]["order"]["flip_rate"] == 0.0
    assert report["self_preference"]["flag"] is False
    write_report(report, tmp_path / "a")
    write_report(build_report(core_subject(llm, [run]), 3, judge=llm.describe()), tmp_path / "b")
    for name in ("reliability.json", "reliability.md", "reliability.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    verdicts = read_verdicts(tmp_path / "a")
    assert verdicts["appropriateness"]["verdict"] == NOT_RELIABLE
    summary = json.loads((run / "summary.json").read_text())
    table = format_summary(summary, verdicts)
    assert "reliability" in table.splitlines()[0] and NOT_RELIABLE in table


def test_core_subject_refuses_another_judge(data_dir, predictions, prompts, tmp_path):
    _, run = _core_run(tmp_path, data_dir, predictions, prompts, order_sensitive_core)
    with pytest.raises(Exception, match="re-rates with the run's own judge"):
        core_subject(ScriptedLLM(order_sensitive_core, model="another"), [run])


def test_cli_reliability_on_a_core_run(stub_factory, data_dir, predictions, tmp_path, capsys):
    server = stub_factory(scripted())
    common = ["--llm", server.spec(), "--llm-cache", str(tmp_path / "cache.sqlite")]
    run = tmp_path / "run"
    score = ["core", "score", "--data", str(data_dir), "--predictions", str(predictions), "--out", str(run)]
    assert main([*score, "--factors", "appropriateness", "--rounds", "1", *common]) == 0
    assert main(["core", "reliability", "--run", str(run), "--k", "2", *common]) == 0
    printed = capsys.readouterr().out
    assert "core reliability" in printed and "wrote" in printed
    report = json.loads((run / "reliability" / "reliability.json").read_text())
    # the scripted server always answers 3: every repeat and order the same, no length relation
    entry = report["keys"]["appropriateness"]
    assert entry["repeat"]["identical_share"] == 1.0 and entry["order"]["flip_rate"] == 0.0
    # 3 of 3 identical, but the Wilson lower bound of 3/3 is 0.44: three items cannot earn "reliable"
    assert entry["repeat"]["identical_ci"][0] < 0.7 and entry["verdicts"]["identical_share"] == CARE
    assert main(["core", "reliability", "--kind", "judge", "--k", "2", *common]) == 2
    capsys.readouterr()
    assert (
        main([*score, "--factors", "appropriateness", "--rounds", "1", *common]) == 0
    )  # resumed: no request
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("CoRE factor"))
    assert header.split()[-1] == "reliability"


def test_self_preference_and_the_human_section(data_dir, predictions, prompts, tmp_path):
    llm, run = _core_run(tmp_path, data_dir, predictions, prompts, order_sensitive_core)
    judge = {**llm.describe(), "model": "HuggingFaceTB/SmolLM2-360M-Instruct"}
    meta = predictions.with_name(predictions.name + ".meta.json")
    meta.write_text(json.dumps({"baseline": "tfidf", "parameters": {"llm": {"model": "smollm2-135m"}}}))
    subject = core_subject(llm, [run])
    stored = {i: r["appropriateness"] for i, r in zip(subject.ids, subject.stored, strict=True)}
    human = tmp_path / "human.jsonl"
    # the humans agree on all but one log, by one point
    rows = [{"id": i, "factor": "appropriateness", "score": v} for i, v in stored.items()]
    rows[0]["score"] = max(0, rows[0]["score"] - 1)
    write_jsonl(human, rows)
    models = system_models([predictions])
    report = build_report(subject, 2, judge=judge, system_models=models, human=human)
    sp = report["self_preference"]
    assert sp["flag"] and sp["judge_family"] == "smollm" and sp["rows"] == list(subject.ids)
    assert sp["systems"]["tfidf"] == {"model": "smollm2-135m", "family": "smollm", "shared": True}
    entry = report["keys"]["appropriateness"]
    assert entry["human"]["n"] == 3 and entry["human"]["qwk"] is not None
    assert entry["verdicts"]["kappa"] is not None and report["human"]["n"]["shared_logs"] == 3
    assert "shares its model family with tfidf: 3 rows" in format_reliability(report)
