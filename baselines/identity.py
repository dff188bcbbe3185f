"""Who each baseline is: one record per baseline, the one table every part of the package reads.

    name     the registry key; also the name of its module (or of the folder of a system written as
             several modules: sniprec, collab_rec), of its prompt file (`prompts/<name>.txt`, one-prompt LLM
             baselines), of its run files in the Space and main job, and what `trace-bench run NAME` takes
    module   the module that defines it (imported on first use by `baselines.BASELINES`)
    cls      the pipeline class in that module
    label    the row label of the paper's tables (Table 5), shown by the leaderboard, the Space and the docs
    family   "non-LLM" | "LLM" (Table 8's groups; a SnipRec run without an LLM records "non-LLM")
    paper    where the paper defines it
    session_isolated   False for a system that remembers across dialogues (Memory-Aug.): reported apart
    llm      "always": it asks an LLM on every run (the LLM baselines, Collab-REC); "optional": it takes the
             --llm options but runs offline without them (SnipRec and its comparison systems); "": never
    notes    why its row reads as it does, where that needs saying (shown beside its name in the Space)
    counterfactual   True for a deliberately bad system (random_pick, contrary): run by the interactive
             protocol's simulator report beside the system under test, never by the jobs that loop over the
             baselines (its group is "counterfactual", outside NON_LLM_BASELINES), never ranked
    llm_options   backend options (trace_llm.options, by name) that `trace-bench run NAME` gives its LLM where
             no --llm-* flag sets them, as (name, value) pairs: each measured faster for this system, with
             the same replies (docs/llm.md, "Side by side"); backends that do not take one ignore it

The runner (run metadata), the leaderboard (labels and row order), the Space (labels, notes, reserved
names) and the docs (docs/baselines.md's table, checked by a test) read this table; nothing else lists names
or labels.
The order is the paper's Table 5 order, then the systems of the other papers. The module has no imports of
its own, so the pipeline contract (`baselines.base`) reads the family and isolation of a pipeline from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TRACE = "Trace (Zhao et al., 2026)"
SNIPREC = "SnipRec (Sun et al.)"
COLLAB_REC = "Collab-REC (Banerjee et al.)"
COUNTERFACTUAL = "this package, ConvApparel's counterfactual validation (docs/interactive.md)"


@dataclass(frozen=True)
class BaselineIdentity:
    """One baseline's identity (module docstring)."""

    name: str
    module: str
    cls: str
    label: str
    family: str
    paper: str
    session_isolated: bool = True
    notes: str = ""
    llm: str = ""
    counterfactual: bool = False
    llm_options: tuple[tuple[str, Any], ...] = ()

    @property
    def group(self) -> str:
        """ "non_llm" (Trace's nine), "llm" (Trace's LLM baselines), "system" (another paper's system) or
        "counterfactual" (a deliberately bad system of the simulator report)."""
        if self.counterfactual:
            return "counterfactual"
        folder = self.module.split(".")[1]
        return folder if folder in ("non_llm", "llm") else "system"


def _b(
    name: str,
    module: str,
    cls: str,
    label: str,
    family: str,
    paper: str,
    *,
    session_isolated: bool = True,
    notes: str = "",
    llm: str = "",
    counterfactual: bool = False,
    llm_options: Mapping[str, Any] | None = None,
) -> BaselineIdentity:
    llm = llm or ("always" if module.startswith("llm.") else "")  # the LLM baselines ask one on every run
    return BaselineIdentity(
        name,
        f"baselines.{module}",
        cls,
        label,
        family,
        paper,
        session_isolated,
        notes,
        llm,
        counterfactual,
        tuple(sorted((llm_options or {}).items())),
    )


