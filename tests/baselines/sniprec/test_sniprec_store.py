"""The on-disk unit cache: written once per knowledge base, resumed after an interruption, shared."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from baselines.sniprec.store import UNITS_FILE, RulesExtractor, UnitStore, kb_key
from tests.support.sniprec import POIS, REVIEWS, write_kb
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase


class CountingExtractor(RulesExtractor):
    """The rules extractor, counting the POIs it is asked for and failing after `fail_after` calls."""

    chunk_pois = 1

    def __init__(self, fail_after: int | None = None):
        super().__init__("rules")
        self.asked: list[str] = []
        self.fail_after = fail_after

    def extract(self, kb, poi_ids: Sequence[str]):
        if self.fail_after is not None and len(self.asked) >= self.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        self.asked.extend(poi_ids)
        return super().extract(kb, poi_ids)


def test_units_are_cached_on_disk_and_not_extracted_again(kb, tmp_path):
    first = UnitStore(kb, CountingExtractor(), tmp_path / "cache")
    assert first.ensure(sorted(kb.pois)) == len(kb.pois)
    again = CountingExtractor()
    second = UnitStore(kb, again, tmp_path / "cache")
    assert second.ensure(sorted(kb.pois)) == 0 and again.asked == []
    assert all(second.units(p) == first.units(p) for p in kb.pois)
    summary = json.loads((second.folder / "store.json").read_text())
    assert summary["n_pois"] == len(kb.pois) and summary["totals"]["reviews"] == len(kb.reviews)
    assert second.folder.parent.name == kb_key(kb)


def test_an_interrupted_build_resumes_after_the_last_whole_poi(kb, tmp_path):
    ids = sorted(kb.pois)
    broken = UnitStore(kb, CountingExtractor(fail_after=2), tmp_path / "cache")
    with pytest.raises(KeyboardInterrupt):
        broken.ensure(ids)
    path = broken.folder / UNITS_FILE
    with open(path, "ab") as f:  # and a torn line, as a kill in the middle of a write leaves
        f.write(b'{"poi_id": "p_x", "dig')
    resumed = CountingExtractor()
    store = UnitStore(kb, resumed, tmp_path / "cache")
    assert store.ensure(ids) == len(ids) - 2
    assert resumed.asked == ids[2:]
    assert [json.loads(line)["poi_id"] for line in path.read_text().splitlines()] == ids


def test_a_changed_poi_is_extracted_again(tmp_path):
    root = write_kb(tmp_path / "kb")
    UnitStore(KnowledgeBase.load(root), RulesExtractor("rules"), tmp_path / "cache").ensure(
        ["p_sea", "p_veg"]
    )
    reviews = dict(REVIEWS, p_sea=[("Now they only serve pizza.", 2.0)])
    kb2 = KnowledgeBase.load(write_kb(tmp_path / "kb", POIS, reviews))
    extractor = CountingExtractor()
    store = UnitStore(kb2, extractor, tmp_path / "cache")
    assert store.ensure(["p_sea", "p_veg"]) == 1 and extractor.asked == ["p_sea"]
    assert store.units("p_sea")[0].text == "Now they only serve pizza."


def test_two_stores_on_one_folder_see_each_others_units(kb, tmp_path):
    a = UnitStore(kb, CountingExtractor(), tmp_path / "cache")
    b_extractor = CountingExtractor()
    b = UnitStore(kb, b_extractor, tmp_path / "cache")  # opened before a wrote anything
    a.ensure(["p_sea"])
    assert b.ensure(["p_sea", "p_veg"]) == 1 and b_extractor.asked == ["p_veg"]


def test_kinds_have_separate_stores_and_a_corrupt_line_is_named(kb, tmp_path):
    rules = UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache")
    docs = UnitStore(kb, RulesExtractor("document"), tmp_path / "cache")
    assert rules.folder != docs.folder
    docs.ensure(["p_sea"])
    assert len(docs.units("p_sea")) == 3  # two reviews + one document of attribute templates
    (docs.folder / UNITS_FILE).write_text("not json\n")
    with pytest.raises(TraceDataError, match=r"units.jsonl:1: bad SnipRec unit cache line"):
        UnitStore(kb, RulesExtractor("document"), tmp_path / "cache")


def test_unknown_poi_ids_fail_with_the_id(kb, tmp_path):
    with pytest.raises(KeyError, match="p_nope"):
        UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache").ensure(["p_nope"])
