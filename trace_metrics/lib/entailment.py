"""Entailment grounding (App. L): the share of a response's sentences that its cited reviews entail.

Claims are the response's sentences (`sentences.split_sentences`, `[Rn]` labels and markdown removed before
NLI); premises are the texts of the reviews the response cites. A claim's entailment probability is the
maximum over the cited reviews, each scored as its own (premise, claim) pair: a claim is supported when one
review supports it, and concatenating reviews would truncate long evidence. A claim is entailed when that
probability is >= the threshold (0.5, the paper's). A response's score is entailed claims / claims.

The NLI model is any sequence classifier whose `config.id2label` names an "entailment" label (read, never
assumed). Pairs are scored in length-sorted batches with dynamic padding, in float16 on CUDA, split between
processes when run under `accelerate launch`, and cached in SQLite by (model fingerprint, premise, claim) so
that a rerun makes no model call. No model, no score: when the model cannot be loaded, `NLIModelError` says
how to supply one.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from trace_bench.errors import TraceBenchError
from trace_bench.shell import pip_install_command, script_executable
from trace_llm.cache import default_cache_dir  # the one trace-bench cache folder
from trace_metrics.lib.nli_cache import CACHE_FILE, NLICache
from trace_metrics.lib.sentences import CATEGORIES, categorize, claim_text, split_sentences

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

DEFAULT_NLI_MODEL = "cross-encoder/nli-deberta-v3-base"
DEFAULT_THRESHOLD = 0.5
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_LENGTH = 512
THRESHOLD_SWEEP: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)  # App. L "NLI threshold sensitivity"
ENTAILMENT_LABELS: frozenset[str] = frozenset({"entailment", "entailed", "entails"})
CHUNK_BATCHES = 64  # batches per chunk: pairs are sorted by length within a chunk and cached after it


def how_to_supply(
    give: str = "with `--nli /path/to/model` (Python: NLIScorer(model='/path/to/model'))",
) -> str:
    """What an NLI error tells the user to do (the `hf` command spelled as this shell reaches it); `give`: how
    the caller takes a model folder."""
    hf = script_executable("hf") or "hf"
    return (
        f"Give a local model folder {give}, or "
        f"download the default once where the Hub is reachable: `{hf} download {DEFAULT_NLI_MODEL} --local-dir "
        f"/path/to/model` (older clients: `huggingface-cli download {DEFAULT_NLI_MODEL} --local-dir "
        "/path/to/model`) and pass that folder. No other score is substituted."
    )


class NLIModelError(TraceBenchError, RuntimeError):
    """The NLI model cannot be loaded or is not an NLI model; the message says how to supply one."""


class EntailmentScorer(Protocol):
    """What `entailment_scores` needs of a scorer (`NLIScorer`, or a stand-in in tests): its threshold and the
    entailment probability of each (premise, claim) pair, in order."""

    threshold: float

    def entailment_probs(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


def entailment_label_index(id2label: dict[Any, str]) -> int:
    """Index of the label named entailment (case-insensitive) in a model's `config.id2label`."""
    found = [int(i) for i, name in id2label.items() if str(name).strip().lower() in ENTAILMENT_LABELS]
    if len(found) != 1:
        labels = {int(i): name for i, name in id2label.items()}
        what = "no label" if not found else f"{len(found)} labels"
        raise NLIModelError(
            f"the model's config.id2label {labels} has {what} named 'entailment' (case-insensitive); "
            f"expected an NLI classifier with exactly one. {how_to_supply()}"
        )
    return found[0]


