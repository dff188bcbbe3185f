"""The batch path through the command: export rounds, answer them elsewhere, import, finish without sending.

The fast test answers through a scripted server; the slow one through a real `transformers serve` with the
packaged SmolLM2 (the round trip the docs describe, with tests/support/batch_runner.py standing in for vLLM's
run_batch). Refusals: another model's output file, an output file with missing or unknown ids."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.support.batch_runner import answer_batch_file
from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import dry_run_responder, write_config
from tests.support.stub_server import StubOpenAI
from trace_bench.cli import main
from trace_dataset.io import read_json

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a run that tried to send would fail


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_data_dir(tmp_path_factory.mktemp("batch") / "data")


def export(config: Path, capsys) -> dict:
    assert main(["reproduce", str(config), "--export-batch", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rounds = sorted((config.parent / "out" / "batch").glob("round-*/round.json"))
    return {"out": out, "round": read_json(rounds[-1]) if rounds else None}


def test_export_answer_import_until_the_run_finishes_from_the_cache(data, tmp_path, capsys):
    config = write_config(
        tmp_path / "c.yaml",
        data,
        DEAD,
        systems=["popularity", "llm_zero_shot", "dst"],
        parts=["table5", "judge"],
        batch={"max_requests": 5},
        system_params={
            "dst": {"max_new_tokens": 192}
        },  # its state delta closes in no fewer (trace_llm.budget)
    )
    rounds = []
    with StubOpenAI(dry_run_responder) as stub:
        for _ in range(5):
            result = export(config, capsys)
            if "nothing left to ask" in result["out"]:
                break
            record = result["round"]
            rounds.append(record["parts"])
            assert "python -m vllm.entrypoints.openai.run_batch -i" in result["out"]
            assert all(f["requests"] <= 5 for f in record["files"])  # the configured shard limit
            for f in record["files"]:
                answer_batch_file(f["input"], f["output"], stub.url.removesuffix("/v1"))
            assert (
                main(["reproduce", str(config), "--import-batch", *[f["output"] for f in record["files"]]])
                == 0
            )
            assert "answers imported into the response cache" in capsys.readouterr().out
        sent = len(stub.requests)
    # round 1: Zero-Shot's six turns, DST's six state extractions, the judge of the non-LLM run; round 2: DST's
    # responses and the judge of Zero-Shot's finished run; round 3: the judge of DST's run
    assert rounds == [{"table5": 12, "judge": 6}, {"table5": 6, "judge": 6}, {"judge": 6}] and sent == 36
    assert "Table 5: headline" in result["out"]
    manifest = read_json(tmp_path / "out" / "manifest.json")
    assert manifest["mode"] == "batch" and manifest["batch"]["answered_by_models"] == ["judge", "sys"]
    assert manifest["batch"]["parts"]["table5"]["requests"] == 18
    meta = read_json(tmp_path / "out" / "runs" / "closed" / "dst.jsonl.meta.json")
    assert (
        meta["complete"] and meta["summary"]["usage"]["llm_usage"]["requests"] == 0
    )  # nothing was sent live


def test_an_output_file_from_another_model_or_with_missing_ids_is_refused(data, tmp_path, capsys):
    config = write_config(tmp_path / "c.yaml", data, DEAD, systems=["llm_zero_shot"])
    record = export(config, capsys)["round"]
    [shard] = record["files"]
    with StubOpenAI(dry_run_responder) as stub:
        root = stub.url.removesuffix("/v1")
        answer_batch_file(shard["input"], tmp_path / "other.jsonl", root, model="other-model")
        answer_batch_file(shard["input"], tmp_path / "short.jsonl", root, drop=2)
    assert main(["reproduce", str(config), "--import-batch", str(tmp_path / "other.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "trace-bench: error:" in err and "from another model than the exported 'sys'" in err
    assert "answered by 'other-model'" in err
    assert main(["reproduce", str(config), "--import-batch", str(tmp_path / "short.jsonl")]) == 2
    err = capsys.readouterr().err
    assert (
        "2 request(s) of the exported file(s) r001s001 have no line: r001s001-000004, r001s001-000005" in err
    )
    lines = (tmp_path / "short.jsonl").read_text().splitlines()
    stray = json.loads(lines[0]) | {"custom_id": "r001s001-000099"}
    (tmp_path / "stray.jsonl").write_text("\n".join([*lines, json.dumps(stray)]) + "\n")
    assert main(["reproduce", str(config), "--import-batch", str(tmp_path / "stray.jsonl")]) == 2
    assert "match no exported request: 'r001s001-000099' (line 5)" in capsys.readouterr().err
    assert not (tmp_path / "out" / "batch" / "imports.json").exists()  # nothing was imported
    assert export(config, capsys)["round"]["round"] == 2  # the same requests are asked again


@pytest.mark.slow
def test_a_batch_round_trip_through_a_real_server(transformers_server, data, tmp_path, capsys):
    """Export, answer every line with the packaged SmolLM2 behind `transformers serve`, import, and resume: the
    run then finishes from the cache, with its model behind an address where nothing listens."""
    model = transformers_server.model
    base = {
        "systems": ["llm_zero_shot"],
        "closed": {"split": "test"},
        "system_params": {"llm_zero_shot": {"json_repairs": 0, "reviews_per_poi": 1}},
    }
    models = {"systems": {"llm": f"openai:{DEAD}#{model}", "max_new_tokens": 48}}  # the least that closes
    config = write_config(tmp_path / "c.yaml", data, DEAD, models=models, **base)
    record = export(config, capsys)["round"]
    assert record["requests"] == 2  # the test split's dialogue has two system turns
    [shard] = record["files"]
    first = json.loads(Path(shard["input"]).read_text().splitlines()[0])
    assert (
        first["body"]["model"] == model and first["body"]["max_tokens"] == 48 and first["body"]["seed"] == 42
    )
    assert (
        answer_batch_file(shard["input"], shard["output"], transformers_server.base_url.removesuffix("/v1"))
        == 2
    )
    assert main(["reproduce", str(config), "--import-batch", shard["output"]]) == 0
    capsys.readouterr()
    assert main(["reproduce", str(config), "--no-progress"]) == 0  # live mode, dead server: nothing to send
    assert "LLM Zero-Shot" in capsys.readouterr().out
    meta = read_json(tmp_path / "out" / "runs" / "closed" / "llm_zero_shot.jsonl.meta.json")
    assert meta["complete"] and meta["summary"]["usage"]["llm_usage"] == {
        **meta["summary"]["usage"]["llm_usage"],
        "requests": 0,
        "cache_hits": 2,
    }


def test_an_output_of_another_configs_export_or_a_file_not_text_is_refused(data, tmp_path, capsys):
    """Two configs with the same model and request count but other prompts: one's answers never import into the
    other; a gzip file and one that is not UTF-8 are named, not tracebacks."""
    params = {"llm_zero_shot": {"reviews_per_poi": 0}}  # no reviews in the prompts
    mine = write_config(tmp_path / "a" / "c.yaml", data, DEAD, systems=["llm_zero_shot"])
    theirs = write_config(
        tmp_path / "b" / "c.yaml", data, DEAD, systems=["llm_zero_shot"], system_params=params
    )
    [shard] = export(mine, capsys)["round"]["files"]
    [foreign] = export(theirs, capsys)["round"]["files"]
    assert (
        Path(shard["input"]).name == Path(foreign["input"]).name and shard["requests"] == foreign["requests"]
    )
    with StubOpenAI(dry_run_responder) as stub:
        answer_batch_file(foreign["input"], tmp_path / "foreign.jsonl", stub.url.removesuffix("/v1"))
    assert main(["reproduce", str(mine), "--import-batch", str(tmp_path / "foreign.jsonl")]) == 2
    assert "custom_id(s) answer other requests" in capsys.readouterr().err
    (tmp_path / "packed.jsonl.gz").write_bytes(gzip.compress((tmp_path / "foreign.jsonl").read_bytes()))
    (tmp_path / "latin1.jsonl").write_bytes(b'{"custom_id": "caf\xe9"}\n')
    for name, said in (("packed.jsonl.gz", "gzip-compressed"), ("latin1.jsonl", "latin1.jsonl:1: not UTF-8")):
        assert main(["reproduce", str(mine), "--import-batch", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert not (tmp_path / "a" / "out" / "batch" / "imports.json").exists()
