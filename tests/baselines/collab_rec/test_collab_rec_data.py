"""Collab-REC's CSV formats: the real files load, bad files fail naming file, line and column; M(c) in the paper's
reading and with the code's always-matching filters; the interests lexicon against the queries' own city lists;
the benchmark runner's output folder (resume, refusal to mix settings)."""

from __future__ import annotations

import json
import re

import pytest

from baselines.collab_rec.catalogue import city_matcher, load_city_kb, load_queries
from tests.support.collab_rec import recorded_llm, subset_kb, subset_queries, write_queries
from trace_dataset.io import TraceDataError

KB_HEADER = (
    "city,country,budget,walkability,aqi,popularity,low_season,medium_season,high_season,interest_type,"
    "interest_title,interest_text\n"
)
ROW = (
    'Aalborg,Denmark,High,Great,Moderate,Medium,"[\'January\']","[\'May\']","[\'June\']",see,Zoo,"Zoo: a zoo '
    'with a garden."\n'
)


def test_real_files_load(collab_rec_dir):
    kb = load_city_kb(collab_rec_dir / "eu-cities-database.csv")
    queries = load_queries(collab_rec_dir / "queries.csv")
    assert len(kb.cities) == 200 and sum(c.n_pois for c in kb.cities.values()) == 4767
    assert kb.names[0] == "Aalborg" and kb.cities["Aalborg"].seasons["high"] == ("June", "July", "August")
    assert len(queries) == 45 and queries[0].id == "c_p_143_pop_high_hard"
    assert queries[0].filters == {
        "popularity": "high",
        "month": "february",
        "budget": "high",
        "interests": "arts & entertainment",
    }
    assert all(c in kb.cities for q in queries for c in q.cities)


def test_filters_paper_and_code(collab_rec_dir):
    kb = load_city_kb(collab_rec_dir / "eu-cities-database.csv")
    filters = {"month": "january", "seasonality": "high", "budget": "high"}
    paper, code = city_matcher(kb, filters), city_matcher(kb, filters, always_match=True)
    assert kb.cities["Aalborg"].budget == "High" and paper("Aalborg", "budget", "high")
    assert not paper("Aalborg", "seasonality", "high") and code(
        "Aalborg", "seasonality", "high"
    )  # Jan is low
    assert paper("Aalborg", "seasonality", "low")
    assert not paper("Pristina", "month", "january") and code(
        "Pristina", "month", "january"
    )  # no season data
    assert not paper("Atlantis", "month", "january") and code("Atlantis", "month", "january")
    assert not code("Atlantis", "budget", "high")
    assert paper("Aalborg", "popularity", "low or medium") and not paper("Aalborg", "popularity", "high")


def test_interests_lexicon_agrees_with_the_queries_city_lists(collab_rec_dir):
    """Among cities meeting a query's other filters, the interests match should say whether the city is in the
    query's list of matching cities (built by the authors from a KB with a category column we do not have)."""
    kb = load_city_kb(collab_rec_dir / "eu-cities-database.csv")
    agree = total = 0
    for q in load_queries(collab_rec_dir / "queries.csv"):
        m = city_matcher(kb, q.filters)
        for city in kb.names:
            if all(m(city, k, v) for k, v in q.filters.items() if k != "interests"):
                total += 1
                agree += m(city, "interests", q.filters["interests"]) == (city in q.cities)
    assert total > 1500 and agree / total >= 0.85  # measured 0.895 (docs/collab_rec.md)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("city,country\n", "missing column(s)"),
        (KB_HEADER + ROW.replace("['January']", "['Janvier']"), "low_season"),
        (KB_HEADER + ROW.replace("\"['May']\"", "not-a-list"), "medium_season"),
        (KB_HEADER + ROW + ROW.replace("Moderate", "Great"), "column(s) ['aqi'] differ"),
        (KB_HEADER, "no city rows"),
    ],
)
def test_bad_knowledge_base(tmp_path, text, message):
    path = tmp_path / "kb.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TraceDataError, match=re.escape(message)) as e:
        load_city_kb(path)
    assert str(path) in str(e.value)
    if "differ" in message or "season" in message:
        assert f"{path}:" in str(e.value)  # the line is named too


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("{'filters': {'budget': 'cheap'}}", "budget='cheap'"),
        ("{'filters': {'weather': 'sunny'}}", "unknown filter 'weather'"),
        ("{'filters': {'interests': 'Nightlife Spot'}", "column 'config': not a Python literal"),
        ("{'persona': 'x'}", "no 'filters'"),
        ("{'filters': {'budget': 3}}", "must be a string"),
    ],
)
def test_bad_query_file(tmp_path, config, message):
    path = write_queries(
        tmp_path / "q.csv",
        [("ok", "{'filters': {'budget': 'low'}}", "[]", "cheap trip"), ("bad", config, "[]", "text")],
    )
    with pytest.raises(TraceDataError, match=re.escape(message)) as e:
        load_queries(path)
    assert f"{path}:3" in str(e.value)


def test_duplicate_ids_and_user_query_files(tmp_path):
    path = write_queries(
        tmp_path / "q.csv",
        [("a", "{'filters': {'budget': 'low'}}", "[]", "x"), ("a", "{'filters': {}}", "[]", "y")],
    )
    with pytest.raises(TraceDataError, match="already used on line 2"):
        load_queries(path)
    ok = write_queries(
        tmp_path / "ok.csv",
        [("mine", "{'filters': {'popularity': 'low', 'interests': 'Food'}}", "", "Quiet food cities")],
    )
    assert (
        load_queries(ok)[0].filters == {"popularity": "low", "interests": "food"}
        and load_queries(ok)[0].cities == ()
    )


