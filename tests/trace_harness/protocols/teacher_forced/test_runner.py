"""`trace-bench run`: predictions file, metadata, resume after interruption, determinism, num_proc."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from baselines import BASELINES
from tests.support.baselines import sample_dialogues, write_data_dir
from trace_bench.cli import main
from trace_dataset.io import TraceDataError
from trace_dataset.schema import PREDICTION_OPTIONAL_FIELDS, PREDICTION_REQUIRED_FIELDS
from trace_harness.protocols.teacher_forced.runner import meta_path, read_done, run_all, run_baseline


@pytest.fixture
def data_dir(tmp_path):
    dialogues = sample_dialogues(7, "test") + sample_dialogues(3, "train")
    for i, d in enumerate(dialogues):
        d["dialogue_id"] = f"crs_yelp_{i + 1:05d}"
    return write_data_dir(tmp_path / "corpus", dialogues)


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_run_writes_every_system_turn_in_order_with_metadata(data_dir, tmp_path):
    out = tmp_path / "runs" / "tfidf.jsonl"
    meta = run_baseline("tfidf", data_dir, out, progress=False, chunk_dialogues=2)
    recs = [json.loads(x) for x in lines(out)]
    assert len(recs) == meta["n_rows"] == 7 * 4 and meta["n_dialogues"] == 7
    assert [(r["dialogue_id"], r["turn_id"]) for r in recs][:5] == [
        ("crs_yelp_00001", 1),
        ("crs_yelp_00001", 3),
        ("crs_yelp_00001", 5),
        ("crs_yelp_00001", 7),
        ("crs_yelp_00002", 1),
    ]
    for r in recs:
        assert (
            set(PREDICTION_REQUIRED_FIELDS)
            <= set(r)
            <= set(PREDICTION_REQUIRED_FIELDS + PREDICTION_OPTIONAL_FIELDS)
        )
    saved = json.loads(meta_path(out).read_text())
    assert saved == meta and saved["complete"] is True
    assert saved["baseline"] == "tfidf" and saved["split"] == "test" and saved["pool"] == "closed"
    assert saved["kb_version"] == "kb-test-1" and saved["corpus_version"] == "corpus-test-1"
    assert set(saved["data_files"]) == {"test"} and len(saved["data_files"]["test"]) == 64


def test_same_bytes_for_any_chunking_batch_size_and_num_proc(data_dir, tmp_path):
    ref = tmp_path / "a.jsonl"
    run_baseline("spatial", data_dir, ref, progress=False)
    other = tmp_path / "b.jsonl"
    run_baseline("spatial", data_dir, other, progress=False, chunk_dialogues=3, batch_size=5)
    assert other.read_bytes() == ref.read_bytes()
    par = tmp_path / "c.jsonl"
    run_baseline("spatial", data_dir, par, progress=False, chunk_dialogues=2, num_proc=2)
    assert par.read_bytes() == ref.read_bytes()
    assert (
        json.loads(meta_path(par).read_text())["data_files"]
        == json.loads(meta_path(ref).read_text())["data_files"]
    )


@pytest.mark.parametrize("cut", [0.37, 0.5, 0.93])
def test_resume_after_a_torn_file(data_dir, tmp_path, cut):
    ref = tmp_path / "ref.jsonl"
    run_baseline("itinerary", data_dir, ref, progress=False)
    full = ref.read_bytes()
    out = tmp_path / "out.jsonl"
    prefix = full[: int(len(full) * cut)]
    out.write_bytes(prefix)  # an interrupted run: a prefix ending mid-line
    # ... whose metadata vouches for the complete rows it wrote (the run records count and hash as it goes)
    kept = prefix[: prefix.rfind(b"\n") + 1]
    meta = {
        **json.loads(meta_path(ref).read_text()),
        "complete": False,
        "rows_written": kept.count(b"\n"),
        "rows_sha256": hashlib.sha256(kept).hexdigest(),
    }
    meta_path(out).write_text(json.dumps(meta))
    assert not out.read_bytes().endswith(b"\n")
    run_baseline("itinerary", data_dir, out, progress=False, chunk_dialogues=2)
    assert out.read_bytes() == full
    # a complete file resumes to itself
    run_baseline("itinerary", data_dir, out, progress=False)
    assert out.read_bytes() == full


def test_resume_refuses_foreign_or_corrupt_files(data_dir, tmp_path):
    out = tmp_path / "p.jsonl"
    run_baseline("tfidf", data_dir, out, progress=False)
    # popularity also has parameters (drop_rejected), which differ from tfidf's none
    with pytest.raises(TraceDataError, match="other settings \\(differing: baseline, parameters\\)"):
        run_baseline("popularity", data_dir, out, progress=False)
    with pytest.raises(TraceDataError, match="pool"):
        run_baseline("tfidf", data_dir, out, pool="open", progress=False)
    rows = lines(out)
    rows[3] = rows[3][:-5] + "}"
    out.write_text("\n".join(rows) + "\n")
    with pytest.raises(TraceDataError, match=r"p.jsonl:4: not valid JSON"):
        run_baseline("tfidf", data_dir, out, progress=False)
    rows = lines(tmp_path / "p.jsonl")
    swapped = [rows[1], rows[0]] + rows[2:]
    out.write_text("\n".join(swapped) + "\n")
    with pytest.raises(TraceDataError, match="not a prefix"):
        run_baseline("tfidf", data_dir, out, progress=False)
    run_baseline("tfidf", data_dir, out, progress=False, overwrite=True)
    meta_path(out).unlink()
    with pytest.raises(TraceDataError, match="without its .meta.json"):
        run_baseline("tfidf", data_dir, out, progress=False)


def test_read_done_truncates_only_the_torn_line(tmp_path):
    out = tmp_path / "x.jsonl"
    out.write_text('{"dialogue_id":"d","turn_id":1}\n{"dialogue_id":"d","turn_id":3}\n{"dialo')
    assert read_done(out, [("d", 1), ("d", 3), ("d", 5)]) == 2
    assert out.read_text().endswith('"turn_id":3}\n')


def test_pools_and_splits(data_dir, tmp_path):
    closed = run_baseline("tfidf", data_dir, tmp_path / "c.jsonl", progress=False)
    wide = run_baseline("tfidf", data_dir, tmp_path / "w.jsonl", pool="pool_16", progress=False)
    assert closed["n_rows"] == wide["n_rows"]
    c = [json.loads(x) for x in lines(tmp_path / "c.jsonl")]
    w = [json.loads(x) for x in lines(tmp_path / "w.jsonl")]
    # dialogue 3 has a closed pool of 3 (no Corner Cafe); pool_16 adds it back
    assert "p_caf" not in c[8]["ranked_poi_ids"] and "p_caf" in w[8]["ranked_poi_ids"]
    every = run_baseline("popularity", data_dir, tmp_path / "all.jsonl", split="all", progress=False)
    assert every["n_rows"] == 10 * 4 and set(every["data_files"]) == {"train", "validation", "test"}
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        run_baseline("tfidf", data_dir, tmp_path / "d.jsonl", split="dev", progress=False)


def test_cli_run_one_and_all(data_dir, tmp_path, capsys, monkeypatch):
    import baselines
    import trace_harness.protocols.teacher_forced.runner

    # --all over the model-free baselines (the model-backed ones have their own slow tests)
    table = {n: baselines._TABLE[n] for n in ("popularity", "tfidf", "spatial", "itinerary")}
    monkeypatch.setattr(trace_harness.protocols.teacher_forced.runner, "NON_LLM_BASELINES", tuple(table))
    out = tmp_path / "one.jsonl"
    assert (
        main(
            [
                "run",
                "spatial",
                "--data",
                str(data_dir),
                "--out",
                str(out),
                "--no-progress",
                "--param",
                "text_weight=0.5",
                "--param",
                "spatial_weight=0.5",
            ]
        )
        == 0
    )
    assert json.loads(meta_path(out).read_text())["parameters"] == {"text_weight": 0.5, "spatial_weight": 0.5}
    assert "28 predictions" in capsys.readouterr().out
    runs = tmp_path / "runs"
    rc = main(
        ["run", "--all", "--data", str(data_dir), "--out", str(runs), "--no-progress", "--split", "train"]
    )
    printed = capsys.readouterr().out
    assert sorted(p.name for p in runs.glob("*.jsonl")) == [f"{n}.jsonl" for n in sorted(table)]
    assert printed.count("12 rows") == 4 and rc == 0
    assert main(["run", "tfidf", "--data", str(tmp_path / "missing"), "--out", str(out)]) == 2


def test_run_all_reports_failures_and_continues(data_dir, tmp_path):
    results = run_all(data_dir, tmp_path / "runs", names=["tfidf", "bm25", "popularity"], progress=False)
    assert isinstance(results["tfidf"], dict) and isinstance(results["popularity"], dict)
    assert "unknown baseline 'bm25'" in results["bm25"]


def test_turns_config_dataset_gives_the_runner_predictions(data_dir, tmp_path):
    """The `datasets` turns config (trace_dataset.builder) feeds a pipeline the same rows the runner uses."""
    from baselines import pipeline
    from trace_dataset import load_trace

    out = tmp_path / "spatial.jsonl"
    run_baseline("spatial", data_dir, out, progress=False)
    ds = load_trace(data_dir, config="turns", split="test", cache_dir=tmp_path / "cache")
    preds = list(pipeline("spatial", kb=data_dir / "knowledge_base")(ds, batch_size=8))
    assert [json.loads(x) for x in lines(out)] == preds


def test_split_all_is_run_scored_and_ranked_as_one_full_corpus_table(data_dir, tmp_path, capsys):
    """`--split all` (the paper's full-corpus headline): the run, `evaluate` and the leaderboard all take it."""
    runs = tmp_path / "runs"
    assert (
        main(
            [
                "run",
                "tfidf",
                "--data",
                str(data_dir),
                "--out",
                str(runs / "tfidf.jsonl"),
                "--split",
                "all",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(data_dir),
                "--predictions",
                str(runs / "tfidf.jsonl"),
                "--split",
                "all",
                "--out",
                str(tmp_path / "all.json"),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "all.json").read_text())
    assert result["config"]["split"] == "all" and result["n"]["recall@1"] > 0
    both = len(lines(runs / "tfidf.jsonl"))  # 10 dialogues of two splits, every system turn
    assert both == 40
    # scored as one split, the full-corpus file is refused with a message naming the extra rows, not a traceback
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(data_dir),
                "--predictions",
                str(runs / "tfidf.jsonl"),
                "--split",
                "test",
                "--out",
                str(tmp_path / "test.json"),
            ]
        )
        == 2
    )
    assert "unknown" in capsys.readouterr().err
    assert (
        main(
            [
                "leaderboard",
                "--data",
                str(data_dir),
                "--runs",
                str(runs),
                "--split",
                "all",
                "--n-boot",
                "100",
                "--out",
                str(tmp_path / "board"),
            ]
        )
        == 0
    )
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert [r["split"] for r in board["rows"]] == ["all"]


