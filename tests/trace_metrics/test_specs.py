"""The metric registry: canonical ids, well-formed declarations, option defaults tied to the library, and
agreement with what the suite and the other benchmarks' code report."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from trace_metrics import specs

TRACE_IDS = (
    "recall@1 recall@3 mrr hit@1 hit@3 hit@5 mr_recall@1 mr_recall@3 grounding_score citation_density "
    "provenance_coverage cgs cgs_turn_mean entailment cgs_ent cgs_ent_turn_mean judge_relevance "
    "judge_informativeness judge_grounding judge_flow judge_justification bleu4 rouge_l spatial_coherence@2km "
    "route_efficiency_km price_alignment itinerary_diversity tsr t2r rejection_recovery human_citation_precision "
    "human_informativeness human_naturalness"
).split()
OTHER_IDS = {
    "sniprec": ["sniprec_hit@1", "sniprec_hit@5", "sniprec_hit@10", "sniprec_mrr", "avg_position"],
    "live": ["success_rate", "turns_to_success", "system_turns"],
    "collab_rec": [
        "moderator_success",
        "gini",
        "entropy",
        "coverage",
        "avg_recs_per_item",
        "reliability",
        "hallucination_rate",
    ],
    "core": ["factor_mean", "overall"],
}
MODULES = (
    "accuracy",
    "text",
    "grounding",
    "entailment",
    "practical",
    "recovery",
    "llm_judge",
    "human",
    "collab_rec",
    "core",
)


def _resolve(source: str):
    module, _, name = source.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_ids_are_the_canonical_list():
    assert [s.id for s in specs.of_benchmark("trace")] == TRACE_IDS
    for benchmark, ids in OTHER_IDS.items():
        assert [s.id for s in specs.of_benchmark(benchmark)] == ids
    assert set(specs.BENCHMARKS) == {"trace", *OTHER_IDS}
    assert (
        len(specs.METRIC_IDS)
        == len(set(specs.METRIC_IDS))
        == len(TRACE_IDS) + sum(map(len, OTHER_IDS.values()))
    )
    # what `trace-bench evaluate` reports without an NLI model, a judge or annotations
    assert specs.MODEL_FREE_METRIC_IDS == tuple(
        m for m in TRACE_IDS if not m.startswith(("entailment", "cgs_ent", "judge_", "human_"))
    )


def test_declarations_are_well_formed():
    seen: set[str] = set()
    for s in specs.METRICS.values():
        low, high = s.range
        assert high is None or low < high, s.id
        assert s.label and s.description and s.paper and s.benchmark in specs.BENCHMARKS, s.id
        assert s.module is None or s.module in MODULES, s.id
        # computed from the declaration: a per-item function or components, never both
        assert (s.item is None) == bool(s.components), s.id
        for c in s.components:
            assert c in seen, f"{s.id}: component {c} must be declared before it"
        # every keyword of its functions is a fixed argument or a declared option
        taken = {*s.item_parameter_names, *specs.keyword_only(s.aggregate)}
        assert taken <= set(s.arguments) | set(specs.OPTIONS), s.id
        assert set(s.arguments) <= set(s.item_parameter_names), s.id
        assert set(s.settings) <= set(specs.OPTIONS), s.id
        assert specs.to_dict(s)["id"] == s.id
        seen.add(s.id)
    lower_is_better = {s.id for s in specs.of_benchmark("trace") if not s.higher_is_better}
    assert lower_is_better == {"route_efficiency_km", "t2r"}
    # a parameter shown for a metric is its option's declared default
    assert dict(specs.parameters(specs.METRICS["cgs"])) == {
        "fuzzy_threshold": 0.8,
        "cd_gate": 0.05,
        "pc_window": 80,
        "grounding_turns": "recommendation",
    }
    assert dict(specs.parameters(specs.METRICS["recall@3"])) == {"k": 3}


def _library_functions():
    import trace_metrics.lib

    for info in pkgutil.iter_modules(trace_metrics.lib.__path__):
        module = importlib.import_module(f"trace_metrics.lib.{info.name}")
        for _, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__:
                yield fn
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                yield from (f for _, f in inspect.getmembers(cls, inspect.isfunction))


def test_option_defaults_come_from_the_library():
    """Each option's default is its library function's; every library function that takes the option under
    its name has that same default (none restates another), and so do the command line and the modules."""
    checked = 0
    for fn in _library_functions():
        for p in inspect.signature(fn).parameters.values():
            if p.name in specs.OPTIONS and p.default is not p.empty:
                assert p.default == specs.OPTIONS[p.name].default, (
                    f"{fn.__qualname__}({p.name}={p.default!r})"
                )
                checked += 1
    assert checked >= 10
    for option in specs.OPTIONS.values():
        fn = _resolve(option.source)
        assert inspect.signature(fn).parameters[option.argument or option.name].default == option.default
        assert option.problem(option.default) is None, option.name
    # the evaluate modules take the declared options without defaults of their own
    from trace_metrics.entailment.entailment import Entailment
    from trace_metrics.grounding.grounding import Grounding
    from trace_metrics.practical.practical import Practical
    from trace_metrics.recovery.recovery import Recovery
    from trace_metrics.text.text import Text
    from trace_metrics.trace_suite.trace_suite import TraceSuite

    for cls, module in (
        (Grounding, "grounding"),
        (Text, "text"),
        (Practical, "practical"),
        (Recovery, "recovery"),
        (Entailment, "entailment"),
    ):
        declared = specs.module_options(module)
        assert declared and set(declared) <= set(cls.options), module
        assert not set(declared) & set(inspect.signature(cls._score).parameters), module
    assert specs.module_options("grounding") == ("fuzzy_threshold", "cd_gate", "pc_window")
    assert specs.module_options("recovery") == ("compare_hit", "t2r")
    assert set(specs.SUITE_OPTIONS) <= set(TraceSuite.options)


def test_options_are_checked_against_their_declarations():
    resolved = specs.resolve_options({"radius_km": 1.5})
    assert resolved == {**{o: specs.OPTIONS[o].default for o in specs.SUITE_OPTIONS}, "radius_km": 1.5}
    assert list(resolved) == list(specs.SUITE_OPTIONS)
    assert specs.resolve_options({"fuzzy_threshold": "exact"})["fuzzy_threshold"] == "exact"
    for given, message in (
        ({"cd_gate": 0}, r"cd_gate must be in \(0, 1\], got 0"),
        ({"radius_km": -1.0}, r"radius_km must be > 0, got -1.0"),
        ({"pc_window": float("nan")}, "pc_window must be >= 0, got nan"),
        ({"fuzzy_threshold": "fuzzy"}, r"fuzzy_threshold must be in \[0, 1\] or 'exact', got 'fuzzy'"),
        ({"grounding_turns": "all"}, r"grounding_turns must be one of \('recommendation', 'system'\)"),
        ({"use_stemmer": "yes"}, "use_stemmer must be True or False"),
        ({"rouge_stemmer": True}, r"unknown metric option\(s\) \['rouge_stemmer'\]; expected some of \["),
    ):
        with pytest.raises(specs.MetricOptionError, match=message):
            specs.resolve_options(given)
    from trace_bench.errors import TraceBenchError

    assert issubclass(specs.MetricOptionError, TraceBenchError) and issubclass(
        specs.MetricOptionError, ValueError
    )


def test_lookup_errors_name_the_valid_set():
    with pytest.raises(KeyError, match="unknown metric id 'recall@10'"):
        specs.spec("recall@10")
    assert specs.spec("spatial_coherence@1.5km").id == "spatial_coherence@2km"
    with pytest.raises(KeyError, match="unknown benchmark 'trec'"):
        specs.of_benchmark("trec")
    assert [s.id for s in specs.by_family("recovery")] == ["tsr", "t2r", "rejection_recovery"]
    assert len(specs.by_module("llm_judge")) == 5


def test_model_free_ids_are_what_the_suite_reports(data_dir, tmp_path, reference_rows):
    from trace_dataset.io import write_jsonl
    from trace_metrics.lib import suite

    path = tmp_path / "p.jsonl"
    write_jsonl(path, reference_rows)
    values = suite.evaluate_run(data_dir, path)["values"]
    assert list(values) == list(specs.MODEL_FREE_METRIC_IDS)
    for m, v in values.items():
        low, high = specs.METRICS[m].range
        assert v is None or (low <= v and (high is None or v <= high)), m


def test_judge_declarations_are_the_judge_scales():
    from trace_metrics.lib.judge import JUDGE_SCALES

    assert {s.arguments["scale"]: s.id for s in specs.by_family("judge")} == JUDGE_SCALES


def test_the_other_benchmarks_report_their_declared_ids():
    from trace_metrics.core.scoring import summarize
    from trace_metrics.lib.collab_rec import collab_rec_scores
    from trace_metrics.lib.interactive import TURN_IDS, position_scores

    collab = collab_rec_scores([["a"]], [[1.0]], ["a", "b"], [0.5], [0.0])
    assert {s.id for s in specs.of_benchmark("collab_rec")} <= set(collab)
    assert {s.id for s in specs.of_benchmark("core")} <= set(summarize([]))
    # SnipRec's per-turn ranks are computed from their declarations, under ids of their own
    assert list(position_scores(7)) == list(TURN_IDS) == OTHER_IDS["sniprec"]
    assert position_scores(7) == {
        "sniprec_hit@1": 0.0,
        "sniprec_hit@5": 0.0,
        "sniprec_hit@10": 1.0,
        "sniprec_mrr": 1 / 7,
        "avg_position": 7.0,
    }
    assert {s.former_id for s in specs.of_benchmark("sniprec") if s.former_id} == {
        "hit@1",
        "hit@5",
        "hit@10",
        "mrr",
    }


def test_the_changed_ids_are_documented():
    """Every id that replaced another in results files is listed with the old key in docs/metrics.md."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text(encoding="utf-8")
    changed = [s for s in specs.METRICS.values() if s.former_id]
    assert changed
    for s in changed:
        assert f"| `{s.former_id}` | `{s.id}` |" in text, s.id


def test_module_path_and_lazy_package():
    import subprocess
    import sys
    from pathlib import Path

    import trace_metrics

    path = Path(trace_metrics.module_path("grounding"))
    assert path.is_absolute() and (path / "grounding.py").is_file() and (path / "README.md").is_file()
    with pytest.raises(ValueError, match="unknown trace metric module 'bleu'"):
        trace_metrics.module_path("bleu")
    assert trace_metrics.evaluate_run.__module__ == "trace_metrics.lib.suite"
    # importing the package (what the CLI does for --help) loads neither evaluate nor the suite
    code = "import sys, trace_metrics, trace_metrics.cli; print('evaluate' in sys.modules, 'trace_metrics.lib.suite' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False"]
