"""What the six LLM baselines share: the model, App. F's decoding, the prefilter, the ranking answer, the
Popularity fallback, the per-row counters the runner sums into the run summary, and Zero-Shot's request
(`ZeroShotPipeline`), which LLM Zero-Shot, Itinerary-LLM and Memory-Aug. make.

- Model: `llm` is a `--llm` spec (any backend of `trace_llm`) or an `LLM` object. Decoding defaults are
  App. F's (§5 and the NeurIPS checklist; `baselines.llm.app_f_decoding`): DSPy 3.0.3's defaults, i.e.
  temperature 0.0 and `max_tokens=600` for a non-reasoning model, temperature 1.0 and 16,000 tokens for a
  reasoning one (gpt-5*, o1-o5, DSPy's own test on the model name); seed 42. The spec and settings land in the
  run metadata through `llm.describe()`.
- Prefilter (App. Q): a pool larger than `prefilter_k` (16) is cut to its top 16 by TF-IDF (default), by the
  Dense baseline's all-MiniLM-L6-v2 scorer (`prefilter="dense"`, Table 25), or not at all (`"none"`). The
  shown candidates keep the prefilter's order; the rest follow them in the ranking, in that order too.
- Ranking answer: the model returns `{"ranked_ids": [...], "response": "..."}` with ids from the cards
  (P1, P2, ...): under the LLM layer's constrained decoding (`--structured auto`, the default) the schema
  (`ranking_schema`: an `enum` of the shown ids, at most one per card, no other keys) is the grammar the reply
  is decoded with; the layer's schema validation and repair stay as the safety net. The ranking is the model's list, then
  the shown candidates it left out (in card order), then the candidates the prefilter cut.
- Fallback (App. F, Popularity "serves as ... fallback for other baselines when they fail"): when the JSON
  stays invalid after the layer's repairs (`json_repairs`, default 2, the layer's), the turn gets the
  Popularity baseline's answer for it, exactly as `trace-bench run popularity` gives it (ranking and template
  response; the pipeline comes from the registry, `baselines.BASELINES["popularity"]`); `meta.fallback` says
  so and `meta.counts.fallback_popularity` counts it. A server that stays unreachable is not a model failure:
  the run stops (and resumes later) instead of filling rows with Popularity.
- `meta.counts`: per-row integers (fallbacks, retries, failed checks) that `trace-bench run` sums over the
  predictions file into the run's `.meta.json` `summary.rows`.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from baselines import BASELINES
from baselines.base import DEFAULT_BATCH_SIZE, TracePipeline, add_count, rank_by_score
from baselines.llm import (
    APP_F_MAX_NEW_TOKENS,
    APP_F_TEMPERATURE,
    PREFILTER_BASELINES,
    PREFILTERS,
    app_f_decoding,
)
from baselines.llm.prompting import (
    DEFAULT_REVIEW_CHARS,
    DEFAULT_REVIEWS_PER_POI,
    CardIndex,
    LabelMap,
    candidate_labels,
    format_history,
    load_prompt,
    response_citations,
)
from baselines.toolkit.output import TurnOutput, turn_output
from baselines.toolkit.text import user_turns
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.constants import RECOMMENDATION_ACTIONS, SEED
from trace_llm import DEFAULT_SPEC, LLM, DecodingSettings, LLMOutputError, load_llm
from trace_llm.base import DEFAULT_MAX_REPAIRS
from trace_llm.budget import require_budget
from trace_llm.prompts import Prompt
from trace_llm.structured import constrains

if TYPE_CHECKING:
    from baselines.toolkit.dense import DenseIndex
    from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

DEFAULT_PREFILTER_K = 16  # App. Q: "TF-IDF top-16 prefilter"
# The response's length bound in the schema: under constrained decoding the string must close within it, so a
# small model that would ramble until max_new_tokens (600, App. F) still gives a complete, valid answer. A token
# is at least one character and some tokenizers read digits one at a time (SmolLM2 rambling "2022-01-01T00:00"
# filled 800 characters past 600 tokens), so the bound is in the worst case one token a character: 450 plus a
# full ranking of 16 ids with the keys (~150 characters) stays within App. F's 600 tokens.
RESPONSE_MAX_CHARS = 450
ERROR_CHARS = 300  # of an error or raw output kept in a prediction's meta


def decoding(
    temperature: float = APP_F_TEMPERATURE,
    top_p: float = 1.0,
    max_new_tokens: int = APP_F_MAX_NEW_TOKENS,
    seed: int = SEED,
) -> DecodingSettings:
    return DecodingSettings(temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, seed=seed)


def messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def ranking_schema(labels: Sequence[str], ranked: bool) -> dict[str, Any]:
    """The answer's JSON Schema: a response, and on recommend/compare turns a ranking of card ids.

    Under constrained decoding the schema is the grammar, so it says all the caller knows: the ids are an `enum`
    of the cards shown (the model can name no other), at most one per card, every key required, no other key,
    and a response of at most RESPONSE_MAX_CHARS characters (so that it closes before max_new_tokens).
    Repeated ids are not refused (no grammar engine enforces `uniqueItems`); `complete_ranking` keeps the first.
    """
    props: dict[str, Any] = {"response": {"type": "string", "minLength": 1, "maxLength": RESPONSE_MAX_CHARS}}
    required = ["response"]
    if ranked and labels:
        props = {
            "ranked_ids": {
                "type": "array",
                "items": {"type": "string", "enum": list(labels)},
                "minItems": 1,
                "maxItems": len(labels),
            },
            **props,
        }
        required = ["ranked_ids", "response"]
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def complete_ranking(chosen: Sequence[str], shown: Sequence[str], rest: Sequence[str] = ()) -> list[str]:
    """The model's list, then the shown candidates it left out (shown order), then the cut ones."""
    out = list(dict.fromkeys(p for p in chosen if p in shown))
    taken = set(out)
    out.extend(p for p in shown if p not in taken)
    out.extend(p for p in rest if p not in taken and p not in shown)
    return out


