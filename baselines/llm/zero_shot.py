"""LLM Zero-Shot (App. F "LLMZeroShotBaseline"): the unaugmented LLM, the paper's reference row.

One request per turn: the dialogue history, the POI cards of the candidates (the pool without rejected POIs;
an open pool cut to the prefilter's top 16) and the one-sentence instruction of the turn's action
(`prompts/zero_shot.txt`). The model answers `{"ranked_ids", "response"}` (`ranked_ids` on recommend and
compare turns only); ranking completion, citations, the Popularity fallback and the counters are
`baselines.llm.common`'s. Itinerary-LLM and Memory-Aug. are this pipeline plus one prompt section each
(`sections`), and Memory-Aug. a pass over the batch before the prompts are built (`prepare`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from baselines.llm.common import (
    RANKED_ACTIONS,
    LLMPipeline,
    complete_ranking,
    completion_scores,
    failure_text,
    messages,
    ranking_schema,
)
from baselines.llm.prompting import LabelMap, candidate_labels, format_history
from trace_llm import LLMOutputError


@dataclass
class Built:
    """One turn's request: the conversation, its schema and how to read the answer back."""

    conversation: list[dict[str, str]]
    schema: dict[str, Any]
    labelled: list[tuple[str, str]]  # (P<k>, business id) of the shown candidates
    labels: LabelMap
    ranked: bool


class LLMZeroShotBaseline(LLMPipeline):
    name: ClassVar[str] = "llm_zero_shot"
    prompt_name: ClassVar[str] = "zero_shot"

    def sections(self, inp: Mapping[str, Any], labelled: Sequence[tuple[str, str]]) -> dict[str, str]:
        """Extra prompt placeholders (none here; Itinerary-LLM's graph, Memory-Aug.'s memory)."""
        return {}

    def prepare(self, inputs: list[dict[str, Any]]) -> None:
        """A pass over the batch, in order, before any prompt is built (Memory-Aug.'s memory)."""

    def build(self, inp: Mapping[str, Any]) -> Built:
        labelled = candidate_labels(inp["shown"])
        labels = LabelMap()
        cards = self.cards.render(labelled, labels)
        fields = {
            "city": inp["city"], "poi_type": inp["poi_type"], "cards": cards,
            "history": format_history(inp["history"]), "instruction": self.prompt.render(inp["action"]),
            **self.sections(inp, labelled),
        }
        ranked = inp["action"] in RANKED_ACTIONS and bool(labelled)
        conversation = messages(self.prompt.render("system", **fields), self.prompt.render("user", **fields))
        return Built(conversation, ranking_schema([lab for lab, _ in labelled], ranked), labelled, labels, ranked)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.prefilter_batch(inputs)
        self.prepare(inputs)
        built = [self.build(inp) for inp in inputs]
        answers = self.ask_json([b.conversation for b in built], [b.schema for b in built])
        return [self.read(inp, b, answer) for inp, b, answer in zip(inputs, built, answers, strict=True)]

    def turn_meta(self, inp: Mapping[str, Any]) -> dict[str, Any]:
        """What every prediction of this baseline carries in `meta` besides the answer (Memory-Aug.: hits)."""
        return {}

    def read(self, inp: dict[str, Any], built: Built, answer: Any) -> dict[str, Any]:
        meta = self.turn_meta(inp)
        if isinstance(answer, LLMOutputError):
            return self.fallback(inp, failure_text(answer), meta)
        ranked: list[str] = []
        scores = None
        if built.ranked:
            by_label = dict(built.labelled)
            meta["model_ranking"] = list(answer["ranked_ids"])
            chosen = [by_label[lab] for lab in answer["ranked_ids"]]
            ranked = complete_ranking(chosen, inp["shown"], inp["rest"])
            scores = completion_scores(chosen, inp["shown"], inp["rest"], inp.get("prefilter_scores"))
        return self.output(inp, ranked, answer["response"], built.labels, meta, scores)
