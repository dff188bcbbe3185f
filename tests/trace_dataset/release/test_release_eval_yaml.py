"""The release's eval.yaml: in the Hub's documented format (the committed schema, checked by the package's
validator and by a full JSON Schema implementation), one leaderboard per declared metric, refused when it is
not in the format."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml

from trace_dataset.release.eval_yaml import (
    EVAL_YAML,
    check_eval_yaml,
    eval_yaml,
    eval_yaml_schema,
    hub_tasks,
    write_eval_yaml,
)
from trace_metrics.tables import column


def test_the_release_carries_an_eval_yaml_in_the_hubs_format(release_dir):
    doc = yaml.safe_load((release_dir / EVAL_YAML).read_text(encoding="utf-8"))
    assert check_eval_yaml(doc) == []
    jsonschema.Draft7Validator.check_schema(eval_yaml_schema())
    jsonschema.validate(doc, eval_yaml_schema())
    assert doc["evaluation_framework"] == "inspect-ai"
    assert [t["id"] for t in doc["tasks"]] == [h.id for h in hub_tasks()]
    for task in doc["tasks"]:
        assert (task["config"], task["split"]) == ("dialogues", "test")
        assert task["solvers"] == [{"name": "trace_bench/trace_answer"}]
        assert task["scorers"] == [{"name": "trace_bench/trace_scores"}]
    assert "inspect eval trace_bench/trace" in doc["description"]


def test_each_leaderboard_is_a_column_of_the_leaderboard():
    for task in hub_tasks():
        col = column(task.id)  # a declared metric; `open:` reads the open pool's row
        assert col.id == task.metric and task.pool == ("open" if task.id.startswith("open:") else "closed")
    assert {"recall@1", "mrr", "cgs", "tsr", "rejection_recovery", "open:recall@1"} <= {
        t.id for t in hub_tasks()
    }


def test_a_corpus_without_test_dialogues_points_at_a_split_it_has():
    assert {t["split"] for t in eval_yaml({"train": 4, "validation": 0, "test": 0})["tasks"]} == {"train"}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("description"), "description"),
        (lambda d: d.update(evaluation_framework="my-harness"), "evaluation_framework"),
        (lambda d: d["tasks"][0].pop("scorers"), "scorers"),
        (lambda d: d["tasks"][0]["field_spec"].pop("target"), "target"),
        (lambda d: d["tasks"][1].update(id=d["tasks"][0]["id"]), "used twice"),
        (lambda d: d["tasks"][0].update(leaderboard="x"), "leaderboard"),
    ],
)
def test_what_is_not_in_the_format_is_named(change, problem):
    doc = copy.deepcopy(eval_yaml())
    change(doc)
    problems = check_eval_yaml(doc)
    assert problems and any(problem in p for p in problems), problems


def test_a_framework_other_than_inspect_needs_no_solvers():
    doc = {"name": "X", "description": "d", "evaluation_framework": "math-arena", "tasks": [{"id": "a"}]}
    assert check_eval_yaml(doc) == []
    doc["evaluation_framework"] = "inspect-ai"
    assert check_eval_yaml(doc)


def test_the_file_is_written_as_checked(tmp_path):
    path = write_eval_yaml(tmp_path)
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == eval_yaml()
    assert "&id" not in path.read_text(encoding="utf-8")  # plain YAML, no anchors