def completion_scores(
    chosen: Sequence[str],
    shown: Sequence[str],
    rest: Sequence[str] = (),
    prefilter_scores: Mapping[str, Any] | None = None,
) -> dict[str, tuple[int, Any]]:
    """What `complete_ranking`'s order sorts by, as scores (`baselines.base` "Ties"): the model's list strictly,
    then the shown candidates it left out, tied (their card order is no judgement), then the cut ones by the
    prefilter's scores."""
    out: dict[str, tuple[int, Any]] = {}
    for i, p in enumerate(dict.fromkeys(p for p in chosen if p in shown)):
        out[p] = (2, -i)
    out.update((p, (1, 0)) for p in shown if p not in out)
    scores = prefilter_scores or {}
    out.update((p, (0, scores.get(p, 0.0))) for p in rest if p not in out)
    return out


class LLMPipeline(TracePipeline):
    """Base of the LLM baselines: model, decoding, prompt file, prefilter, fallback and counters."""

    uses_prefilter: ClassVar[bool] = True  # DST and MRS rank the full pool themselves (App. Q)
    config_keys: ClassVar[tuple[str, ...]] = (
        "prefilter",
        "prefilter_k",
        "reviews_per_poi",
        "review_chars",
        "json_repairs",
    )

    def __init_subclass__(cls, **kwargs: Any):
        """A subclass's own `__init__(..., own keywords, **params)` passes the base keywords on; give it the merged
        signature, so that `--param` checking (`trace_harness.protocols.params`) and help() see every parameter."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return
        own = inspect.signature(init)
        kept = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        names = {p.name for p in kept}
        base = inspect.signature(super(cls, cls).__init__)  # the next __init__ in the MRO, unbound
        kept += [p for p in base.parameters.values() if p.kind is p.KEYWORD_ONLY and p.name not in names]
        kept += [p for p in own.parameters.values() if p.kind is p.VAR_KEYWORD]
        init.__signature__ = own.replace(parameters=kept)

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        llm: str | LLM = DEFAULT_SPEC,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_new_tokens: int | None = None,
        seed: int = SEED,
        llm_cache: str | bool | None = None,
        llm_options: Mapping[str, Any] | None = None,
        prefilter: str = "tfidf",
        prefilter_k: int = DEFAULT_PREFILTER_K,
        reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI,
        review_chars: int = DEFAULT_REVIEW_CHARS,
        json_repairs: int = DEFAULT_MAX_REPAIRS,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if prefilter not in PREFILTERS:
            raise ValueError(f"unknown prefilter {prefilter!r}; expected one of {PREFILTERS}")
        if self.uses_prefilter != (self.name in PREFILTER_BASELINES):
            raise RuntimeError(
                f"{type(self).__name__}.uses_prefilter disagrees with baselines.llm.PREFILTER_BASELINES"
            )
        if not self.uses_prefilter and prefilter != "tfidf":
            raise ValueError(f"{self.name} ranks the full pool itself (App. Q); it takes no prefilter")
        for key, value, low in (
            ("prefilter_k", prefilter_k, 1),
            ("reviews_per_poi", reviews_per_poi, 0),
            ("review_chars", review_chars, 1),
            ("json_repairs", json_repairs, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{key} must be an integer >= {low}, got {value!r}")
        self.prefilter = prefilter if self.uses_prefilter else "none"
        self.prefilter_k = prefilter_k
        self.reviews_per_poi = reviews_per_poi
        self.review_chars = review_chars
        self.json_repairs = json_repairs
        self.prompt: Prompt = load_prompt(self.name)  # prompts/<name>.txt (baselines.identity)
        if isinstance(llm, LLM):
            self.llm = llm
        else:  # None: App. F's value for this model (temperature 0.0 / 600 tokens; 1.0 / 16,000 if reasoning)
            temperature, max_new_tokens = app_f_decoding(str(llm), temperature, max_new_tokens)
            self.llm = load_llm(
                str(llm),
                decoding(temperature, top_p, max_new_tokens, seed),
                cache_path=llm_cache,
                **dict(llm_options or {}),
            )
        # every request's decoding: the model's, with this system's own temperature and budget where given (one
        # model object serves every system of a reproduce run; `system_params.dst.max_new_tokens`)
        self.settings = self.llm.settings.replace(
            **{
                k: v
                for k, v in (("temperature", temperature), ("max_new_tokens", max_new_tokens))
                if v is not None
            }
        )
        if constrains(self.llm.structured):
            require_budget(
                self.budget_schemas(self.prefilter_k),
                self.settings.max_new_tokens,
                self.name,
                "--max-new-tokens (a reproduce config: models.systems.max_new_tokens or "
                f"system_params.{self.name}.max_new_tokens)",
            )
        self.tfidf = TfidfScorer(kb)
        self.cards = CardIndex(kb, reviews_per_poi, review_chars)
        self._popularity = BASELINES["popularity"](kb, batch_size)  # the fallback is that system (registry)
        self._dense: DenseIndex | None = None

    @classmethod
    def budget_schemas(cls, prefilter_k: int = DEFAULT_PREFILTER_K) -> dict[str, dict[str, Any]]:
        """What the baseline asks for under a constraint, by name, at its largest (for `require_budget`): a
        ranking of up to `prefilter_k` cards and, on ask turns, a response."""
        labels = [lab for lab, _ in candidate_labels([""] * prefilter_k)]
        return {
            f"ranking of {prefilter_k} cards": ranking_schema(labels, True),
            "response": ranking_schema(labels, False),
        }

    # -- metadata ----------------------------------------------------------------------------------
    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        if (
            self.settings != self.llm.settings
        ):  # this system's own decoding (a run's other systems keep theirs)
            config["settings"] = self.settings.to_dict()
        if not self.uses_prefilter:
            for key in ("prefilter", "prefilter_k"):
                config.pop(key, None)
        config["prompt"] = self.prompt.describe()
        return config

    def summary(self) -> dict[str, Any]:
        """This process's LLM usage (requests, cache hits, tokens, JSON repairs and failures)."""
        return {"llm_usage": self.llm.usage}

    # -- prefilter ---------------------------------------------------------------------------------
    def dense_index(self) -> DenseIndex:
        if self._dense is None:
            from baselines.toolkit.dense import DenseIndex

            self._dense = DenseIndex(self.kb)
        return self._dense

    def prefilter_batch(self, inputs: Sequence[dict[str, Any]]) -> None:
        """Set inp["shown"] (candidates for the prompt) and inp["rest"] (the cut ones, best first)."""
        todo = []
        for inp in inputs:
            cands = inp["candidates"]
            if self.prefilter == "none" or len(cands) <= self.prefilter_k:
                inp["shown"], inp["rest"] = list(cands), []
            else:
                todo.append(inp)
        if not todo:
            return
        if self.prefilter == "dense":
            from baselines.toolkit.dense import DEFAULT_QUERY_MODE

            index = self.dense_index()
            vectors = index.query_vectors([user_turns(inp["history"]) for inp in todo], DEFAULT_QUERY_MODE)
            all_scores = [
                index.scores(vec, inp["candidates"], inp["state"].rejected_poi_ids)
                for inp, vec in zip(todo, vectors, strict=True)
            ]
        else:
            all_scores = self.tfidf.scores_many(
                [inp["query"] for inp in todo], [inp["candidates"] for inp in todo]
            )
        for inp, scores in zip(todo, all_scores, strict=True):
            order = rank_by_score(inp["candidates"], scores)
            inp["shown"], inp["rest"] = order[: self.prefilter_k], order[self.prefilter_k :]
            inp["prefilter_scores"] = {p: scores[p] for p in inp["rest"]}

    def preprocess(self, row: Mapping[str, Any]) -> dict[str, Any]:
        inp = super().preprocess(row)
        inp["row"] = row  # for the fallback, which answers the turn exactly as the Popularity baseline does
        return inp

    # -- fallback and outputs ------------------------------------------------------------------------
    def fallback(self, inp: dict[str, Any], reason: str, meta: dict[str, Any] | None = None) -> TurnOutput:
        """The Popularity baseline's answer for this turn (its defaults, as `trace-bench run popularity`),
        flagged and counted."""
        out = self._popularity._forward([self._popularity.preprocess(inp["row"])])[0]
        p = out.prediction
        meta = dict(meta or {})
        meta.update(fallback="popularity", fallback_reason=reason[:ERROR_CHARS])
        add_count(meta, "fallback_popularity")
        return turn_output(inp, p.ranked_poi_ids, p.response, p.citations, meta, out.scores)

    def output(
        self,
        inp: Mapping[str, Any],
        ranked: Sequence[str],
        response: str,
        labels: LabelMap,
        meta: dict[str, Any],
        scores: Mapping[str, Any] | None = None,
    ) -> TurnOutput:
        """A prediction: citations are the prompt's [Rn] labels the response uses; `scores`, what the ranking
        sorts by (ties for a random tie-break, `baselines.base`), never written to the prediction."""
        citations, unknown = response_citations(response, labels.review_ids)
        if unknown:
            meta["unknown_labels"] = unknown  # the labels; the count is one per turn, as the report divides
            add_count(meta, "unknown_labels")
        kept = dict(scores) if scores is not None and ranked else None
        return turn_output(inp, ranked, response, citations, meta, kept)

    def ask_json(
        self, conversations: Sequence[list[dict[str, str]]], schemas: Sequence[dict[str, Any]]
    ) -> list[Any]:
        """One schema-valid value (or an LLMOutputError) per conversation; one batch per distinct schema."""
        results: list[Any] = [None] * len(conversations)
        groups: dict[str, list[int]] = {}
        for i, schema in enumerate(schemas):
            groups.setdefault(json.dumps(schema, sort_keys=True), []).append(i)

        def run(idx: list[int]) -> None:
            answers = self.llm.generate_json_batch(
                [conversations[i] for i in idx], schemas[idx[0]], self.settings, max_repairs=self.json_repairs
            )
            for i, answer in zip(idx, answers, strict=True):
                results[i] = answer

        if len(groups) > 1 and self.llm.backend == "openai":
            # Schemas differ with the number of candidates shown; the groups go to the server at the same time
            # (each call runs its own event loop) so that one group's stragglers do not idle the server.
            with ThreadPoolExecutor(max_workers=len(groups)) as pool:
                for future in [pool.submit(run, idx) for idx in groups.values()]:
                    future.result()
        else:  # an in-process model answers one batch at a time anyway
            for idx in groups.values():
                run(idx)
        return results


