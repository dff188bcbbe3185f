"""`reproduce CONFIG --shard I/N` in two rounds (the runs and interactive runs, then CoRE on the merged runs), each
joined with `--merge-shards N`, ends with the files of one unsharded `reproduce CONFIG`: the runs, the interactive
runs, CoRE and the leaderboard."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.reproduce import dry_run_responder, write_config
from tests.support.stub_server import StubOpenAI
from trace_bench.cli import main

PARTS = {
    "parts": ["table5", "interactive", "core"],
    "systems": ["popularity", "llm_zero_shot"],
    "closed": {"split": "test"},
    "interactive": {"systems": ["popularity"], "n": 3, "turns": 2},
    "core": {"systems": ["popularity"], "split": "test", "factors": ["coherence"], "debate": False},
}


def outputs(out: Path) -> dict[str, bytes]:
    """Every file a run leaves, but the manifest and the plan (they name the config and time it) and the shards;
    the run's own folder masked (the interactive leaderboard names its folders)."""
    skip = ("manifest.json", "plan.json")
    return {
        str(p.relative_to(out)): p.read_bytes().replace(str(out.absolute()).encode(), b"<out>")
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in skip and "shards" not in p.relative_to(out).parts
    }


@pytest.mark.parametrize("n", [2, 3])
def test_two_rounds_of_shards_give_the_unsharded_reproduction(small_corpus, tmp_path, capsys, n):
    data = small_corpus  # the built-in corpus: the interactive part seeds travelers from its hidden goals
    with StubOpenAI(dry_run_responder) as stub:
        one = write_config(tmp_path / "one" / "c.yaml", data, stub.url, **PARTS)
        assert main(["reproduce", str(one), "--no-progress"]) == 0
        sharded = write_config(tmp_path / "sharded" / "c.yaml", data, stub.url, **PARTS)
        for round_ in range(2):
            for i in range(n):
                assert main(["reproduce", str(sharded), "--shard", f"{i}/{n}", "--no-progress"]) == 0
            capsys.readouterr()
            assert main(["reproduce", str(sharded), "--merge-shards", str(n), "--no-progress"]) == 0
            said = capsys.readouterr().out
            assert ("CoRE waits for the merged runs" in said) == (round_ == 0), said
        assert "Table 5" in said
    mine, theirs = outputs(tmp_path / "sharded" / "out"), outputs(tmp_path / "one" / "out")
    assert sorted(mine) == sorted(theirs)
    assert [k for k in mine if mine[k] != theirs[k]] == []
