"""LLM Zero-Shot (App. F "LLMZeroShotBaseline"): the unaugmented LLM, the paper's reference row.

One request per turn: the dialogue history, the POI cards of the candidates (the pool without rejected POIs;
an open pool cut to the prefilter's top 16) and the one-sentence instruction of the turn's action
(`prompts/llm_zero_shot.txt`). The model answers `{"ranked_ids", "response"}` (`ranked_ids` on recommend and
compare turns only); the request, ranking completion, citations, the Popularity fallback and the counters are
`baselines.llm.common`'s (`ZeroShotPipeline`), which Itinerary-LLM and Memory-Aug. extend by a prompt section.
"""

from __future__ import annotations

from typing import ClassVar

from baselines.llm.common import ZeroShotPipeline


class LLMZeroShotBaseline(ZeroShotPipeline):
    name: ClassVar[str] = "llm_zero_shot"
