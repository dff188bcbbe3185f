"""Collab-REC's benchmark command on hostile inputs: query ids that sanitise to
one file name, non-finite and out-of-range numbers, CSVs that are not UTF-8, hold a field past the csv module's
limit or an unhashable literal, and a run.json of the wrong JSON type. Each ends in one line and exit 2, and
nothing is lost or overwritten."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli
from tests.support.collab_rec import write_queries
from trace_harness.protocols.collab_rec.run import run_benchmark

KB_HEADER = (
    "city,country,budget,walkability,aqi,popularity,low_season,medium_season,high_season,interest_type,"
    "interest_title,interest_text\n"
)


def _row(city: str, budget: str, popularity: str) -> str:
    return (
        f"{city},Denmark,{budget},Great,Moderate,{popularity},\"['January']\",\"['May']\",\"['June']\",see,"
        f'Zoo,"Zoo: a zoo with a garden."\n'
    )


@pytest.fixture
def city_kb(tmp_path):
    path = tmp_path / "kb.csv"
    path.write_text(
        KB_HEADER
        + _row("Aalborg", "High", "Medium")
        + _row("Aarhus", "Low", "High")
        + _row("Odense", "Medium", "Low"),
        encoding="utf-8",
    )
    return path


def _queries(tmp_path, ids):
    return write_queries(
        tmp_path / "q.csv", [(i, "{'filters': {'budget': 'high'}}", "['Aalborg']", f"trip {i}") for i in ids]
    )


def test_query_ids_that_sanitise_alike_keep_their_own_files(city_kb, tmp_path):
    queries = _queries(tmp_path, ["x/y", "x_y", "x?y"])
    out = tmp_path / "run"
    first = run_benchmark("randrec", city_kb, queries, out, progress=False)
    files = sorted(p.name for p in (out / "queries").iterdir())
    assert len(files) == 3 and "x_y.json" in files  # a plain id keeps its plain name
    stored = {json.loads((out / "queries" / f).read_text())["query"]["id"] for f in files}
    assert stored == {"x/y", "x_y", "x?y"} and first["counts"]["queries"] == 3
    # resume: nothing is counted as done that was not, and the rerun gives the same metrics
    (out / "metrics.json").unlink()
    assert run_benchmark("randrec", city_kb, queries, out, progress=False) == first


def test_query_ids_of_four_byte_characters_get_file_names_that_fit(city_kb, tmp_path):
    """The file-name limit counts bytes: 80 four-byte characters are 320 bytes, over the 255 a name may have."""
    ids = ["\U0001d49c" * 80, "\U0001d49c" * 79 + "b", "\u00e9" * 80]
    out = tmp_path / "run"
    run_benchmark("randrec", city_kb, _queries(tmp_path, ids), out, progress=False)
    files = sorted(p.name for p in (out / "queries").iterdir())
    assert len(files) == 3 and all(
        len(f.encode("utf-8")) <= 233 for f in files
    )  # and their temporaries fit 255
    assert "\u00e9" * 80 + ".json" in files  # 160 bytes: still its plain name


def test_ids_that_differ_only_by_case_are_refused_before_any_work(city_kb, tmp_path):
    from trace_dataset.io import TraceDataError

    queries = _queries(tmp_path, ["Trip", "trip"])
    with pytest.raises(TraceDataError, match="would share the file queries/"):
        run_benchmark("randrec", city_kb, queries, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "queries").exists()


def test_a_query_file_of_another_query_is_not_taken_as_done(city_kb, tmp_path):
    from trace_dataset.io import TraceDataError

    queries = _queries(tmp_path, ["a", "b"])
    out = tmp_path / "run"
    run_benchmark("randrec", city_kb, queries, out, progress=False)
    (out / "queries" / "b.json").write_text((out / "queries" / "a.json").read_text())
    with pytest.raises(TraceDataError, match="holds no result of query 'b'"):
        run_benchmark("randrec", city_kb, queries, out, progress=False)


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--lambda-r", "nan", "expected a finite number >= 0, got 'nan'"),
        ("--lambda-r", "inf", "expected a finite number >= 0, got 'inf'"),
        ("--eps", "nan", "expected a finite number >= 0, got 'nan'"),
        ("--eps", "-0.1", "expected a finite number >= 0"),
        ("--k", "0", "expected an integer >= 1, got '0'"),
        ("--limit", "-1", "expected an integer >= 1"),
    ],
)
def test_non_finite_and_out_of_range_numbers_are_refused_when_parsed(
    city_kb, tmp_path, capsys, option, value, expected
):
    queries = _queries(tmp_path, ["a"])
    out = tmp_path / "run"
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "randrec",
        "--kb",
        city_kb,
        "--queries",
        queries,
        "--out",
        out,
        option,
        value,
        "--no-progress",
    )
    assert rc == 2 and f"argument {option}: {expected}" in text
    assert not out.exists()


def test_t_min_above_t_max_is_refused(city_kb, tmp_path, capsys):
    queries = _queries(tmp_path, ["a"])
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "randrec",
        "--kb",
        city_kb,
        "--queries",
        queries,
        "--out",
        tmp_path / "run",
        "--t-min",
        "50",
        "--t-max",
        "5",
        "--no-progress",
    )
    assert rc == 2 and text.count("\n") == 1 and "--t-min 50 exceeds --t-max 5" in text
    assert not (tmp_path / "run").exists()
    # with a fixed round budget T_min plays no part, so the same numbers are fine
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "randrec",
        "--kb",
        city_kb,
        "--queries",
        queries,
        "--out",
        tmp_path / "run",
        "--t-min",
        "50",
        "--t-max",
        "5",
        "--stopping",
        "fixed",
        "--no-progress",
    )
    assert rc == 0, text


def _hostile_queries(tmp_path, kind):
    path = tmp_path / f"{kind}.csv"
    head = "config_id,config,city,query_v\n"
    if kind == "latin-1":
        path.write_bytes((head + "a,\"{'filters': {}}\",[],caf\xe9 trip\n").encode("latin-1"))
    elif kind == "huge field":
        path.write_text(head + 'a,"{\'filters\': {}}",[],"' + "x" * 131_073 + '"\n', encoding="utf-8")
    else:  # an unhashable literal: a dict keyed by a list
        path.write_text(head + 'a,"{[1]: 2}",[],trip\n', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("latin-1", ":2: not UTF-8 text"),
        ("huge field", ":2: not a readable CSV record (field larger than field limit (131072))"),
        ("unhashable", ":2: column 'config': not a Python literal dict"),
    ],
)
def test_hostile_query_csvs_are_one_line_errors(city_kb, tmp_path, capsys, kind, message):
    queries = _hostile_queries(tmp_path, kind)
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "randrec",
        "--kb",
        city_kb,
        "--queries",
        queries,
        "--out",
        tmp_path / "run",
        "--no-progress",
    )
    assert rc == 2 and text.count("\n") == 1 and f"{queries}{message}" in text


def test_a_knowledge_base_that_is_not_utf8_is_one_line(tmp_path, capsys):
    kb = tmp_path / "kb.csv"
    kb.write_bytes((KB_HEADER + _row("K\xf8ge", "High", "Low")).encode("latin-1"))
    queries = _queries(tmp_path, ["a"])
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "toppop",
        "--kb",
        kb,
        "--queries",
        queries,
        "--out",
        tmp_path / "run",
        "--no-progress",
    )
    assert rc == 2 and f"{kb}:2: not UTF-8 text" in text


@pytest.mark.parametrize("content", ["[1, 2]", '"run"', "null"])
def test_a_run_json_of_the_wrong_type_is_one_line(city_kb, tmp_path, capsys, content):
    queries = _queries(tmp_path, ["a"])
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(content)
    rc, text = run_cli(
        capsys,
        "collab-rec",
        "run",
        "--strategy",
        "randrec",
        "--kb",
        city_kb,
        "--queries",
        queries,
        "--out",
        out,
        "--no-progress",
    )
    assert rc == 2 and "run.json: holds a JSON" in text and "--overwrite" in text
    (out / "metrics.json").write_text("{}")
    rc, text = run_cli(capsys, "collab-rec", "tables", out)
    assert rc == 2 and "not written by `trace-bench collab-rec run`" in text


def test_a_model_answering_one_request_at_a_time_takes_the_queries_one_by_one(city_kb, tmp_path):
    """Lockstep (round t of 16 queries in one batch) is for a server's concurrency; llama.cpp in process answers
    one request after another, so its queries are negotiated one by one: the same prompts, in an order where an
    agent's next round follows its last one (for llama.cpp's prompt cache), and the same results."""
    import itertools

    from baselines.collab_rec.moderator import ModeratorConfig
    from tests.support.llm import ScriptedLLM

    class OneAtATime(ScriptedLLM):
        answers_concurrently = False

    def reply(conversation):
        return {"candidates": ["Aalborg", "Odense"] if len(conversation[-1]["content"]) % 2 else ["Aarhus"]}

    queries = _queries(tmp_path, ["q1", "q2", "q3"])
    runs = {}
    for cls in (ScriptedLLM, OneAtATime):
        llm = cls(reply)
        metrics = run_benchmark(
            "mami",
            city_kb,
            queries,
            tmp_path / cls.__name__,
            llm=llm,
            config=ModeratorConfig(k=2, t_max=2, stopping="fixed"),
            max_repairs=0,
            progress=False,
        )
        order = [c[-1]["content"].split("[User query: ")[1].split("]")[0] for c in llm.seen]
        runs[cls] = metrics["systems"], order
    (lockstep, order), (one_by_one, order_one) = runs[ScriptedLLM], runs[OneAtATime]
    assert one_by_one == lockstep and sorted(order_one) == sorted(order) and len(order) == 18
    assert sum(a != b for a, b in itertools.pairwise(order_one)) == 2  # q1's six calls, then q2's, then q3's
    assert sum(a != b for a, b in itertools.pairwise(order)) > 2  # round 1 of all three, then round 2


@pytest.mark.parametrize(
    ("run", "metrics", "said"),
    [
        ({"strategy": 5, "config": []}, {"systems": {}}, "run.json: strategy: 5; expected a string"),
        ({"strategy": "mami", "config": []}, {"systems": {}}, "run.json: config: []; expected an object"),
        (
            {"strategy": "mami", "config": {}, "llm": "x"},
            {"systems": {}},
            'run.json: llm: "x"; expected an object',
        ),
        (
            {"strategy": "mami", "config": {}},
            {"systems": []},
            "metrics.json: systems: []; expected an object",
        ),
        (
            {"strategy": "mami", "config": {}},
            {"systems": {"M_1": 3}},
            "metrics.json: systems: expected an object",
        ),
    ],
)
def test_tables_name_a_field_of_the_wrong_type_inside_the_run_files(tmp_path, capsys, run, metrics, said):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps(run))
    (out / "metrics.json").write_text(json.dumps(metrics))
    rc, text = run_cli(capsys, "collab-rec", "tables", out)
    assert rc == 2 and said in text, text
