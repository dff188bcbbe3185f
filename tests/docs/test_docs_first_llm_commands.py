"""The first commands the docs give for the LLM-driven systems, with the packaged model, at their smallest size
(slow): `trace-bench run llm_zero_shot --subset`, `trace-bench run collab_rec --subset` and `trace-bench core
score --limit 1` finish, write what they say, and count what fell back (docs/llm_baselines.md "How long the
first try takes", docs/collab_rec.md, docs/core.md).

Smallest size here: the one test dialogue of the small data directory; Collab-REC with one round
(`--param stopping=fixed --param t_max=1`) and CoRE on one factor without the debate (the full commands'
times are in the docs).
"""

from __future__ import annotations

import json

import pytest

from trace_bench.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture
def packaged_model():
    from trace_llm import LLMConfigError
    from trace_llm.smollm2 import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))


# the docs' first commands all run on the packaged SmolLM2 with one thread
SMOLLM2 = ("--llm", "smollm2", "--llm-threads", "1")


def test_first_commands_finish_with_the_packaged_model(packaged_model, tmp_path, monkeypatch, capsys):
    from tests.support.llm_baselines import write_data_dir

    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    data = write_data_dir(tmp_path / "data")
    zs = tmp_path / "try" / "llm_zero_shot.jsonl"
    zero_shot = ["run", "llm_zero_shot", "--data", str(data), "--subset", "1", "--out", str(zs), *SMOLLM2]
    assert main(zero_shot) == 0
    meta = json.loads(zs.with_name(zs.name + ".meta.json").read_text())
    assert meta["n_rows"] > 0 and meta["summary"]["fallbacks"]["own_result"], meta["summary"]["fallbacks"]
    assert "fallbacks and failures:" in capsys.readouterr().out

    cr = tmp_path / "try" / "collab_rec.jsonl"
    collab_rec = ["run", "collab_rec", "--data", str(data), "--subset", "1", "--out", str(cr), *SMOLLM2]
    assert main([*collab_rec, "--param", "stopping=fixed", "--param", "t_max=1"]) == 0
    rows = json.loads(cr.with_name(cr.name + ".meta.json").read_text())["summary"]["rows"]
    assert rows["agent_calls"] > 0 and "agent_failures" in rows  # counted, whatever the model answered

    core = tmp_path / "core"
    score = ["core", "score", "--data", str(data), "--predictions", str(zs), "--out", str(core), *SMOLLM2]
    assert main([*score, "--limit", "1", "--factors", "coherence", "--no-debate"]) == 0
    printed = capsys.readouterr().out
    assert "CoRE factor" in printed and "missing" in printed and (core / "summary.json").is_file()
