"""The dataset card's prose (`card.render_card` assembles it): the status note, the loading example, the
hydration steps, the licence split, how to evaluate and the datasheet, each a plain function of the counts
`card.collect_stats` gathers. A directory built from the synthetic bundle says so everywhere (no Yelp text,
CC BY 4.0 throughout); one built from Yelp data says which parts Yelp's terms govern.
"""

from __future__ import annotations

from typing import Any

from trace_dataset.constants import KB_DIRNAME, OFFICIAL_HUB_DATASET, REVIEW_MAX_CHARS, REVIEWS_FILE
from trace_dataset.release.eval_yaml import EVAL_YAML


def introduction(stats: dict[str, Any]) -> str:
    """What the dialogues are, in one paragraph."""
    yelp = "synthetic Yelp-format" if stats["synthetic"] is not None else "Yelp"
    return (
        "Multi-turn tourism recommendation dialogues between a simulated traveller and a recommender, grounded in "
        f"{yelp} points of interest and reviews, with verbatim review-span citations (`[Rn]` labels) and explicit "
        "rejection turns. Built with trace-bench; the benchmark design follows the Trace paper (arXiv 2605.07677)."
    )


def loading(stats: dict[str, Any]) -> str:
    """How to load the directory, with `datasets` and with trace-bench (the reviews config only with text)."""
    return (
        "```python\n"
        "from datasets import load_dataset\n"
        'dialogues = load_dataset("PATH/TO/THIS/DIR")                  # config `dialogues` (default)\n'
        'pois = load_dataset("PATH/TO/THIS/DIR", "knowledge_base")     # split `pois`\n'
        'index = load_dataset("PATH/TO/THIS/DIR", "review_index")      # split `review_index`\n'
        + (
            'reviews = load_dataset("PATH/TO/THIS/DIR", "reviews")       # split `reviews` (local only)\n'
            if stats["has_text"]
            else ""
        )
        + "\nfrom trace_dataset import load_trace                       # the trace-bench package\n"
        'turns = load_trace("PATH/TO/THIS/DIR", "turns", split="test")  # one row per system turn\n'
        "```\n\n"
        "`load_trace` also serves `turns_pool_16`, `turns_pool_32` and `turns_open` (the same rows with the larger "
        "candidate pools) and the knowledge-base configs."
    )


def evaluation(leaderboards: tuple[str, ...]) -> str:
    """How a system is scored on the directory, and where its numbers show on the Hub (docs/inspect.md):
    `leaderboards` are the task ids of the release's eval.yaml (`eval_yaml.hub_tasks`)."""
    boards = ", ".join(f"`{b}`" for b in leaderboards)
    return (
        "With trace-bench: `trace-bench run` and `trace-bench evaluate` (teacher-forced), `trace-bench interact` "
        "(a simulated traveller), `trace-bench leaderboard` (the tables with their 95% cluster-bootstrap "
        'intervals). From Inspect AI (`pip install "trace-bench[inspect]"`), with the same numbers: '
        "`inspect eval trace_bench/trace --model MODEL -T data=PATH/TO/HYDRATED/DIR` (and `trace_bench/trace_live`)."
        f"\n\nA release carries `{EVAL_YAML}`, its registration for the Hub's Eval Results: one leaderboard per "
        f"headline metric on the test split ({boards}). `trace-bench leaderboard --eval-results REPO_DIR --system "
        "LABEL` writes a model repository's `.eval_results/trace.yaml` entries for them, with the intervals in "
        "their notes."
    )