def test_runner_resumes_and_refuses_other_settings(collab_rec_dir, tmp_path):
    from baselines.collab_rec.moderator import ModeratorConfig
    from trace_harness.protocols.collab_rec.run import run_benchmark

    kb = subset_kb(
        collab_rec_dir,
        tmp_path / "kb.csv",
        {
            "Aalborg",
            "Bergen",
            "Bern",
            "Dublin",
            "Zurich",
            "Porto",
            "Riga",
            "Sofia",
            "Turku",
            "Lyon",
            "Oradea",
            "Nis",
        },
    )
    queries = collab_rec_dir / "queries.csv"
    out = tmp_path / "run"
    first = run_benchmark("randrec", kb, queries, out, limit=3, progress=False)
    (out / "queries" / "c_p_15_pop_high_hard.json").unlink()
    assert (
        run_benchmark("randrec", kb, queries, out, limit=3, progress=False) == first
    )  # resumed, same result
    assert (out / "offers.jsonl").read_text().count("\n") == 3
    with pytest.raises(TraceDataError, match="differing: config"):
        run_benchmark("randrec", kb, queries, out, limit=3, config=ModeratorConfig(k=5), progress=False)
    assert (
        run_benchmark(
            "randrec", kb, queries, out, limit=3, config=ModeratorConfig(k=5), overwrite=True, progress=False
        )["systems"]["RandRec"]["avg_recs_per_item"]
        > 0
    )
    with pytest.raises(ValueError, match="needs an LLM"):
        run_benchmark("mami", kb, queries, tmp_path / "x", progress=False)


def test_cli_run_tables_and_errors(collab_rec_dir, tmp_path, capsys):
    from trace_bench.cli import main

    kb, queries = collab_rec_dir / "eu-cities-database.csv", collab_rec_dir / "queries.csv"
    for strategy in ("toppop", "randrec"):
        args = ["collab-rec", "run", "--strategy", strategy, "--kb", str(kb), "--queries", str(queries)]
        assert main([*args, "--out", str(tmp_path / strategy), "--no-progress"]) == 0
    assert "TopPop   success 0.762  gini 0.95  entropy 0.43  coverage 5.0%" in capsys.readouterr().out
    assert (
        main(["collab-rec", "tables", str(tmp_path / "toppop"), str(tmp_path / "randrec"), "--reference"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "TopPop = 0.762 (Gini 0.95, entropy 0.43, coverage 5.0%)" in out and "| Gemma-4b | A | 0.615 |" in out
    )
    with pytest.raises(SystemExit):  # argparse: not one of the code behaviours
        main([*args, "--out", str(tmp_path / "x"), "--code-behaviour", "nope"])
    with pytest.raises(SystemExit):  # argparse: refused while the options are parsed
        main([*args, "--out", str(tmp_path / "x"), "--k", "0"])
    assert "argument --k: expected an integer >= 1, got '0'" in capsys.readouterr().err
    assert main([*args[:-1], str(kb), "--out", str(tmp_path / "y")]) == 2  # the KB given as the query file
    assert "missing column(s) ['config_id', 'config', 'query_v']" in capsys.readouterr().err


def test_runner_sasi_on_recorded_outputs(collab_rec_dir, tmp_path):
    """SASI through `run_benchmark` on the real KB, the model's reply recorded in the LLM layer's cache (the
    live model runs MAMI in test_collab_rec_e2e.py): the list as returned, a hallucination counted."""
    from baselines.collab_rec.agents import AgentCaller
    from baselines.collab_rec.moderator import ModeratorConfig
    from trace_harness.protocols.collab_rec.run import city_tasks, run_benchmark

    kb = subset_kb(collab_rec_dir, tmp_path / "kb.csv", {"Amsterdam", "Bergen", "Dublin", "Porto", "Riga"})
    queries = subset_queries(collab_rec_dir, tmp_path / "q.csv", ["c_p_143_pop_high_hard"])
    config = ModeratorConfig(k=2)
    (task,) = city_tasks(load_city_kb(kb), load_queries(queries), config)
    prompt = AgentCaller(None, config).sasi_prompt(task)
    llm = recorded_llm(tmp_path, {prompt: '```json\n{"candidates": ["Paris", "Porto", "Riga"]}\n```'})
    # the paper's open list (the recorded reply names Paris, outside the catalogue: an enum would refuse it)
    metrics = run_benchmark(
        "sasi",
        kb,
        queries,
        tmp_path / "sasi",
        llm=llm,
        config=config,
        max_repairs=0,
        progress=False,
        catalogue_enum=False,
    )
    assert llm.usage["requests"] == 0 and llm.usage["cache_hits"] == 1
    assert metrics["counts"]["agent_calls"] == 1 and metrics["counts"]["agent_failures"] == 0
    sasi = metrics["systems"]["SASI"]
    assert sasi["out_of_catalogue"] == 1 and sasi["coverage"] == pytest.approx(1 / 5)  # Paris is no KB city
    record = json.loads((tmp_path / "sasi" / "queries" / "c_p_143_pop_high_hard.json").read_text())
    agent = record["rounds"][0]["agents"][0]
    assert record["systems"]["SASI"]["offer"] == ["Paris", "Porto"] == agent["listed"]
    assert agent["invalid"] == {"Paris": "out_of_catalogue"} and agent["hallucination"] == 0.5
    assert metrics["llm"]["prompt_files"]["collab_rec.txt"] and metrics["strategy"] == "sasi"