IDENTITIES: tuple[BaselineIdentity, ...] = (
    # Trace's nine non-LLM baselines (Table 8 rows 1-9, App. F)
    _b(
        "popularity",
        "non_llm.popularity",
        "PopularityBaseline",
        "Popularity",
        "non-LLM",
        f"{TRACE}, Table 8 row 1, App. F",
    ),
    _b("tfidf", "non_llm.tfidf", "TfidfBaseline", "TF-IDF", "non-LLM", f"{TRACE}, Table 8 row 2, App. F"),
    _b("aspect", "non_llm.aspect", "AspectBaseline", "Aspect", "non-LLM", f"{TRACE}, Table 8 row 3, App. F"),
    _b("dense", "non_llm.dense", "DenseBaseline", "Dense", "non-LLM", f"{TRACE}, Table 8 row 4, App. F"),
    _b(
        "spatial",
        "non_llm.spatial",
        "SpatialBaseline",
        "Spatial",
        "non-LLM",
        f"{TRACE}, Table 8 row 5, App. F",
    ),
    _b(
        "hybrid_rrf",
        "non_llm.hybrid_rrf",
        "HybridRRFBaseline",
        "Hybrid-RRF",
        "non-LLM",
        f"{TRACE}, Table 8 row 6, App. F",
    ),
    _b(
        "itinerary",
        "non_llm.itinerary",
        "ItineraryBaseline",
        "Itinerary",
        "non-LLM",
        f"{TRACE}, Table 8 row 7, App. F",
        notes="Itinerary ranks with TF-IDF's ranking unchanged and only adds a walking tour to its response, "
        "so its accuracy and recovery columns equal TF-IDF's (as in the paper's Table 5); its text, "
        "grounding and practical columns differ.",
    ),
    _b(
        "knowledge",
        "non_llm.knowledge",
        "KnowledgeEnhancedBaseline",
        "Knowledge-Enh.",
        "non-LLM",
        f"{TRACE}, Table 8 row 8, App. F",
    ),
    _b(
        "persona",
        "non_llm.persona",
        "PersonaGroundedBaseline",
        "Persona-Ground.",
        "non-LLM",
        f"{TRACE}, Table 8 row 9, App. F",
    ),
    # Trace's LLM baselines (Table 8 rows 10-14, App. F) and Itinerary-LLM (Finding 1d, App. P)
    _b(
        "llm_zero_shot",
        "llm.llm_zero_shot",
        "LLMZeroShotBaseline",
        "LLM Zero-Shot",
        "LLM",
        f"{TRACE}, Table 8 row 10, App. F",
    ),
    _b(
        "dst",
        "llm.dst",
        "DSTBaseline",
        "DST",
        "LLM",
        f"{TRACE}, Table 8 row 11, App. F",
        llm_options={"parallel": 4},  # 4 requests side by side on llama.cpp: 1.25-1.32x (docs/llm.md)
    ),
    _b(
        "rag_citation",
        "llm.rag_citation",
        "RAGCitationBaseline",
        "RAG-Citation",
        "LLM",
        f"{TRACE}, Table 8 row 12, App. F",
    ),
    _b(
        "multi_review_synthesis",
        "llm.multi_review_synthesis",
        "MultiReviewSynthesisBaseline",
        "Multi-Rev. Synth.",
        "LLM",
        f"{TRACE}, Table 8 row 13, App. F",
        llm_options={"parallel": 4},  # 1.22-1.47x
    ),
    _b(
        "itinerary_llm",
        "llm.itinerary_llm",
        "ItineraryLLMBaseline",
        "Itinerary-LLM",
        "LLM",
        f"{TRACE}, Finding 1d, App. P",
    ),
    _b(
        "memory_aug",
        "llm.memory_aug",
        "MemoryAugmentedBaseline",
        "Memory-Aug.",
        "LLM",
        f"{TRACE}, Table 8 row 14, App. F, App. B",
        session_isolated=False,
        llm_options={"parallel": 4},  # 1.10-1.23x
    ),
    # The seed systems of the other papers, run on Trace
    _b("sniprec", "sniprec.pipeline", "SnipRecBaseline", "SnipRec", "LLM", f"{SNIPREC}, §3", llm="optional"),
    _b(
        "sniprec_snippet",
        "sniprec.variants",
        "SnippetBaseline",
        "SnipRec-Snippet",
        "LLM",
        f"{SNIPREC}, §5.1 (Snippet)",
        llm="optional",
    ),
    _b(
        "sniprec_sentence",
        "sniprec.variants",
        "SentenceBaseline",
        "SnipRec-Sentence",
        "LLM",
        f"{SNIPREC}, §5.1 (Sentence)",
        llm="optional",
    ),
    _b(
        "sniprec_document",
        "sniprec.variants",
        "DocumentBaseline",
        "SnipRec-Document",
        "LLM",
        f"{SNIPREC}, §5.1 (Document)",
        llm="optional",
    ),
    _b(
        "collab_rec",
        "collab_rec.trace_pipeline",
        "CollabRecBaseline",
        "Collab-REC",
        "LLM",
        f"{COLLAB_REC}, §3",
        llm="always",
    ),
    # The deliberately bad systems of the simulator report's counterfactual check (never ranked)
    _b(
        "random_pick",
        "non_llm.random_pick",
        "RandomPickBaseline",
        "Random pick (counterfactual)",
        "non-LLM",
        COUNTERFACTUAL,
        notes="A deliberately bad system: the simulator report runs it beside the system under test; "
        "it is not a ranked row.",
        counterfactual=True,
    ),
    _b(
        "contrary",
        "non_llm.contrary",
        "ContraryBaseline",
        "Contrary (counterfactual)",
        "non-LLM",
        COUNTERFACTUAL,
        notes="A deliberately bad system that ranks first what the traveller's stated preferences exclude: "
        "the simulator report runs it beside the system under test; it is not a ranked row.",
        counterfactual=True,
    ),
)
BY_NAME: dict[str, BaselineIdentity] = {i.name: i for i in IDENTITIES}


def identity(name: str) -> BaselineIdentity:
    """The record of baseline `name`; KeyError naming the registered names."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown baseline {name!r}; expected one of {list(BY_NAME)}") from None


def markdown_table() -> str:
    """The table as docs/baselines.md prints it (a test keeps the page a copy of this)."""
    lines = [
        "| name | label | family | module | paper | isolated | LLM options of `run` |",
        "|---|---|---|---|---|---|---|",
    ]
    for i in IDENTITIES:
        options = ", ".join(f"`{k}={v}`" for k, v in i.llm_options)
        lines.append(
            f"| `{i.name}` | {i.label} | {i.family} | `{i.module}.{i.cls}` | {i.paper} | "
            f"{'yes' if i.session_isolated else 'no'} | {options} |"
        )
    return "\n".join(lines)


def label(name: str) -> str:
    """The row label of a registered baseline; any other name as given."""
    found = BY_NAME.get(name)
    return found.label if found is not None else name


__all__ = ["BY_NAME", "IDENTITIES", "BaselineIdentity", "identity", "label", "markdown_table"]
