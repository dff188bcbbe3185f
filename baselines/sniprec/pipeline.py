"""SnipRec (Sun et al.) and its comparison systems as Trace pipelines (`trace-bench run sniprec ...`).

Per system turn, from the row alone (session-isolated): every user turn of the history is a SnipRec turn;
its query snippets (queries.py) each retrieve the top-k units of the row's usable candidates (index.py),
optionally filtered and re-ranked by NLI (entailment of the query snippet by the unit, >= t_ent), and the
signed reciprocal ranks accumulate into SCORE_t (scoring.py). Candidates are ranked by the score after the
last user turn; the response quotes the reviews behind each recommended POI's best units (respond.py).

    sniprec           SnipRec: item snippets (`snippets=rules|llm`), query snippets, NLI filter when `nli` is
                      given, optional expansion
    sniprec_snippet   Snippet: the same item snippets, the user turn itself as the query, no NLI, no expansion
    sniprec_sentence  Sentence: review sentences instead of snippets
    sniprec_document  Document: whole reviews

(SnipRec here; the three comparison systems, subclasses that fix some of its parameters, in variants.py.)

(The paper's baselines use "no query snippet extraction or expansion", §5.1; `query_mode="snippets"` gives
them SnipRec's query snippets instead: the other reading of "Snippet: no NLI, no expansion".)

Family and label: a run that uses an LLM (any of: item snippets, query snippets, clarification questions)
is family "LLM" and its row label carries the model; a run without one is "non-LLM". Every run's metadata
has a `variant` naming the units, the encoder and the NLI filter ("rules snippets, all-MiniLM-L6-v2, NLI
off"), which the leaderboard shows in the row label, so rows of the deterministic extractor, of the
offline encoder and without NLI say so.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from baselines.base import DEFAULT_BATCH_SIZE, TracePipeline, add_count, rank_by_score
from baselines.sniprec.index import DEFAULT_ENCODER, Hit, UnitIndex
from baselines.sniprec.llm_snippets import POST_CHECK_MODES, LLMExtractor
from baselines.sniprec.prompts import DEFAULT_MAX_REPAIRS, PromptRunner, load_llm_from, prompt_hashes
from baselines.sniprec.queries import (
    QUERY_MODES,
    Exchange,
    QueryExtractor,
    QuerySnippet,
    exchanges,
    rejection_dislikes,
)
from baselines.sniprec.respond import SnippetEvidence, best_units, clarification_questions
from baselines.sniprec.scoring import DEFAULT_K_MIN, DEFAULT_KAPPA, accumulate, k_for
from baselines.sniprec.store import RulesExtractor, UnitStore
from baselines.toolkit.output import TurnOutput, turn_output
from baselines.toolkit.responses import EvidenceIndex, Response, turn_response
from trace_dataset.constants import SEED
from trace_dataset.prediction import Prediction

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase
    from trace_llm import LLM

log = logging.getLogger(__name__)

SNIPPET_SOURCES: tuple[str, ...] = ("rules", "llm")
DEFAULT_T_ENT = 0.5  # not given in the paper; the Trace entailment metric's threshold
SCORE_DECIMALS = 12
_GROUP_MEMO_LIMIT = 500_000


def _short(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1] or model


class SnipRecBaseline(TracePipeline):
    """SnipRec on Trace (see the module docstring; every parameter in docs/sniprec.md).

    LLM parameters as the LLM baselines take them (`trace-bench run ... --llm SPEC` fills them in): `llm` (a
    spec or an LLM; None: no LLM, the deterministic paths), App. F's decoding (`temperature`, `top_p`, `seed`;
    `max_new_tokens` caps each prompt's own budget in prompts/prompts.json), `llm_cache`, `llm_options`,
    `json_repairs`. SnipRec's: `snippets` ("rules" | "llm"; default "llm" with an LLM, else "rules"), `encoder`
    (sentence-transformers id or folder), `nli` (NLI model id or folder; None: no filter), `t_ent`, `kappa`, `k`
    (None: scaled to the pool), `k_min`, `expansion`, `post_check`, `query_mode`, `rejection_categories`
    (a rejection that states no dislike dislikes the rejected POI's distinctive categories). `cache_dir` holds the unit
    store and the vector cache (default: the trace-bench cache folder). Not part of a run's identity (they
    change no output): `encoder_threads` (torch threads while encoding; None: torch's default; 1 is faster on a
    busy machine), `progress` (bars for unit extraction and encoding; None: where stderr is a terminal).
    """

    name: ClassVar[str] = "sniprec"
    config_keys: ClassVar[tuple[str, ...]] = (
        "snippets",
        "encoder",
        "nli",
        "t_ent",
        "kappa",
        "k",
        "k_min",
        "expansion",
        "post_check",
        "query_mode",
        "rejection_categories",
        "json_repairs",
    )
    units_kind: ClassVar[str | None] = None  # None: item snippets from `snippets`; else a fixed unit kind
    default_query_mode: ClassVar[str] = "snippets"

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        llm: str | LLM | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_new_tokens: int | None = None,
        seed: int = SEED,
        llm_cache: str | bool | None = None,
        llm_options: dict | None = None,
        json_repairs: int = DEFAULT_MAX_REPAIRS,
        snippets: str | None = None,
        encoder: str = DEFAULT_ENCODER,
        nli: str | None = None,
        t_ent: float = DEFAULT_T_ENT,
        kappa: float = DEFAULT_KAPPA,
        k: int | None = None,
        k_min: int = DEFAULT_K_MIN,
        expansion: bool = False,
        post_check: str = "flagged",
        query_mode: str | None = None,
        rejection_categories: bool = True,
        cache_dir: str | None = None,
        device: str | None = "cpu",
        encoder_model: Any = None,
        encoder_threads: int | None = None,
        progress: bool | None = None,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        query_mode = query_mode or self.default_query_mode
        if query_mode not in QUERY_MODES:
            raise ValueError(f"unknown query_mode {query_mode!r}; expected one of {QUERY_MODES}")
        if post_check not in POST_CHECK_MODES:
            raise ValueError(f"unknown post_check {post_check!r}; expected one of {POST_CHECK_MODES}")
        if not 0.0 <= float(t_ent) <= 1.0:
            raise ValueError(f"t_ent must lie in [0, 1], got {t_ent!r}")
        if float(kappa) < 0:
            raise ValueError(f"kappa must be >= 0, got {kappa!r}")
        if isinstance(json_repairs, bool) or not isinstance(json_repairs, int) or json_repairs < 0:
            raise ValueError(f"json_repairs must be an integer >= 0, got {json_repairs!r}")
        k_for(8, k, k_min)  # validates k and k_min
        self.llm = load_llm_from(llm, temperature, top_p, max_new_tokens, seed, llm_cache, llm_options)
        self.snippets = snippets or ("llm" if self.llm is not None else "rules")
        if self.snippets not in SNIPPET_SOURCES:
            raise ValueError(f"unknown snippets {self.snippets!r}; expected one of {SNIPPET_SOURCES}")
        if self.snippets == "llm" and self.llm is None:
            raise ValueError(
                "snippets='llm' needs an LLM: give llm=SPEC (trace-bench run ... --llm SPEC), "
                "or snippets='rules' for the deterministic extractor"
            )
        self.encoder, self.nli, self.t_ent, self.kappa = str(encoder), nli, float(t_ent), float(kappa)
        self.k, self.k_min = (None if k is None else int(k)), int(k_min)
        self.expansion, self.post_check, self.query_mode = bool(expansion), post_check, query_mode
        self.json_repairs = json_repairs
        self.rejection_categories = bool(rejection_categories)
        self.kind = self.units_kind or self.snippets
        self.progress = progress
        self.runner = PromptRunner(self.llm, json_repairs) if self.llm is not None else None
        extractor = (
            LLMExtractor(self.runner, post_check)
            if self.runner is not None and self.kind == "llm"
            else RulesExtractor(self.kind)
        )
        self.queries = QueryExtractor(self.runner if query_mode == "snippets" else None, self.expansion)
        self.store = UnitStore(kb, extractor, cache_dir)
        self.index = UnitIndex(
            self.store, self.encoder, device, cache_dir, model=encoder_model, threads=encoder_threads
        )
        self.scorer = self._load_nli()
        self.evidence = EvidenceIndex(kb)
        self._groups: dict[tuple, tuple[Hit, ...]] = {}

    # -- construction --------------------------------------------------------------------------------
    def _load_nli(self) -> Any:
        if self.nli is None:
            return None
        from trace_metrics.lib.entailment import NLIScorer

        return NLIScorer(model=str(self.nli), threshold=self.t_ent, show_progress=False)

    # -- configuration -------------------------------------------------------------------------------
    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        config["units"] = self.kind
        config["unit_store"] = self.store.extractor.key
        config["nli_filter"] = "on" if self.scorer is not None else "off (no NLI model given)"
        if self.scorer is not None:
            config["nli_model"] = self.scorer.describe()
        if self.llm is not None:
            config["prompt_sha256"] = prompt_hashes()
        return config

    def summary(self) -> dict[str, Any]:
        """This process's work: LLM usage, units extracted and texts encoded, NLI pairs scored."""
        out: dict[str, Any] = {
            "units_extracted_pois": self.store.extracted,
            "texts_encoded": self.index.encoded,
        }
        if self.llm is not None:
            out["llm_usage"] = self.llm.usage
        if self.scorer is not None:
            out["nli"] = {"pairs_computed": self.scorer.pairs_computed, "cache_hits": self.scorer.cache_hits}
        return out

    def variant(self) -> str:
        """What the row label adds: units, encoder, NLI filter (and expansion)."""
        units = {
            "rules": "rules snippets",
            "llm": "LLM snippets",
            "sentence": "sentences",
            "document": "documents",
        }
        parts = [units[self.kind], _short(self.encoder)]
        if "nli" in self.config_keys:
            parts.append(f"NLI {_short(str(self.nli))}" if self.scorer is not None else "NLI off")
        if self.expansion:
            parts.append("expansion")
        if self.query_mode != self.default_query_mode:
            parts.append(f"{self.query_mode} queries")
        return ", ".join(parts)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["family"] = "LLM" if self.llm is not None else "non-LLM"
        out["variant"] = self.variant()
        return out

    # -- a run ---------------------------------------------------------------------------------------
    def __call__(self, rows: Any, batch_size: int | None = None) -> Iterator[Prediction]:
        """As `TracePipeline.__call__`, after one pass that builds the units and vectors of every POI the rows
        can search (their pools, farewells aside) in one go: a run encodes in large sorted parts with one
        progress bar instead of a few texts per batch, and nothing twice (the unit store and the vector cache
        hold what an earlier or interrupted run made)."""
        rows = rows if hasattr(rows, "column_names") else list(rows)
        wanted = dict.fromkeys(
            pid
            for row in rows
            if row["action"] != "farewell"
            for pid in row["candidate_poi_ids"]
            if pid in self.kb.pois
        )
        if wanted:
            self.index.ensure(list(wanted), self.progress)
        yield from super().__call__(rows, batch_size)

    # -- one batch -----------------------------------------------------------------------------------
    def _query_snippets(
        self, inputs: Sequence[dict[str, Any]]
    ) -> list[list[tuple[Exchange, list[QuerySnippet], bool]]]:
        """Per input, per user turn: (the exchange, its signed query snippets, whether extraction failed)."""
        dialogues = []
        for inp in inputs:
            names = {
                pid: self.kb.pois[pid].name
                for pid in (*inp["candidates"], *inp["state"].rejected_poi_ids)
                if pid in self.kb.pois
            }
            dialogues.append((exchanges(inp["history"], inp["poi_type"], names), inp["poi_type"]))
        if self.query_mode == "utterance":
            return [
                [(ex, [QuerySnippet(ex.text, 1, "utterance")], False) for ex in exs] for exs, _ in dialogues
            ]
        extracted = self.queries.extract(dialogues)
        out = []
        for inp, (exs, _), per_turn in zip(inputs, dialogues, extracted, strict=True):
            rows = []
            for ex, (snips, failed) in zip(exs, per_turn, strict=True):
                snips = list(snips)
                if self.rejection_categories and ex.rejected and not any(q.sign < 0 for q in snips):
                    for pid in ex.rejected:
                        if pid in self.kb.pois:
                            snips.extend(rejection_dislikes(self.kb, pid, inp["candidates"]))
                rows.append((ex, snips, failed))
            out.append(rows)
        if self.expansion:
            by_type: dict[str, list[QuerySnippet]] = {}
            for inp, rows in zip(inputs, out, strict=True):
                by_type.setdefault(inp["poi_type"], []).extend(q for _, snips, _ in rows for q in snips)
            expanded = {
                (t, key): v for t, qs in by_type.items() for key, v in self.queries.expand(qs, t).items()
            }
            for inp, rows in zip(inputs, out, strict=True):
                for j, (ex, snips, failed) in enumerate(rows):
                    more = [e for q in snips for e in expanded.get((inp["poi_type"], (q.text, q.sign)), [])]
                    rows[j] = (ex, snips + more, failed)
        return out

    def _retrieve(self, jobs: Sequence[tuple[str, tuple[str, ...], int]]) -> dict[tuple, tuple[Hit, ...]]:
        """Ranked (NLI-filtered when on) hits of every (query text, candidates, k); memoised by content."""
        if len(self._groups) > _GROUP_MEMO_LIMIT:
            self._groups.clear()
        todo = [job for job in dict.fromkeys(jobs) if job not in self._groups]
        if todo:
            texts = list(dict.fromkeys(text for text, _, _ in todo))
            vectors = dict(zip(texts, self.index.encode(texts), strict=True))
            by_set: dict[tuple[tuple[str, ...], int], list[str]] = {}
            for text, cands, k in todo:
                by_set.setdefault((cands, k), []).append(text)
            raw: dict[tuple, list[Hit]] = {}
            for (cands, k), group in by_set.items():  # one candidate view per candidate set
                hits = self.index.top_k_many(np.stack([vectors[t] for t in group]), cands, k)
                raw.update(((t, cands, k), h) for t, h in zip(group, hits, strict=True))
            if self.scorer is not None:
                raw = self._nli_filter(raw)
            self._groups.update((job, tuple(hits)) for job, hits in raw.items())
        return {job: self._groups[job] for job in jobs}

    def _nli_filter(self, raw: Mapping[tuple, list[Hit]]) -> dict[tuple, list[Hit]]:
        """§3.3: keep units whose entailment of the query snippet is >= t_ent, ranked by it (ties: cosine order)."""
        pairs = [(self.store.units(h.poi_id)[h.unit].text, job[0]) for job, hits in raw.items() for h in hits]
        probs = iter(self.scorer.entailment_probs(pairs) if pairs else [])
        out = {}
        for job, hits in raw.items():
            scored = [(next(probs), i, h) for i, h in enumerate(hits)]
            kept = sorted((s for s in scored if s[0] >= self.t_ent), key=lambda s: (-s[0], s[1]))
            out[job] = [Hit(h.poi_id, h.unit, float(p)) for p, _, h in kept]
        return out

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        active = [inp for inp in inputs if inp["action"] != "farewell" and inp["candidates"]]
        if active:
            self.index.ensure(
                list(dict.fromkeys(p for inp in active for p in inp["candidates"])), self.progress
            )
        per_input = self._query_snippets(active)
        plans = []
        for inp, rows in zip(active, per_input, strict=True):
            cands = tuple(inp["candidates"])
            k = k_for(len(cands), self.k, self.k_min)
            plans.append((inp, rows, cands, k))
        groups = self._retrieve(
            [(q.text, cands, k) for _, rows, cands, k in plans for _, snips, _ in rows for q in snips]
        )
        results: dict[int, dict[str, Any]] = {}
        for inp, rows, cands, k in plans:
            turns = [[(q.sign, groups[(q.text, cands, k)]) for q in snips] for _, snips, _ in rows]
            history = accumulate(turns, self.kappa)
            last = history[-1] if history else {}
            scores = {pid: round(last.get(pid, 0.0), SCORE_DECIMALS) for pid in cands}
            results[id(inp)] = {
                "ranked": rank_by_score(list(cands), scores),
                "scores": scores,
                "turns": turns,
                "rows": rows,
                "k": k,
                "retrieved": sum(pid in last for pid in cands),
            }
        questions = self._clarify([inp for inp in active if inp["action"] == "ask_preference"])
        outputs = []
        for inp in inputs:
            res = results.get(id(inp))
            ranked = res["ranked"] if res else []
            meta: dict[str, Any] = {"units": self.kind, "nli": self.scorer is not None}
            if res:
                meta.update(
                    k=res["k"],
                    retrieved_items=res["retrieved"],
                    query_snippets=[
                        [ex.turn_id, *q.to_list()] for ex, snips, _ in res["rows"] for q in snips
                    ],
                )
                # one per system turn whose queries include a failed extraction (each turn re-reads the
                # whole history: a sum would count one failed utterance again on every later turn)
                add_count(meta, "query_failures", int(any(failed for _, _, failed in res["rows"])))
            response = self._respond(inp, ranked, res, questions.get(id(inp)), meta)
            # scores: ties for an evaluator that breaks them at random (§5.1), e.g. every never-retrieved item at 0
            scores = res["scores"] if res else {}
            outputs.append(turn_output(inp, ranked, response.text, response.citations, meta, scores))
        return outputs

    # -- responses -------------------------------------------------------------------------------------
    def _clarify(self, asks: Sequence[dict[str, Any]]) -> dict[int, str]:
        if self.runner is None or not asks:
            return {}
        replies = clarification_questions(self.runner, [(inp["poi_type"], inp["history"]) for inp in asks])
        return {id(inp): reply for inp, reply in zip(asks, replies, strict=True)}

    def _respond(
        self,
        inp: Mapping[str, Any],
        ranked: list[str],
        res: Mapping[str, Any] | None,
        question: str | None,
        meta: dict[str, Any],
    ) -> Response:
        if inp["action"] == "ask_preference" and self.llm is not None:
            if question:
                return Response(question, {}, ())
            add_count(meta, "clarify_fallbacks")
        units = best_units(res["turns"], self.kappa, self.store.units) if res else {}
        evidence = SnippetEvidence(self.kb, self.evidence, units)
        response = turn_response(inp, ranked, kb=self.kb, evidence=evidence)
        # one per turn with a quote from the rule: the fallback report divides it by the system turns
        add_count(meta, "quote_fallbacks", int(evidence.fallbacks > 0))
        return response


__all__ = ["SnipRecBaseline"]