def test_run_help_lists_every_registered_name():
    from trace_bench.cli import build_parser

    run = next(a for a in build_parser()._actions if a.dest == "command").choices["run"]
    text = " ".join(run.format_help().split())  # the wrapped help as one line
    for name in BASELINES:
        assert re.search(rf"\b{name}\b", text), name


def test_the_progress_bar_moves_per_row_inside_a_chunk(data_dir, tmp_path, monkeypatch):
    """One chunk of every dialogue (an LLM run's --subset): the bar moves as the pipeline hands over each
    batch's rows, not once when the whole chunk is written."""
    moves: list[tuple[int, bool]] = []  # (rows, whether the predictions file existed then)
    out = tmp_path / "run.jsonl"

    class Bar:
        def __init__(self, *args, **kwargs):
            pass

        def update(self, n):
            moves.append((n, out.exists()))

        def close(self):
            pass

    monkeypatch.setattr("tqdm.auto.tqdm", Bar)
    meta = run_baseline("tfidf", data_dir, out, batch_size=2, chunk_dialogues=50)
    rows = meta["n_rows"]
    assert sum(n for n, _ in moves) == rows == len(lines(out))
    assert [n for n, _ in moves if n] == [1] * rows  # one move per row ...
    assert not any(existed for n, existed in moves if n)  # ... before the chunk was written


