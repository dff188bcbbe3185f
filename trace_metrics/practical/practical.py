"""Trace practical value (spatial coherence, route efficiency, price alignment, itinerary diversity) as an
`evaluate` metric, one item per dialogue.

A thin layer over `trace_metrics.lib.practical`; definitions and choices are in this folder's README.md.
"""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib import practical as lib

_DESCRIPTION = """\
Practical value of each dialogue's recommended POIs (Trace §3, App. E, App. L): spatial coherence (share of
POI pairs within 2 km, haversine), route efficiency (nearest-neighbour path length in km, lower is better),
price alignment (share of priced POIs at or under the budget the user states with a budget word; dialogues
without one are skipped) and itinerary diversity (distinct POI types / 3).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of list of str): per dialogue, its recommended POI ids in order (the suite uses the
        top-1 of each recommend turn and the top-2 of each compare turn, distinct).
    references (list of list of str): per dialogue, the user's utterances (where the budget is stated).
    pois (mapping, optional): business_id -> a `PoiPoint`, a `Poi`, or a dict with latitude, longitude, price
        (1-4 or None) and poi_type.
    kb_dir (str, optional): a knowledge-base folder to read the POIs from instead of `pois`.
    radius_km (float): spatial coherence radius, default 2.0 (the key becomes spatial_coherence@<r>km).
    return_per_item (bool): also return `<metric>_per_item` lists (None where a dialogue has no value).
Returns:
    spatial_coherence@2km (0-1), route_efficiency_km (>= 0), price_alignment (0-1), itinerary_diversity
    (1/3-1), each with `<metric>_n` (dialogues that have a value), and n (dialogues given).
Examples:
    >>> practical = evaluate.load(trace_metrics.module_path("practical"))
    >>> pois = {"a": {"latitude": 29.95, "longitude": -90.07, "price": 1, "poi_type": "restaurant"},
    ...         "b": {"latitude": 29.96, "longitude": -90.07, "price": 3, "poi_type": "hotel"}}
    >>> practical.compute(predictions=[["a", "b"]], references=[["something cheap"]], pois=pois)["price_alignment"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Practical(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Sequence(datasets.Value("string")),
        "references": datasets.Sequence(datasets.Value("string")),
    }
    options = ("pois", "kb_dir", *base.declared_options("practical"), "return_per_item")  # radius_km

    def _score(
        self, predictions, references, pois=None, kb_dir=None, return_per_item=False, **options
    ) -> dict:
        radius_km = base.metric_options("practical", options)["radius_km"]
        if (pois is None) == (kb_dir is None):
            raise ValueError(
                "give exactly one of `pois` (business_id -> POI) or `kb_dir` (a knowledge-base folder)"
            )
        if kb_dir is not None:
            from trace_dataset.kb.store import KnowledgeBase

            pois = KnowledgeBase.load(kb_dir).pois
        points = []
        for i, ids in enumerate(predictions):
            missing = [p for p in ids if p not in pois]
            if missing:
                raise ValueError(f"dialogue {i}: POI id(s) {missing[:5]} are not in `pois`")
            points.append([lib.to_point(pois[p]) for p in ids])
        ceilings = [lib.price_ceiling(texts) for texts in references]
        return lib.score(points, ceilings, radius_km=radius_km, return_per_item=return_per_item)
