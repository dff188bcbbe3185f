"""scripts/slurm/shards.sbatch: its shard tasks run here as N processes at once (the variables Slurm sets, set by
hand), then its merge; the merged file is the one run's. `submit` hands sbatch the array and the dependent merge
(a recording sbatch on PATH)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.baselines import sample_dialogues, write_data_dir
from trace_harness.protocols.subsets import subset_dirname
from trace_harness.protocols.teacher_forced.runner import meta_path, run_baseline

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "slurm" / "shards.sbatch"
TRACE_BENCH = str(Path(sys.executable).with_name("trace-bench"))


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "TRACE_BENCH": TRACE_BENCH, "HF_HUB_OFFLINE": "1", **extra}


@pytest.fixture
def data(tmp_path) -> Path:
    dialogues = sample_dialogues(9, "test")
    for i, d in enumerate(dialogues):
        d["dialogue_id"] = f"crs_yelp_{i + 1:05d}"
    return write_data_dir(tmp_path / "corpus", dialogues)


@pytest.mark.parametrize("subset", [None, 5], ids=["split", "subset"])
def test_the_array_tasks_then_the_merge_give_the_one_run(data, tmp_path, subset):
    """With --subset, the tasks (started at once) share the one subset folder beside --out: one writes it."""
    n, out = 3, tmp_path / "runs" / "tfidf.jsonl"
    args = ["run", "tfidf", "--data", str(data), "--out", str(out), "--no-progress"]
    args += ["--subset", str(subset)] if subset else []
    tasks = [
        subprocess.Popen(
            ["bash", str(SCRIPT), "shard", *args],
            env=env(SLURM_ARRAY_TASK_ID=str(i), SLURM_ARRAY_TASK_COUNT=str(n)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for i in range(n)
    ]
    for task in tasks:
        output = task.communicate(timeout=300)[0].decode()
        assert task.returncode == 0, output
    assert sorted(p.name for p in out.parent.glob("*.jsonl")) == [f"tfidf.{i}-of-3.jsonl" for i in range(n)]
    subsets = [p.name for p in out.parent.iterdir() if p.is_dir()]
    assert subsets == ([subset_dirname("test", subset, 42)] if subset else [])
    merged = subprocess.run(
        ["bash", str(SCRIPT), "merge", *args],
        env=env(SHARDS=str(n)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    one = out.with_name("one.jsonl")  # beside the shards: the same subset folder, so the same metadata
    run_baseline("tfidf", data, one, progress=False, subset=subset)
    assert out.read_bytes() == one.read_bytes()
    assert meta_path(out).read_bytes() == meta_path(one).read_bytes()


def test_submit_hands_sbatch_the_array_and_the_dependent_merge(tmp_path):
    bin_dir, log = tmp_path / "bin", tmp_path / "sbatch.log"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    fake.write_text(
        '#!/usr/bin/env bash\necho "$*" >> "$SBATCH_LOG"\necho $(( $(wc -l < "$SBATCH_LOG") + 100 ))\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    for args in (["run", "tfidf", "--data", "D", "--out", "r/tfidf.jsonl"], ["reproduce", "my.yaml"]):
        log.unlink(missing_ok=True)
        done = subprocess.run(
            ["bash", str(SCRIPT), "submit", "4", *args],
            env=env(PATH=path, SBATCH_LOG=str(log), SHARD_SBATCH="--gres=gpu:1"),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        calls = log.read_text(encoding="utf-8").splitlines()
        cmd = " ".join(args)
        first = [
            f"--parsable --array=0-3 --gres=gpu:1 {SCRIPT} shard {cmd}",
            f"--parsable --dependency=afterok:101 --export=ALL,SHARDS=4 {SCRIPT} merge {cmd}",
        ]
        if args[0] == "run":
            assert calls == first
        else:  # a second round: CoRE's shards after the merged runs, then the merge that finishes
            assert calls == [
                *first,
                f"--parsable --dependency=afterok:102 --array=0-3 --gres=gpu:1 {SCRIPT} shard {cmd}",
                f"--parsable --dependency=afterok:103 --export=ALL,SHARDS=4 {SCRIPT} merge {cmd}",
            ]


def test_a_shard_outside_an_array_is_refused(tmp_path):
    done = subprocess.run(
        ["bash", str(SCRIPT), "shard", "run", "tfidf", "--out", "x.jsonl"],
        env={k: v for k, v in env().items() if not k.startswith("SLURM_")},
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "SLURM_ARRAY_TASK_ID" in done.stderr