def datasheet(stats: dict[str, Any]) -> list[str]:
    """The datasheet's paragraphs (Gebru et al. 2021, as in App. D of the Trace paper), with this directory's
    counts."""
    s = stats
    synthetic = s["synthetic"] is not None
    yelp = "synthetic Yelp-format" if synthetic else "Yelp"
    source = (
        "the built-in synthetic Yelp-format bundle (no real Yelp data)"
        if synthetic
        else "a Yelp Open Dataset bundle"
    )
    gens = ", ".join(
        f"the `{b}` backend" + (f" ({m})" if m else "") + f" ({n:,} dialogues)"
        for (b, m), n in sorted(s["generators"].items())
    )
    return [
        "Following Gebru et al. (2021), as in App. D of the Trace paper; counts are this directory's.",
        "**Motivation.** *For what purpose was the dataset created?* To enable research on evidence-grounded "
        "conversational recommender systems in the tourism domain: recommend the right point of interest, justify "
        "it with verifiable review evidence, and recover when the traveller rejects a suggestion. *Who created it?* "
        "The trace-bench pipeline, run by the person who built this directory; the benchmark design is the Trace "
        "paper's.",
        "**Composition.** *What do the instances represent?* Multi-turn dialogues between a simulated tourist "
        f"(user) and a recommender (system), grounded in {yelp} POI data and reviews. *How many?* "
        f"{s['dialogues']:,} dialogues, {s['pois']:,} POIs, {s['indexed_reviews']:,} indexed reviews. *Is there a "
        "label?* Each system turn carries an action label, referenced POI ids, gold and acceptable-alternative POI "
        "ids, and review citations; each quote is tied to a review span.",
        "**Collection process.** *How was the data acquired?* Dialogues were generated by the trace-bench "
        f"five-stage pipeline (scenario, candidates, generation, validation, difficulty) with {gens or 'no recorded generator'}, "
        f"grounded in a knowledge base built from {source}. *Preprocessing?* Reviews truncated to "
        f"{REVIEW_MAX_CHARS} characters; POIs required at least 3 reviews; every quote was validated against its "
        "source review (fuzzy match of at least 0.80).",
        "**Uses.** Conversational recommendation, review-grounded generation, dialogue state tracking, evidence "
        "attribution evaluation. *Risks:* reviewer-demographic bias can propagate into recommendations; automated "
        "grounding metrics should not be over-trusted in deployment.",
        (
            "**Distribution.** Everything here is synthetic and released under CC BY 4.0 (see Licence). The official "
            "Trace release (real Yelp data)"
            if synthetic
            else "**Distribution.** The authored content is released under CC BY 4.0 as a `[Q:N]` release; Yelp review text "
            "is hydrated locally (see Licence and Hydration). The official Trace release"
        )
        + f" is on the Hugging Face Hub as `{OFFICIAL_HUB_DATASET}`.",
        "**Maintenance.** The trace-bench maintainers; regenerate with `trace-bench corpus generate` and release "
        "with `trace-bench corpus release`.",
    ]


def synthetic_banner(stats: dict[str, Any]) -> str:
    m = stats["synthetic"]
    made = f" (seed {m['seed']}, scale {m['scale']:g})" if "seed" in m and "scale" in m else ""
    return (
        "> **Synthetic data: no Yelp text.** Built from trace-bench's built-in synthetic Yelp-format bundle"
        f"{made}: every business, review and quote here was generated by trace-bench, none comes from Yelp, so "
        "all of it is CC BY 4.0 and may be shared. It exercises the benchmark end to end; numbers measured on it "
        "are not comparable with the Trace paper's, which come from the real Yelp Open Dataset."
    )


def synthetic_hydration(stats: dict[str, Any]) -> str:
    m = stats["synthetic"]
    options = "".join(
        f" --{k} {m[k]:g}" if k == "scale" else f" --{k} {m[k]}" for k in ("seed", "scale") if k in m
    )
    return (
        "This directory was built from the synthetic bundle, so a `[Q:N]` release of it is hydrated from that "
        "bundle, which `trace-bench yelp synth` writes again byte for byte:\n\n"
        "```bash\n"
        f"trace-bench yelp synth --out yelp-synthetic{options}\n"
        "trace-bench corpus hydrate --release PATH/TO/RELEASE --yelp yelp-synthetic --out trace-hydrated\n"
        "```\n\n"
        "Every quote is checked against its checksum; hydrating the release of a generated corpus gives that corpus "
        "back byte for byte. The real benchmark is hydrated the same way from the Yelp Open Dataset "
        "(`--yelp PATH/TO/yelp_dataset.tar`)."
    )


