"""The reproduce config: the packaged examples, paths, refusals naming the field, costly parts off unless asked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trace_dataset.io import TraceDataError
from trace_harness.reproduce.config import PAPER_SYSTEMS, load_config
from trace_harness.reproduce.jobs import build_jobs, role_settings

URL = "http://127.0.0.1:9/v1"


def write(tmp_path: Path, body: dict, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return path


BASE = {
    "data": "data",
    "out": "out",
    "systems": ["popularity", "llm_zero_shot"],
    "models": {"systems": f"openai:{URL}#m"},
}


def test_the_packaged_examples_load_with_paths_from_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    offline = load_config("offline")
    assert (
        offline.data == tmp_path / "runs/demo/hydrated" and offline.out == tmp_path / "runs/reproduce-offline"
    )
    assert offline.models["systems"].llm == "smollm2" and offline.closed.subset == 2
    paper = load_config("paper")
    assert (
        paper.systems == PAPER_SYSTEMS and len(PAPER_SYSTEMS) == 13
    )  # the session-isolated rows of Tables 5-6
    assert (paper.closed.split, paper.closed.subset, paper.open.subset, paper.open.seed) == (
        "all",
        None,
        1000,
        42,
    )
    assert not paper.wants("nli") and paper.nli.processes == "auto"
    assert role_settings(paper, "systems").to_dict() == {
        "temperature": 0.0,
        "top_p": 1.0,
        "max_new_tokens": 600,
        "seed": 42,
    }  # App. F, read as DSPy 3.0.3 did (the config says so)
    assert "DSPy 3.0.0-3.0.3" in (
        Path(load_config.__code__.co_filename).parent / "configs/paper.yaml"
    ).read_text(encoding="utf-8")
    reasoning = load_config(write(tmp_path, {**BASE, "models": {"systems": f"openai:{URL}#gpt-5.4-mini"}}))
    assert role_settings(reasoning, "systems").to_dict()["max_new_tokens"] == 16000  # App. F's other row


def test_the_main_jobs_examples_load_and_overrides_replace_keys(tmp_path, monkeypatch):
    from trace_harness.reproduce.config import load_example

    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").mkdir()  # a folder named like an example does not hide it
    demo = load_config("demo")
    assert demo.out == tmp_path / "runs/demo" and demo.open.subset is None and demo.interactive.n is None
    assert (
        demo.interactive.workers is None
        and demo.closed.runs == "runs/closed"
        and demo.open.runs == "runs/open"
    )
    assert [j.kind for j in build_jobs(demo)] == ["run"] * 18 + ["interactive"] * 9
    llm = load_config("demo_llm")
    assert llm.closed.runs == "llm_runs" and llm.core.out == "core/{system}"
    assert [str(j.out.relative_to(tmp_path)) for j in build_jobs(llm) if j.kind == "core"] == [
        "runs/demo/core/tfidf",
        "runs/demo/core/llm_zero_shot",
    ]
    small = load_example("demo", {"out": "x", "interactive": {"n": 20}})
    assert (
        small.out == tmp_path / "x" and small.interactive.n == 20 and small.interactive.simulator == "rules"
    )


def test_relative_paths_are_read_from_the_config_folder(tmp_path):
    config = load_config(write(tmp_path, BASE))
    assert config.data == tmp_path / "data" and config.out == tmp_path / "out" and len(config.sha256) == 64


def test_toml_reads_as_yaml_does(tmp_path):
    toml = (
        'data = "data"\nout = "out"\nsystems = ["popularity", "llm_zero_shot"]\n'
        f'[models]\nsystems = "openai:{URL}#m"\n'
    )
    (tmp_path / "c.toml").write_text(toml, encoding="utf-8")
    a, b = load_config(tmp_path / "c.toml"), load_config(write(tmp_path, BASE))
    assert (a.data, a.systems, a.models) == (b.data, b.systems, b.models)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colsed": {}}, r"unknown key\(s\) colsed; expected some of: data, out"),
        (
            {"closed": {"split": "tset"}},
            r"closed\.split: 'tset'; expected one of train, validation, test, all",
        ),
        ({"open": {"subset": 0}}, r"open\.subset: 0; expected an integer >= 1 or null"),
        ({"systems": ["popularity", "gpt"]}, r"systems: unknown 'gpt'; expected some of: popularity"),
        ({"models": {}}, r"models\.systems: missing; the LLM systems llm_zero_shot need a model"),
        ({"models": {"systems": "openai:nowhere#m"}}, r"models\.systems\.llm: bad --llm spec"),
        (
            {"parts": ["table5", "nli"]},
            r"nli\.model: missing; .*no NLI model is packaged.*as `nli: \{model: /path/to/model\}` in the config",
        ),
        ({"parts": ["judge"]}, r"models\.judge: missing; the LLM judge \(parts: judge\) need a model"),
        ({"parts": ["core"]}, r"models\.core: missing; .*\(or models\.judge, which CoRE uses too\)"),
        ({"system_params": {"tfidf": {"alpha": 1}}}, r"system_params\.tfidf: .*no parameter 'alpha'"),
        ({"transport": {"speed": 3}}, r"unknown key\(s\) transport\.speed"),
        (
            {"transport": {"timeout": 0}},
            r"transport\.timeout: expected a finite number of seconds > 0, got '0'",
        ),
        (
            {"models": {"systems": {"llm": f"openai:{URL}#m", "options": {"instances": 1.5}}}},
            r"models\.systems\.options\.instances: expected an integer, got '1\.5'",
        ),
        ({"core": {"factors": ["charm"]}}, r"core\.factors: unknown 'charm'"),
        ({"nli": {"processes": 0}}, r"nli\.processes: 0; expected a positive integer or auto"),
        (
            {
                "parts": ["core"],
                "models": {"systems": f"openai:{URL}#m", "core": f"openai:{URL}#c"},
                "closed": {"split": "test"},
                "core": {"split": "train"},
            },
            r"core\.split: 'train'; CoRE reads the closed runs, which cover test \(closed\.split: test\): expected one "
            r"of test or all",
        ),
        (
            {"closed": {"runs": "../elsewhere"}},
            r"closed\.runs: '\.\./elsewhere'; expected a relative folder under out",
        ),
        ({"open": {"runs": "/abs"}}, r"open\.runs: '/abs'; expected a relative folder under out"),
        (
            {"parts": ["table5", "table6"], "open": {"runs": "runs/closed"}},
            r"open\.runs: 'runs/closed' is closed\.runs too; expected a folder of its own",
        ),
        (
            {"core": {"out": "core/{model}"}},
            r"core\.out: 'core/\{model\}'; expected a folder under out naming \{system\}",
        ),
        (
            {
                "parts": ["core"],
                "models": {"systems": f"openai:{URL}#m", "core": f"openai:{URL}#c"},
                "core": {"split": "all", "out": "core/{system}"},
            },
            r"core\.out: 'core/\{system\}'; CoRE scores every split of the closed runs here, so expected a folder "
            r"naming \{split\}",
        ),
        ({"interactive": {"workers": 0}}, r"interactive\.workers: 0; expected an integer >= 1 or null"),
        # the config forms of what a flag refuses: non-finite numbers, keys of mixed types
        (
            {"systems": ["sniprec"], "system_params": {"sniprec": {"kappa": float("nan")}}},
            r"system_params\.sniprec: kappa=nan: expected finite numbers",
        ),
        (
            {"systems": ["sniprec"], "system_params": {"sniprec": {"kappa": float("inf")}}},
            r"system_params\.sniprec: kappa=inf: expected finite numbers",
        ),
        (
            {
                "models": {
                    "systems": {"llm": f"openai:{URL}#m", "price": {"input": float("inf"), "output": 1}}
                }
            },
            r"models\.systems\.price\.input: inf; expected a number >= 0",
        ),
        ({"batch_size": float("inf")}, r"batch_size: inf; expected an integer >= 1"),
        ({1: "x", "foo": "y"}, r"unknown key\(s\) foo, 1; expected some of: data"),
        ({"transport": {1: "x", "foo": "y"}}, r"unknown key\(s\) transport\.foo, transport\.1"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(tmp_path, change, message):
    path = write(tmp_path, {**BASE, **change})
    with pytest.raises(TraceDataError, match=message) as caught:
        load_config(path)
    assert str(caught.value).startswith(str(path))


def test_not_yaml_and_missing_files_are_refused(tmp_path):
    (tmp_path / "bad.yaml").write_text("data: [unclosed\n", encoding="utf-8")
    with pytest.raises(TraceDataError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")
    with pytest.raises(
        TraceDataError, match="config file not found.*packaged examples \\(offline, paper, demo, demo_llm\\)"
    ):
        load_config(tmp_path / "none.yaml")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.yaml", "a: &x [1, 2]\nb: [*x, *x]\n", r"line 2: a YAML alias \(\*x\); write the value out"),
        ("c.yaml", "data: " + "[" * 20_000 + "]" * 20_000 + "\n", r"line 1: nests deeper than 32 levels"),
        ("c.toml", "data = " + "[" * 20_000 + "]" * 20_000 + "\n", r"nests deeper than 32 levels"),
        ("wrong.ext", "data: x\n", r"a config named \.ext; expected a \.yaml, \.yml or \.toml file"),
    ],
)
def test_aliases_deep_nesting_and_other_suffixes_are_refused_not_expanded(tmp_path, name, text, message):
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(TraceDataError, match=message):
        load_config(tmp_path / name)


def test_a_dry_run_refuses_a_data_folder_that_is_not_there(tmp_path, capsys):
    from tests.support.cli import run_cli

    path = write(
        tmp_path, {**BASE, "data": str(tmp_path / "nonexistent"), "systems": ["popularity"], "models": {}}
    )
    rc, text = run_cli(capsys, "reproduce", str(path), "--dry-run")
    assert rc == 2 and "nonexistent not found; expected the Trace data directory" in text, text


def test_costly_parts_stay_off_unless_the_config_lists_them(tmp_path):
    config = load_config(write(tmp_path, {**BASE, "systems": ["popularity", "tfidf"], "models": {}}))
    assert (
        config.parts == ("table5", "table6", "table9") and config.models == {}
    )  # no model needed, none called
    assert {j.kind for j in build_jobs(config)} == {"run"}
    asked = load_config(
        write(
            tmp_path,
            {
                **BASE,
                "parts": ["table5", "judge", "core"],
                "models": {"systems": f"openai:{URL}#m", "judge": f"openai:{URL}#j"},
            },
        )
    )
    assert [j.kind for j in build_jobs(asked)].count("judge") == 2 and "core" in {
        j.kind for j in build_jobs(asked)
    }
    assert (
        role_settings(asked, "core").max_new_tokens == 1024
        and role_settings(asked, "judge").temperature == 0.0
    )


def test_the_command_refuses_half_a_price_and_a_bad_config_in_one_line(tmp_path, capsys):
    from trace_bench.cli import main

    path = write(tmp_path, BASE)
    assert main(["reproduce", str(path), "--dry-run", "--price-input", "0.1"]) == 2
    assert "--price-input and --price-output go together" in capsys.readouterr().err
    assert main(["reproduce", str(write(tmp_path, {**BASE, "colsed": 1}, "bad.yaml"))]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("trace-bench: error: ")
        and "unknown key(s) colsed" in err
        and len(err.splitlines()) == 1
    )


def test_core_over_all_splits_follows_the_closed_runs(tmp_path):
    body = {
        **BASE,
        "parts": ["table5", "core"],
        "models": {"systems": f"openai:{URL}#m", "core": f"openai:{URL}#c"},
        "core": {"split": "all", "systems": ["popularity"]},
    }
    splits = [
        j.split
        for j in build_jobs(load_config(write(tmp_path, {**body, "closed": {"split": "test"}})))
        if j.kind == "core"
    ]
    assert splits == ["test"]
    splits = [j.split for j in build_jobs(load_config(write(tmp_path, body))) if j.kind == "core"]
    assert splits == ["train", "validation", "test"]  # closed.split: all by default


def test_a_budget_in_which_a_constrained_reply_may_not_close_is_refused_before_anything_runs(
    tmp_path, capsys
):
    from tests.support.cli import run_cli
    from trace_harness.reproduce.jobs import Context

    def refused(body: dict) -> str:
        with pytest.raises(TraceDataError) as told:
            Context(load_config(write(tmp_path, body)))
        return str(told.value)

    systems = {
        "systems": ["dst", "llm_zero_shot"],
        "models": {"systems": {"llm": f"openai:{URL}#m", "max_new_tokens": 64}},
    }
    said = refused({**BASE, **systems})
    assert "c.yaml: dst: max_new_tokens=64 is below the 192 tokens in which its state delta" in said
    assert (
        "raise system_params.dst.max_new_tokens (or models.systems.max_new_tokens, for every system)" in said
    )
    own = {"dst": {"max_new_tokens": 191}}
    assert "raise system_params.dst.max_new_tokens to at least 192" in refused(
        {**BASE, **systems, "system_params": own}
    )
    Context(
        load_config(write(tmp_path, {**BASE, **systems, "system_params": {"dst": {"max_new_tokens": 192}}}))
    )
    by_prompt = {**BASE, **systems, "transport": {"structured": "prompt"}}
    Context(load_config(write(tmp_path, by_prompt)))  # no grammar to close: any budget
    judge = {
        **BASE,
        "parts": ["table5", "judge"],
        "models": {**BASE["models"], "judge": {"llm": f"openai:{URL}#j", "max_new_tokens": 96}},
    }
    assert "the LLM judge: max_new_tokens=96 is below the 97 tokens" in refused(judge)
    core = {
        **BASE,
        "parts": ["core"],
        "models": {**BASE["models"], "core": f"openai:{URL}#c"},
        "core": {"systems": ["popularity"], "debate_max_new_tokens": 105},
    }
    assert "raise core.debate_max_new_tokens to at least 106" in refused(core)
    rc, text = run_cli(capsys, "reproduce", str(write(tmp_path, {**BASE, **systems})), "--dry-run")
    assert rc == 2 and "dst: max_new_tokens=64 is below the 192 tokens" in text, text