def failure_text(error: LLMOutputError) -> str:
    return f"{error.error} (after {error.attempts} attempts); last output: {error.raw[:ERROR_CHARS]!r}"


@dataclass
class Built:
    """One turn's request: the conversation, its schema and how to read the answer back."""

    conversation: list[dict[str, str]]
    schema: dict[str, Any]
    labelled: list[tuple[str, str]]  # (P<k>, business id) of the shown candidates
    labels: LabelMap
    ranked: bool


class ZeroShotPipeline(LLMPipeline):
    """History + POI cards + the turn's action sentence -> `{"ranked_ids", "response"}`: Zero-Shot's request.

    LLM Zero-Shot is this pipeline as it stands; Itinerary-LLM and Memory-Aug. add one prompt section each
    (`sections`), and Memory-Aug. a pass over the batch before the prompts are built (`prepare`).
    """

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
            "city": inp["city"],
            "poi_type": inp["poi_type"],
            "cards": cards,
            "history": format_history(inp["history"]),
            "instruction": self.prompt.render(inp["action"]),
            **self.sections(inp, labelled),
        }
        ranked = inp["action"] in RECOMMENDATION_ACTIONS and bool(labelled)
        conversation = messages(self.prompt.render("system", **fields), self.prompt.render("user", **fields))
        return Built(
            conversation, ranking_schema([lab for lab, _ in labelled], ranked), labelled, labels, ranked
        )

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        self.prefilter_batch(inputs)
        self.prepare(inputs)
        built = [self.build(inp) for inp in inputs]
        answers = self.ask_json([b.conversation for b in built], [b.schema for b in built])
        return [self.read(inp, b, answer) for inp, b, answer in zip(inputs, built, answers, strict=True)]

    def turn_meta(self, inp: Mapping[str, Any]) -> dict[str, Any]:
        """What every prediction of this baseline carries in `meta` besides the answer (Memory-Aug.: hits)."""
        return {}

    def read(self, inp: dict[str, Any], built: Built, answer: Any) -> TurnOutput:
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
