"""Where `trace-bench demo --out OUT` puts what it makes (the default OUT: runs/demo), and what the Space reads.

OUT/demo.json             the data-shaping settings (a rerun with others is refused)
OUT/yelp/                 the synthetic Yelp bundle
OUT/kb/                   the knowledge base built from it
OUT/corpus/               the generated dialogues
OUT/release/              the public release (no review texts)
OUT/hydrated/             the release hydrated with the bundle's texts: the data directory every run reads
OUT/runs/closed|open/     the baselines' runs (reproduce's closed.runs and open.runs)
OUT/leaderboard/          the leaderboard (leaderboard.json is the Space's baseline rows), the interactive view
OUT/interactive/NAME/     the interactive runs (each baseline with the rules traveller)
OUT/llm_subset/           the LLM step's seeded subset; OUT/llm_runs/ its runs; OUT/core/NAME/ its CoRE runs
OUT/space/                the Space's local results store (submissions)
"""

from __future__ import annotations

from pathlib import Path

from trace_harness.reproduce.config import DEFAULT_RUNS, INTERACTIVE_DIR, LEADERBOARD_DIR

DEFAULT_OUT = Path("runs/demo")
SETTINGS_FILE = "demo.json"
BOARD_FILE = "leaderboard.json"  # the rows file write_leaderboard writes in the leaderboard folder
CORE_DIR = "core"  # the LLM step's CoRE runs (demo_llm.yaml: core.out core/{system})
LLM_SUBSET_DIR = "llm_subset"  # the LLM step's data directory (demo_llm.yaml: data)


def data_dirs(out: Path) -> dict[str, Path]:
    """The data stages' folders, in the order they are made."""
    return {
        "yelp": out / "yelp",
        "kb": out / "kb",
        "corpus": out / "corpus",
        "release": out / "release",
        "hydrated": out / "hydrated",
    }


def demo_layout(out: Path) -> dict[str, Path]:
    """What the Space reads of the job's output: its data directory, results store, the runs shown in the
    dialogue browser, the baseline rows, the interactive and the CoRE runs."""
    return {
        "data_dir": data_dirs(out)["hydrated"],
        "results_dir": out / "space",
        "runs_dir": out / DEFAULT_RUNS["closed"],
        "baselines_file": out / LEADERBOARD_DIR / BOARD_FILE,
        "interactive_dir": out / INTERACTIVE_DIR,
        "core_dir": out / CORE_DIR,
    }
