"""`trace-bench evaluate`: files written, table printed, comparison, errors as exit code 2."""

from __future__ import annotations

import gzip
import json

import pytest

from trace_bench.cli import main
from trace_dataset.io import write_jsonl


@pytest.fixture
def preds(tmp_path, reference_rows):
    a = tmp_path / "a.jsonl"
    write_jsonl(a, reference_rows)
    worse = [
        dict(r, ranked_poi_ids=r["ranked_poi_ids"][1:] + r["ranked_poi_ids"][:1]) for r in reference_rows
    ]
    b = tmp_path / "b.jsonl"
    write_jsonl(b, worse)
    return a, b


def test_evaluate_writes_results_and_per_item(data_dir, preds, tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(["evaluate", "--data", str(data_dir), "--predictions", str(preds[0]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "recall@1 ↑" in printed and "t2r ↓" in printed and "split=test pool=closed" in printed
    result = json.loads(out.read_text())
    assert result["values"]["recall@1"] == 1.0 and result["n"]["bleu4"] == 10 and "per_item" not in result
    with gzip.open(tmp_path / "results.per_item.json.gz", "rt") as f:
        per_item = json.load(f)
    assert per_item["system_turns"]["turn_id"] == [1, 3, 5, 7, 1, 3, 5, 1, 3, 5]


def test_evaluate_takes_the_convention_switches(data_dir, preds, tmp_path):
    outs = {}
    for name, extra in (("default", []), ("switched", ["--compare-hit", "top1", "--t2r", "turn_index"])):
        out = tmp_path / f"{name}.json"
        assert (
            main(
                [
                    "evaluate",
                    "--data",
                    str(data_dir),
                    "--predictions",
                    str(preds[0]),
                    "--out",
                    str(out),
                    *extra,
                ]
            )
            == 0
        )
        outs[name] = json.loads(out.read_text())
    default, switched = outs["default"], outs["switched"]
    assert (
        switched["config"]["conventions"]["compare_hit"] == "top1"
        and switched["config"]["conventions"]["t2r"] == "turn_index"
    )
    assert (
        default["config"]["conventions"]["compare_hit"] == "top2"
        and default["config"]["conventions"]["t2r"] == "count"
    )
    # the reference system hits at every first recommend/compare turn: T2R 1 counted; read as turn indices,
    # those turns are 3, 1 and 1 (toy_00001 asks first)
    assert default["values"]["t2r"] == 1.0 and switched["values"]["t2r"] == pytest.approx(5 / 3)
    assert {k: v for k, v in default["values"].items() if k != "t2r"} == {
        k: v for k, v in switched["values"].items() if k != "t2r"
    }
    with pytest.raises(SystemExit):
        main(
            [
                "evaluate",
                "--data",
                str(data_dir),
                "--predictions",
                str(preds[0]),
                "--out",
                str(tmp_path / "x.json"),
                "--t2r",
                "turns",
            ]
        )


def test_evaluate_is_byte_identical_on_rerun(data_dir, preds, tmp_path):
    paths = []
    for name in ("r1.json", "r2.json"):
        out = tmp_path / name
        main(
            [
                "-q",
                "evaluate",
                "--data",
                str(data_dir),
                "--predictions",
                str(preds[0]),
                "--out",
                str(out),
                "--sweeps",
            ]
        )
        paths.append(out)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert (tmp_path / "r1.per_item.json.gz").read_bytes() == (tmp_path / "r2.per_item.json.gz").read_bytes()


def test_compare_prints_bootstrap_and_ttest(data_dir, preds, tmp_path, capsys):
    out = tmp_path / "cmp.json"
    rc = main(
        [
            "evaluate",
            "--data",
            str(data_dir),
            "--predictions",
            str(preds[0]),
            "--compare",
            str(preds[1]),
            "--out",
            str(out),
            "--n-boot",
            "500",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "paired cluster bootstrap over dialogues (n_boot=500, seed=42" in printed
    cmp = json.loads(out.read_text())["comparison"]
    assert cmp["b"]["file"] == "b.jsonl" and cmp["n_boot"] == 500
    r1 = cmp["metrics"]["recall@1"]
    assert r1["delta"] == 1.0 and r1["mean_b"] == 0.0 and r1["significant"] and r1["n_clusters"] == 3
    assert cmp["metrics"]["rouge_l"]["delta"] == 0.0 and not cmp["metrics"]["rouge_l"]["significant"]
    # cgs (the formula on the means) is compared through the bootstrap of the formula itself; no t-test
    assert cmp["metrics"]["cgs"]["ttest_p"] is None and "cgs_turn_mean" in cmp["metrics"]


def test_bad_predictions_exit_2(data_dir, tmp_path, reference_rows, capsys):
    bad = tmp_path / "bad.jsonl"
    write_jsonl(bad, reference_rows[:-1])
    rc = main(
        ["evaluate", "--data", str(data_dir), "--predictions", str(bad), "--out", str(tmp_path / "x.json")]
    )
    assert rc == 2
    assert "1 missing (first: toy_00003/5)" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_help_lists_options(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for option in (
        "--data",
        "--predictions",
        "--split",
        "--pool",
        "--out",
        "--nli",
        "--judge",
        "--compare",
        "--sweeps",
    ):
        assert option in text


def test_metric_options_come_from_their_declarations(data_dir, preds, tmp_path, capsys):
    """Every suite option is a command-line option with its declared default, checked as declared, and reaches
    the results file."""
    import argparse

    from trace_bench.cli import build_parser
    from trace_metrics.specs import OPTIONS, SUITE_OPTIONS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    actions = {a.dest: a for a in sub.choices["evaluate"]._actions}
    for name in SUITE_OPTIONS:
        assert actions[name].default == OPTIONS[name].default
        assert OPTIONS[name].flag in actions[name].option_strings
    base = ["evaluate", "--data", str(data_dir), "--predictions", str(preds[0])]
    bad = (  # refused while the options are parsed, with the declared range
        ("--cd-gate", "0", "argument --cd-gate: expected a finite number in (0, 1], got '0'"),
        ("--radius-km", "nan", "argument --radius-km: expected a finite number > 0, got 'nan'"),
        ("--pc-window", "-1", "argument --pc-window: expected an integer >= 0, got '-1'"),
        (
            "--fuzzy-threshold",
            "1.5",
            "argument --fuzzy-threshold: expected a finite number in [0, 1], got '1.5'",
        ),
    )
    for flag, value, message in bad:
        with pytest.raises(SystemExit) as exit_:
            main([*base, "--out", str(tmp_path / "bad.json"), flag, value])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "bad.json").exists()
    out = tmp_path / "r.json"
    argv = [*base, "--out", str(out), "--radius-km", "1.5", "--use-stemmer", "--grounding-turns", "system"]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    config = result["config"]
    assert config["practical"] == {"radius_km": 1.5} and "spatial_coherence@1.5km" in result["values"]
    assert config["text"]["rouge"]["use_stemmer"] is True and config["grounding"]["turns"] == "system"
    assert result["n"]["grounding_score"] == 10  # every system turn


@pytest.mark.slow
def test_nli_option_with_a_tiny_local_model(data_dir, preds, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))  # the NLI cache stays in tmp_path
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from trace_metrics.lib.tiny_nli import write_tiny_nli_model

    model = write_tiny_nli_model(tmp_path / "nli", {0: "contradiction", 1: "neutral", 2: "entailment"})
    out = tmp_path / "nli.json"
    rc = main(
        [
            "evaluate",
            "--data",
            str(data_dir),
            "--predictions",
            str(preds[0]),
            "--out",
            str(out),
            "--nli",
            str(model),
            "--sweeps",
        ]
    )
    assert rc == 0 and "cgs_ent" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["n"]["entailment"] == 6 and 0.0 <= result["values"]["cgs_ent"] <= result["values"]["cgs"]
    assert set(result["aggregates"]["nli_threshold_sweep"]) == {"0.3", "0.4", "0.5", "0.6", "0.7"}
    assert result["models"]["nli"]