@pytest.mark.parametrize("fork", [True, False])
def test_forked_and_spawned_workers_write_the_same_bytes(data_dir, tmp_path, monkeypatch, fork):
    from trace_harness.protocols.teacher_forced import workers

    ref = tmp_path / "ref.jsonl"
    run_baseline("tfidf", data_dir, ref, progress=False)
    seen = []
    real = workers.forks
    monkeypatch.setattr(workers, "forks", lambda pipe: seen.append(real(pipe)) or fork)
    par = tmp_path / "par.jsonl"
    run_baseline("tfidf", data_dir, par, progress=False, chunk_dialogues=2, num_proc=2)
    assert seen and par.read_bytes() == ref.read_bytes()


def test_workers_fork_only_a_non_llm_pipeline_without_torch(data_dir, monkeypatch):
    import sys

    from baselines import pipeline
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_harness.protocols.teacher_forced.workers import forks

    pipe = pipeline("tfidf", kb=KnowledgeBase.load(kb_dir(data_dir)))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert forks(pipe) == ("fork" in __import__("multiprocessing").get_all_start_methods())
    monkeypatch.setitem(sys.modules, "torch", sys)  # any module under that name: torch is loaded
    assert not forks(pipe)
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.setattr(type(pipe), "family", property(lambda self: "LLM"))
    assert not forks(pipe)