def status(stats: dict[str, Any]) -> str:
    if stats["synthetic"] is not None:
        if stats["has_text"]:
            return (
                f"The review text here (the quoted spans in the dialogues and `{KB_DIRNAME}/{REVIEWS_FILE}`) is "
                "synthetic: it may be redistributed with the rest of the directory."
            )
        return (
            "> **Release (no review text).** Every quote appears as a `[Q:N]` placeholder backed by "
            "`quote_spans` (review id, character offsets, checksum), exactly as in a release of the real "
            "benchmark; hydrate it from the synthetic bundle (below) before running baselines or grounding "
            "metrics."
        )
    if stats["has_text"]:
        return (
            "> **Local data: do not redistribute.** This directory holds Yelp review text (the quoted spans in the "
            f"dialogues and `{KB_DIRNAME}/{REVIEWS_FILE}`), either because it was generated locally from a Yelp "
            "bundle or because a release was hydrated with the user's own Yelp Open Dataset copy. Yelp's "
            "academic-use terms govern that text: keep it on your machine, and publish only the `[Q:N]` release "
            "(`trace-bench corpus release`)."
        )
    return (
        "> **Release (no review text).** Every quote from a Yelp review appears as a `[Q:N]` placeholder backed "
        "by `quote_spans` (review id, character offsets into the original review text, checksum), and the "
        "knowledge base ships without review text. Hydrate it locally from your own Yelp Open Dataset copy "
        "(below) before running baselines or grounding metrics."
    )


def yelp_hydration() -> str:
    return (
        "A release carries no review text. To fill every `[Q:N]` placeholder, download the Yelp Open Dataset "
        "(https://business.yelp.com/data/resources/open-dataset/) under Yelp's terms, then run\n\n"
        "```bash\n"
        "trace-bench corpus hydrate --release PATH/TO/RELEASE --yelp PATH/TO/yelp_dataset.tar --out trace-hydrated\n"
        f"trace-bench corpus hydrate --release hub --yelp PATH/TO/yelp_dataset.tar --out trace-hydrated   "
        f"# fetch {OFFICIAL_HUB_DATASET} first\n"
        "```\n\n"
        "`--yelp` takes the extracted folder, `yelp_dataset.tar`, a `.zip` holding either, or the review "
        "`.json`/`.json.gz` file. The review file is streamed once; only referenced reviews are kept. Every quote is "
        "checked against its checksum; a missing review or a mismatch (another Yelp version) stops with counts and "
        "the first ids unless `--allow-partial` is given, which leaves those quotes as visible `[Q:N]` placeholders "
        "and counts them in `hydration.json`. The output is a complete data directory (with "
        f"`{KB_DIRNAME}/{REVIEWS_FILE}`) for the baselines and metrics; hydrating the release of a generated corpus "
        "gives that corpus back byte for byte."
    )


def licence(stats: dict[str, Any]) -> str:
    if stats["synthetic"] is not None:
        return (
            "- **CC BY 4.0**: everything in this directory: the dialogues, the synthetic businesses and reviews "
            "(generated by trace-bench, not Yelp data), the annotations and this card.\n"
            "- The real Trace benchmark differs: its Yelp review text is never redistributed (a release shows it "
            "as `[Q:N]` placeholders, hydrated locally under Yelp's academic-use terms).\n"
            "- A release is checked before it is written: no file in it (this card included) contains six "
            "consecutive words of any knowledge-base review."
        )
    return (
        "- **CC BY 4.0**: the content authored for the benchmark: dialogue structure, non-quote turn text, action "
        "labels, grounding annotations (gold and acceptable POIs, quote spans), `(business_id, R#)` citation "
        "pointers, and this card.\n"
        "- **Yelp's terms**: verbatim Yelp review text is never redistributed: a release shows it only as `[Q:N]` "
        "placeholders with positional metadata, and it is hydrated locally from a user-obtained Yelp Open Dataset "
        "bundle under Yelp's academic-use terms (non-commercial, non-sublicensable, revocable). POI metadata (name, "
        "address, coordinates, categories, stars, price) is included under the academic-publication carve-out of "
        "those terms; `business_id` and `review_id` values are bare factual identifiers. A blanket MIT or "
        "Apache-2.0 licence is not available for this data because Yelp's agreement is non-sublicensable.\n"
        "- A release is checked before it is written: no file in it (this card included) contains six "
        "consecutive words of any knowledge-base review."
    )
