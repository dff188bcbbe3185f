"""reproduce writes the reliability reports of CoRE and the judge when its config asks (`reliability.k`), beside
each CoRE run and under OUT/reliability/judge; the key is checked as `core reliability --k` is."""

from __future__ import annotations

import pytest

from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import dry_run_responder, write_config
from tests.support.stub_server import StubOpenAI
from trace_dataset.io import TraceDataError, read_json
from trace_harness.reproduce.config import load_config
from trace_harness.reproduce.jobs import Context
from trace_harness.reproduce.run import run_live


def test_the_reports_are_written_when_the_config_asks(tmp_path):
    data = write_data_dir(tmp_path / "data")
    with StubOpenAI(dry_run_responder) as stub:
        path = write_config(
            tmp_path / "c.yaml",
            data,
            stub.url,
            systems=["tfidf"],
            parts=["table5", "core", "judge"],
            core={
                "systems": ["tfidf"],
                "split": "test",
                "limit": 1,
                "factors": ["coherence"],
                "max_rounds": 1,
            },
            reliability={"k": 2, "limit": 1},
        )
        ctx = Context(load_config(path))
        try:
            board = run_live(ctx, str(path), progress=False)
        finally:
            ctx.close()
    out = tmp_path / "out"
    core = read_json(out / "core" / "tfidf" / "test" / "reliability" / "reliability.json")
    assert core["kind"] == "core" and core["k"] == 2 and core["n_items"] == 1
    assert set(core["keys"]) == {"coherence", "factor_mean", "overall"}
    judge = read_json(out / "reliability" / "judge" / "reliability.json")
    assert judge["kind"] == "judge" and judge["systems"] == ["tfidf"] and judge["n_items"] >= 1
    assert set(board["reliability"]) == {"core/tfidf/test", "judge"}


@pytest.mark.parametrize("k", [1, "two", True])
def test_the_key_is_checked_as_the_flag(tmp_path, k):
    path = write_config(tmp_path / "c.yaml", tmp_path / "data", "http://127.0.0.1:9", reliability={"k": k})
    with pytest.raises(TraceDataError, match=r"reliability\.k"):
        load_config(path)


def test_no_report_unless_asked(tmp_path):
    path = write_config(tmp_path / "c.yaml", tmp_path / "data", "http://127.0.0.1:9")
    assert load_config(path).reliability.k is None
