"""The one identity table (baselines/identity.py): names, modules, prompt files, labels, and who reads it."""

from __future__ import annotations

import importlib
import re

import pytest

from baselines import BASELINES, COUNTERFACTUAL_BASELINES, LLM_BASELINES, NON_LLM_BASELINES, SYSTEM_BASELINES
from baselines.identity import BY_NAME, IDENTITIES, TRACE, identity, label, markdown_table
from tests.support.layout import LAYERS, ROOT

PRODUCT = (*LAYERS, "benchmarks", "scripts")


def test_names_are_unique_and_the_registry_is_the_table():
    names = [i.name for i in IDENTITIES]
    assert len(set(names)) == len(names) and len({i.label for i in IDENTITIES}) == len(names)
    assert tuple(BASELINES) == tuple(names)
    assert NON_LLM_BASELINES + LLM_BASELINES + SYSTEM_BASELINES + COUNTERFACTUAL_BASELINES == tuple(names)
    # the deliberately bad systems of the simulator report: registered, outside every list a job loops over
    assert COUNTERFACTUAL_BASELINES == ("random_pick", "contrary") and len(NON_LLM_BASELINES) == 9
    # the paper's nine non-LLM and six LLM baselines (a system of one's own adds a record, not a change here)
    paper = [i for i in IDENTITIES if i.paper.startswith(TRACE)]
    assert (
        len([i for i in paper if i.group == "non_llm"]) == 9
        and len([i for i in paper if i.group == "llm"]) == 6
    )


@pytest.mark.parametrize("record", IDENTITIES, ids=lambda i: i.name)
def test_each_record_names_its_class_module_and_prompt(record):
    cls = getattr(importlib.import_module(record.module), record.cls)
    assert cls.name == record.name
    # name = module: a one-module baseline's module is named after it; a system of several modules, its folder
    parts = record.module.split(".")
    if parts[1] in ("non_llm", "llm"):
        assert parts[2] == record.name
    else:
        assert record.name.startswith(parts[1])
    # name = prompt file, for the one-prompt LLM baselines
    if record.group == "llm":
        assert (ROOT / "baselines" / "llm" / "prompts" / f"{record.name}.txt").is_file()


def test_pipelines_take_family_and_isolation_from_the_record(small_kb):
    pipe = BASELINES["tfidf"](small_kb)
    assert (pipe.family, pipe.session_isolated) == ("non-LLM", True)
    assert pipe.describe()["family"] == identity("tfidf").family
    assert not identity("memory_aug").session_isolated
    assert [i.name for i in IDENTITIES if not i.session_isolated] == ["memory_aug"]


def test_declared_llm_options_are_flagged_options_of_systems_that_ask_an_llm():
    from trace_llm.options import FLAG_NAMES, check_options

    declared = {i.name: dict(i.llm_options) for i in IDENTITIES if i.llm_options}
    # measured faster side by side (docs/llm.md, "Side by side"); Zero-Shot, RAG-Citation, Itinerary-LLM and
    # Collab-REC were not, and keep one by one
    assert declared == {n: {"parallel": 4} for n in ("dst", "multi_review_synthesis", "memory_aug")}
    for name, options in declared.items():
        assert identity(name).llm and check_options(options, f"{name} ", FLAG_NAMES) == options


def test_labels_and_unknown_names():
    assert label("knowledge") == "Knowledge-Enh." and label("my_system") == "my_system"
    with pytest.raises(KeyError, match="unknown baseline 'nope'; expected one of"):
        identity("nope")


def test_the_docs_print_the_table():
    assert markdown_table() in (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")


def test_no_second_list_of_labels():
    """A label appears as a string only in the table: everything else asks `baselines.identity`."""
    found = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*")):
            if (
                path.suffix not in (".py", ".json")
                or path.name == "identity.py"
                or "__pycache__" in path.parts
            ):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [
                f"{path.relative_to(ROOT)}: {i.label}"
                for i in IDENTITIES
                if re.search(rf"""(["']){re.escape(i.label)}\1""", text)
            ]
    assert not found, found
    assert set(BY_NAME) == {i.name for i in IDENTITIES}
