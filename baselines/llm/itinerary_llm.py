"""Itinerary-LLM (Finding 1d, App. P): LLM Zero-Shot plus the Itinerary baseline's 500 m proximity graph.

The graph is the Itinerary baseline's, `baselines.toolkit.proximity.ProximityGraph` (all coordinate-valid POIs
of the city, an edge between POIs of different types within `radius_m`, same-type pairs excluded), built once
per city. The
prompt gains one section (`prompts/itinerary_llm.txt`, `$graph`): for each candidate card, its nearest graph
neighbours (at most `graph_neighbours`, nearest first, ties by business_id as the graph sorts them) with their
type and walking distance ("120 m", "1.2 km" as the Itinerary responses write them), or "none". Everything
else (ranking answer, fallback, prefilter) is Zero-Shot's. The paper finds the graph does not lift accuracy
(closed R@1 0.538 vs 0.533): a representational, not algorithmic, use of space.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE
from baselines.llm.common import ZeroShotPipeline
from baselines.toolkit.proximity import DEFAULT_RADIUS_M, ProximityGraph, ProximityGraphs
from baselines.toolkit.responses import format_distance, poi_name, type_noun

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

DEFAULT_GRAPH_NEIGHBOURS = 3


def graph_section(
    kb: KnowledgeBase,
    graph: ProximityGraph,
    labelled: Sequence[tuple[str, str]],
    max_neighbours: int = DEFAULT_GRAPH_NEIGHBOURS,
) -> str:
    """One line per candidate: `P1 Name: Other Place (hotel, 120 m); ...` or `... : none within reach`."""
    lines = []
    for label, pid in labelled:
        edges = graph.neighbours.get(pid, [])[:max_neighbours]
        near = "; ".join(
            f"{poi_name(kb, other)} ({type_noun(kb.pois[other].poi_type)}, {format_distance(d)})"
            for d, other in edges
        )
        lines.append(f"{label} {poi_name(kb, pid)}: {near or 'none within reach'}")
    return "\n".join(lines) if lines else "(no candidates left)"


class ItineraryLLMBaseline(ZeroShotPipeline):
    name: ClassVar[str] = "itinerary_llm"
    config_keys: ClassVar[tuple[str, ...]] = (*ZeroShotPipeline.config_keys, "radius_m", "graph_neighbours")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        radius_m: float = DEFAULT_RADIUS_M,
        graph_neighbours: int = DEFAULT_GRAPH_NEIGHBOURS,
        **params: Any,
    ):
        if (
            radius_m <= 0
            or isinstance(graph_neighbours, bool)
            or not isinstance(graph_neighbours, int)
            or graph_neighbours < 1
        ):
            raise ValueError(
                f"need radius_m > 0 and an integer graph_neighbours >= 1, got radius_m={radius_m!r}, "
                f"graph_neighbours={graph_neighbours!r}"
            )
        super().__init__(kb, batch_size, **params)
        self.radius_m = float(radius_m)
        self.graph_neighbours = graph_neighbours
        self.graphs = ProximityGraphs(kb, self.radius_m)

    def sections(self, inp: Mapping[str, Any], labelled: Sequence[tuple[str, str]]) -> dict[str, str]:
        return {"graph": graph_section(self.kb, self.graphs[inp["city"]], labelled, self.graph_neighbours)}