def _sha256_files(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        h.update(path.name.encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()[:16]


class NLIScorer:
    """Entailment probabilities of (premise, claim) pairs from one NLI model, batched, cached, data-parallel.

    `cache_path`: a SQLite file; None = `default_cache_dir()/nli.sqlite`; False = no persistent cache.
    `device`: None = the `accelerate` process's device (CUDA when present). `dtype`: None = float16 on CUDA,
    float32 elsewhere. Counters: `model_calls` (forward passes), `pairs_computed`, `cache_hits`.
    """

    def __init__(
        self,
        model: str | os.PathLike = DEFAULT_NLI_MODEL,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threshold: float = DEFAULT_THRESHOLD,
        cache_path: str | os.PathLike | None | bool = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        local_files_only: bool = False,
        hub_cache_dir: str | os.PathLike | None = None,
        revision: str | None = None,
        show_progress: bool = True,
    ):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold {threshold!r} must lie in [0, 1]")
        if batch_size < 1:
            raise ValueError(f"batch_size {batch_size!r} must be >= 1")
        if dtype not in (None, "float32", "float16", "bfloat16"):
            raise ValueError(
                f"unknown dtype {dtype!r}; expected one of (None, 'float32', 'float16', 'bfloat16')"
            )
        self.model_name = os.path.expanduser(str(model))
        self.batch_size = batch_size
        self.threshold = float(threshold)
        self.max_length = max_length
        self.show_progress = show_progress
        self.model_calls = 0
        self.pairs_computed = 0
        self.cache_hits = 0
        self._state = _partial_state()
        self.device = _resolve_device(device, self._state)
        self.dtype = dtype or ("float16" if self.device.type == "cuda" else "float32")
        self.tokenizer, self.model = _load(
            self.model_name, self.device, self.dtype, local_files_only, hub_cache_dir, revision
        )
        self.labels = {int(i): str(name) for i, name in self.model.config.id2label.items()}
        self.entail_index = entailment_label_index(self.labels)
        local = Path(self.model_name)
        if local.is_dir():
            fingerprint = f"local:{_sha256_files(local)}"
        else:
            fingerprint = (
                f"{self.model_name}@{getattr(self.model.config, '_commit_hash', None) or revision or 'main'}"
            )
        self.model_key = f"{fingerprint}|{self.dtype}|{self.max_length}"
        self._memory: dict[str, float] = {}
        if cache_path is False:
            self.cache = None
        else:
            self.cache = NLICache(
                default_cache_dir() / CACHE_FILE if cache_path is None or cache_path is True else cache_path
            )

    def describe(self) -> dict:
        """What produced the scores: record it with every result."""
        return {
            "model": self.model_name,
            "model_key": self.model_key,
            "entailment_label": self.labels[self.entail_index],
            "id2label": {str(k): v for k, v in sorted(self.labels.items())},
            "threshold": self.threshold,
            "max_length": self.max_length,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "num_processes": self._state.num_processes,
        }

    def entailment_probs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) for each (premise, claim) pair, in the order given."""
        unique = list(dict.fromkeys((str(p), str(c)) for p, c in pairs))
        keys = [NLICache.key(self.model_key, p, c) for p, c in unique]
        known = {k: self._memory[k] for k in keys if k in self._memory}
        if self.cache is not None:
            rest = [k for k in keys if k not in known]
            known.update(self.cache.get_many(rest))
        missing = [i for i, k in enumerate(keys) if k not in known]
        self.cache_hits += len(unique) - len(missing)
        if missing:
            log.info("NLI: %d pairs to score (%d cached)", len(missing), len(unique) - len(missing))
            self._compute([unique[i] for i in missing], [keys[i] for i in missing], known)
        self._memory.update(known)
        by_pair = {pair: known[k] for pair, k in zip(unique, keys, strict=True)}
        return [by_pair[(str(p), str(c))] for p, c in pairs]

    def _compute(self, pairs: list[tuple[str, str]], keys: list[str], out: dict[str, float]) -> None:
        """Score pairs chunk by chunk; each chunk is split between processes, gathered in order, cached."""
        from accelerate.utils import gather_object
        from tqdm.auto import tqdm

        state = self._state
        chunk = self.batch_size * CHUNK_BATCHES * state.num_processes
        bar = tqdm(
            total=len(pairs),
            desc="NLI pairs",
            unit="pair",
            disable=not (self.show_progress and state.is_main_process),
        )
        for start in range(0, len(pairs), chunk):
            part = pairs[start : start + chunk]
            with state.split_between_processes(part) as shard:
                local = self._forward(list(shard))
            probs = gather_object(local)
            if len(probs) != len(part):
                raise RuntimeError(f"gathered {len(probs)} NLI results for {len(part)} pairs")
            new = list(zip(keys[start : start + chunk], probs, strict=True))
            out.update(new)
            if self.cache is not None and state.is_main_process:
                self.cache.put_many(new)
            bar.update(len(part))
        bar.close()
        state.wait_for_everyone()

    def _forward(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Length-sorted batches with dynamic padding; results back in input order."""
        import torch

        if not pairs:
            return []
        enc = self.tokenizer(
            [p for p, _ in pairs],
            [c for _, c in pairs],
            truncation="longest_first",
            max_length=self.max_length,
        )
        names = [k for k in enc.keys() if k in ("input_ids", "attention_mask", "token_type_ids")]
        order = sorted(range(len(pairs)), key=lambda i: (len(enc["input_ids"][i]), i))
        out = [math.nan] * len(pairs)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            batch = self.tokenizer.pad({k: [enc[k][i] for i in idx] for k in names}, return_tensors="pt")
            batch = {k: v.to(self.device) for k, v in batch.items()}
            with torch.inference_mode():
                logits = self.model(**batch).logits
            probs = logits.float().softmax(dim=-1)[:, self.entail_index].tolist()
            self.model_calls += 1
            for i, p in zip(idx, probs, strict=True):
                out[i] = p
        self.pairs_computed += len(pairs)
        return out

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def _partial_state():
    """accelerate's process state: one process normally, several under `accelerate launch` / torchrun.

    On a machine without CUDA (or with ACCELERATE_USE_CPU=true) the state is created for CPU processes, so
    that a multi-process CPU launch uses the gloo backend."""
    try:
        import torch
        from accelerate import PartialState
    except ImportError as e:  # pragma: no cover - accelerate is part of the models extra
        raise NLIModelError(
            f"entailment needs the models extra: {pip_install_command('trace-bench[models]')} ({e})"
        ) from e
    use_cpu = (
        os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")
        or not torch.cuda.is_available()
    )
    return PartialState(cpu=use_cpu)


def _resolve_device(device: str | None, state) -> torch.device:
    import torch

    if device is None:
        return state.device
    return torch.device(device)


def _load(model: str, device, dtype: str, local_files_only: bool, hub_cache_dir, revision):
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as e:
        raise NLIModelError(
            f"entailment needs torch and transformers: {pip_install_command('trace-bench[models]')} ({e})"
        ) from e
    options: dict[str, Any] = {"local_files_only": local_files_only, "revision": revision}
    if hub_cache_dir is not None:
        options["cache_dir"] = str(hub_cache_dir)
    if not Path(model).is_dir() and (model.startswith((".", "/", "~")) or model.count("/") > 1):
        raise NLIModelError(f"NLI model folder {model!r} does not exist. {how_to_supply()}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model, **options)
        net = AutoModelForSequenceClassification.from_pretrained(
            model, dtype=getattr(torch, dtype), **options
        )
    except (OSError, ValueError) as e:
        raise NLIModelError(f"cannot load NLI model {model!r}: {e}\n{how_to_supply()}") from e
    net.to(device)
    net.eval()
    log.info("NLI model %s on %s (%s)", model, device, dtype)
    return tokenizer, net


# ---------------------------------------------------------------------------------------------------
# Responses -> claims -> per-response scores
# ---------------------------------------------------------------------------------------------------


def response_claims(response: str) -> list[dict]:
    """The response's sentences with their NLI hypothesis text and category (empty hypotheses dropped)."""
    out = []
    for sentence in split_sentences(response):
        claim = claim_text(sentence)
        if claim:
            out.append({"sentence": sentence, "claim": claim, "category": categorize(sentence)})
    return out


PREMISE_SCOPES: tuple[str, ...] = ("cited", "all")


def cited_premises(response: str, sources: Sequence[str | None], scope: str = "cited") -> list[str]:
    """The premises of a response: with scope "cited", the texts of the `[Rn]` labels it contains, resolved as
    the grounding metrics resolve them (`sources[n-1]`); with "all", every non-empty text given."""
    if scope == "cited":
        from trace_metrics.lib.grounding import resolve_labels

        texts = resolve_labels(response, list(sources or ()))[1]
    elif scope == "all":
        texts = list(dict.fromkeys(t for t in (sources or ()) if t is not None))
    else:
        raise ValueError(f"unknown premise scope {scope!r}; expected one of {PREMISE_SCOPES}")
    return [t for t in texts if isinstance(t, str) and t.strip()]


def entailment_scores(
    responses: Sequence[str],
    premises: Sequence[Sequence[str | None]],
    scorer: EntailmentScorer,
    threshold: float | None = None,
    premise_scope: str = "cited",
) -> list[dict]:
    """Per response: `entailment` (entailed claims / claims), `n_claims`, `n_premises`, and per claim its
    `sentence`, `claim` (the NLI hypothesis), `category`, `prob` (max over premises; None without premises),
    `premise` (index of the best premise) and `entailed` (prob >= threshold).

    `premises[i][n-1]` is the text of the review label `[Rn]` of response i points to (the grounding
    metrics' `references`); `premise_scope` picks the premises (`cited_premises`). A response with no claims
    scores 0.0 (it grounds nothing); one without premises scores 0.0 (nothing can entail its claims).
    `scorer` needs `entailment_probs(pairs)` and `threshold`.
    """
    if len(responses) != len(premises):
        raise ValueError(
            f"{len(responses)} responses but {len(premises)} premise lists; expected one per response"
        )
    threshold = scorer.threshold if threshold is None else float(threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold {threshold!r} must lie in [0, 1]")
    items: list[tuple[list[dict], list[str]]] = []
    pairs: list[tuple[str, str]] = []
    for i, (response, sources) in enumerate(zip(responses, premises, strict=True)):
        if not isinstance(response, str):
            raise ValueError(f"response {i} is {type(response).__name__}; expected a string")
        texts = cited_premises(response, sources, premise_scope)
        claims = response_claims(response)
        items.append((claims, texts))
        pairs.extend((t, c["claim"]) for c in claims for t in texts)
    probs = iter(scorer.entailment_probs(pairs) if pairs else [])
    results = []
    for claims, texts in items:
        for c in claims:
            scores = [next(probs) for _ in texts]
            c["prob"] = max(scores) if scores else None
            c["premise"] = scores.index(c["prob"]) if scores else None
            c["entailed"] = c["prob"] is not None and c["prob"] >= threshold
        n = len(claims)
        results.append(
            {
                "entailment": sum(c["entailed"] for c in claims) / n if n else 0.0,
                "n_claims": n,
                "n_premises": len(texts),
                "claims": claims,
            }
        )
    return results


def rescore(results: Sequence[Mapping[str, Any]], threshold: float) -> list[float]:
    """Per-response entailment at another threshold, from the stored claim probabilities (no model call)."""
    out = []
    for r in results:
        claims = r["claims"]
        hits = sum(c["prob"] is not None and c["prob"] >= threshold for c in claims)
        out.append(hits / len(claims) if claims else 0.0)
    return out


def category_summary(results: Sequence[dict]) -> dict[str, float | None]:
    """Share of claims per category and the entailed rate within each (the calibration mini-audit)."""
    counts = dict.fromkeys(CATEGORIES, 0)
    entailed = dict.fromkeys(CATEGORIES, 0)
    for r in results:
        for c in r["claims"]:
            counts[c["category"]] += 1
            entailed[c["category"]] += bool(c["entailed"])
    total = sum(counts.values())
    out: dict[str, float | None] = {}
    for cat in CATEGORIES:
        slug = cat.lower().replace("-", "_")
        out[f"share_{slug}"] = counts[cat] / total if total else 0.0
        out[f"entailed_{slug}"] = entailed[cat] / counts[cat] if counts[cat] else None
        out[f"n_{slug}"] = counts[cat]
    return out


def cgs_ent(
    entail: Sequence[float], cd: Sequence[float], pc: Sequence[float], gate: float = 0.05
) -> list[float]:
    """CGS_ent = Entail x min(1, CD/gate) x (0.5 + 0.5 PC) per item, through the one CGS formula
    (`grounding.composite`)."""
    from trace_metrics.lib.grounding import composite

    if not len(entail) == len(cd) == len(pc):
        raise ValueError(
            f"lengths differ: {len(entail)} entailment, {len(cd)} citation_density, {len(pc)} provenance_coverage"
        )
    return [float(composite(e, d, p, gate=gate)) for e, d, p in zip(entail, cd, pc, strict=True)]


def grounding_components(
    responses: Sequence[str], premises: Sequence[Sequence[str | None]], window: float = 80
) -> tuple[list[float], list[float]]:
    """Per-response CD and PC from the grounding metrics (for CGS_ent when they are not given)."""
    from trace_metrics.lib.grounding import analyse

    analyses = [analyse(r, list(s or ())) for r, s in zip(responses, premises, strict=True)]
    return [a.citation_density() for a in analyses], [a.provenance_coverage(window) for a in analyses]


def aggregate_entailment(
    results: Sequence[dict],
    citation_density: Sequence[float] | None = None,
    provenance_coverage: Sequence[float] | None = None,
    gate: float = 0.05,
    thresholds: Sequence[float] = (),
    return_per_item: bool = False,
) -> dict:
    """Means over responses: `entailment`, and with CD and PC per response `cgs_ent` (the formula on the means,
    as the paper's Table 22 and the leaderboard) and `cgs_ent_turn_mean` (mean of per-response values); `n`, `n_claims`,
    the category summary, and `entailment@t` for each sweep threshold."""
    from trace_metrics.lib._util import mean_or_none

    entail = [r["entailment"] for r in results]
    out: dict[str, Any] = {"entailment": mean_or_none(entail)}
    if (citation_density is None) != (provenance_coverage is None):
        raise ValueError("give both citation_density and provenance_coverage for cgs_ent, or neither")
    if citation_density is not None and provenance_coverage is not None:
        if len(citation_density) != len(results):
            raise ValueError(f"{len(citation_density)} citation_density values for {len(results)} responses")
        per = cgs_ent(entail, citation_density, provenance_coverage, gate)
        cd_mean, pc_mean = mean_or_none(citation_density), mean_or_none(provenance_coverage)
        out["cgs_ent"] = (
            None
            if not results or cd_mean is None or pc_mean is None
            else cgs_ent([out["entailment"]], [cd_mean], [pc_mean], gate)[0]
        )
        out["cgs_ent_turn_mean"] = mean_or_none(per)
    out["n"] = len(results)
    out["n_claims"] = sum(r["n_claims"] for r in results)
    out["n_without_premises"] = sum(1 for r in results if r.get("n_premises", 1) == 0)
    out.update(category_summary(results))
    for t in thresholds:
        out[f"entailment@{t:g}"] = mean_or_none(rescore(results, t))
    if return_per_item:
        out["entailment_per_item"] = entail
        if citation_density is not None:
            out["cgs_ent_per_item"] = per
    return out
