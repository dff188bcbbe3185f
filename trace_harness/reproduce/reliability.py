"""The `reliability` section of `reproduce`'s config: the reliability reports (`trace-bench core reliability`)
after the leaderboard, each CoRE run (parts: core) and the LLM judge's ratings of the closed runs (parts:
judge) re-rated k times and in reversed order, with the run's own model.

Config key `reliability: {k: 2, limit: 5}`: k ratings per item, the run's own included (an integer >= 2, as
the command's --k; null, the default: no report, as no model is called unless the config asks); limit: the
judge report's first N dialogues of each closed run (null: all; CoRE's report re-rates every dialogue its run
rated, `core.limit` already bounds them). The packaged examples ask for k = 2. Each report costs about k passes
of its part's requests (k - 1 repeats, one reversed), which the dry run does not count (its plan says so under
the part, `dry_run_notes`); the live path runs
them, the batch path (--export-batch / --import-batch) does not.

Outputs: OUT/core/<system>/<split>/reliability/ (beside each CoRE run: the Space's CoRE tab reads it) and
OUT/reliability/judge/. They run in reproduce/reports.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from trace_harness.reproduce.fields import Fields

JUDGE_REPORT_DIR = "reliability/judge"


@dataclass(frozen=True)
class ReliabilityConfig:
    k: int | None = None
    limit: int | None = 5


def parse_reliability(f: Fields) -> ReliabilityConfig:
    """The `reliability` section, checked as `core reliability --k` checks its flag."""
    from trace_metrics.core.reliability import MIN_K

    r = f.sub("reliability", ("k", "limit"))
    return ReliabilityConfig(
        k=r.number("k", None, low=MIN_K, none=True), limit=r.number("limit", 5, low=1, none=True)
    )


def dry_run_notes(config: ReliabilityConfig, parts: tuple[str, ...]) -> dict[str, str]:
    """part -> what the dry run says of its reliability report, which it does not count: the report's requests
    are built from the run's own ratings, which do not exist before the run."""
    if config.k is None:
        return {}
    k = config.k
    passes = f"about {k} more passes of this part's requests ({k - 1} repeat(s) at new seeds, one reversed"
    notes = {
        "core": f"{passes}, each CoRE session again)",
        "judge": f"{passes}, over the first {config.limit} dialogues of each closed run)"
        if config.limit is not None
        else f"{passes}, over every dialogue of each closed run)",
    }
    return {
        part: f"not counted above: its reliability report (reliability.k = {k}) sends {note}; the dry run "
        "cannot build them, they are made from the run's ratings"
        for part, note in notes.items()
        if part in parts
    }
