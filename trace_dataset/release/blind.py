"""`trace-bench corpus blind`: a blind test set, a new test split with hidden gold, made by the generator.

    make_blind(data_dir, period, out_dir, n=None, seed=None) -> the private period record

The generator (`generate_corpus(split="test")`: the same cells, tiers, archetypes, plans and validation) makes
`n` new test dialogues over the knowledge base of the data directory `data_dir` (a hydrated release or a
generated corpus) with a secret seed (`secrets`). Each dialogue scores one system turn s (`blind_turns`:
uniform among its system turns, drawn from the seed and the dialogue id) and ends there, so that nothing in
the inputs is the reference of a scored turn; two folders are written:

    OUT/inputs/   the dialogues' turns 0..s without their gold (GOLD_TURN_FIELDS, GOLD_DIALOGUE_FIELDS
                  emptied, the seed withheld) and turn s with only its turn_id, role and action (its text,
                  referenced ids and citations emptied, the quote spans of its quotes dropped), as a [Q:N]
                  release any user hydrates (`trace-bench corpus hydrate`), + period.json
    OUT/gold/     the private side: a complete data directory (the dialogues' turns 0..s with their gold as
                  the test split, over the same knowledge base) for `evaluate_run(OUT/gold, ..., split="test")`,
                  which scores the last system turn of each dialogue (period.json's `scored_turns`),
                  + period.json with the seed

Both period.json files hold the period name, the creation date, the number of dialogues, `scored_turns`
("last_system_turn") and the statistics of the blind set (of the whole generated dialogues, before they are
cut at s, so that they compare like for like) beside those of the public test split (`trace-bench corpus
stats`'s, Table 3), with the scored turns' action shares beside those a uniform pick gives on the public split,
the differences and whether each is within `BLIND_TOLERANCES`. The whole of OUT is staged and moved into place
at the end (`trace_dataset.io.staged_dir`): an interrupted run leaves nothing to resume, and a finished OUT
is replaced only with `force`.
"""

from __future__ import annotations

import datetime
import logging
import math
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SPLITS,
)
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import (
    TraceDataError,
    atomic_open,
    copy_file,
    dumps,
    read_json,
    staged_dir,
    write_json,
    write_text,
)
from trace_dataset.release.blind_turns import (
    LAST_SYSTEM_TURN,
    SCORED_TURNS_FIELD,
    blank_scored_turn,
    expected_scored_shares,
    quotes_in,
    scored_action_shares,
    scored_turn,
    truncate,
)

log = logging.getLogger(__name__)

BLIND_SPLIT = "test"
PERIOD_FILE = "period.json"
INPUTS_DIRNAME = "inputs"
GOLD_DIRNAME = "gold"
# The gold a blind set keeps private: emptied in the inputs (the fields stay, so every reader of the schema
# reads the inputs), present in the gold folder.
GOLD_TURN_FIELDS: tuple[str, ...] = ("gold_poi_ids", "acceptable_alternative_poi_ids")
GOLD_DIALOGUE_FIELDS: tuple[str, ...] = ("open_set_poi_ids",)
SEED_WITHHELD = 0  # metadata.seed in the inputs: the seed would regenerate the gold
SEED_BITS = 63  # metadata.seed is an int64
PERIOD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# How far the blind set's statistics may lie from the public test split's: the generator's tolerance on tier
# shares (tests/trace_dataset/generate/test_generate_synthetic_corpus.py, for 1,000 dialogues), applied to every
# share, and its band on the mean number of turns (10.0-11.0 around Table 3's 10.5), or three standard errors
# of the difference between two samples of these sizes where that is larger (two smaller sets differ more).
# The scored turns' action shares (one turn per dialogue) take the action shares' tolerance; their bound is
# mostly the standard errors (one draw per dialogue).
BLIND_STANDARD_ERRORS = 3.0
BLIND_TOLERANCES: dict[str, float] = {
    "tier_shares": 0.015,
    "action_shares": 0.015,
    "turns_mean": 0.5,
    "scored_action_shares": 0.015,
}


def check_period(period: str) -> str:
    if not isinstance(period, str) or not PERIOD_RE.fullmatch(period):
        raise TraceDataError(
            f"period name {period!r}: expected 1-64 letters, digits, '.', '_' or '-', starting with a letter or "
            "a digit (e.g. 2026-q1)"
        )
    return period


def _check_source(data_dir: str | os.PathLike) -> Path:
    """A data directory with a test split and a complete knowledge base (the review text included: the
    generator quotes it, the release checks every quote against it)."""
    root = check_data_dir(data_dir, (BLIND_SPLIT,))
    missing = [
        f"{KB_DIRNAME}/{name}"
        for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE)
        if not (kb_dir(root) / name).exists()
    ]
    if missing:
        raise TraceDataError(
            f"no knowledge base to generate from: missing {', '.join(missing)}; a blind set is generated over a "
            "hydrated release or a generated corpus (trace-bench corpus hydrate writes the review text)",
            path=root,
        )
    return root


def make_blind(
    data_dir: str | os.PathLike,
    period: str,
    out_dir: str | os.PathLike,
    *,
    n: int | None = None,
    seed: int | None = None,
    force: bool = False,
    workers: int | None = None,
    created: str | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Write the blind set of `period` to `out_dir` (inputs/ and gold/); returns the gold side's period.json.

    `n`: dialogues (default: as many as the public test split); `seed`: None draws a secret one (give one only
    to reproduce a set or in tests); `created`: the date recorded (default: today, UTC).
    """
    from trace_dataset.generate import generate_corpus
    from trace_dataset.generate.stats import corpus_stats
    from trace_dataset.release.writer import write_release

    check_period(period)
    root = _check_source(data_dir)
    out = Path(out_dir)
    _check_out(out, force)
    public = {
        **corpus_stats(root, (BLIND_SPLIT,)),
        "scored_action_shares": expected_scored_shares(iter_dialogues(root, BLIND_SPLIT)),
    }
    n = public["dialogues"] if n is None else n
    if not isinstance(n, int) or n < 1:
        raise TraceDataError(f"n: expected a positive number of dialogues, got {n!r}", path=root)
    seed = secrets.randbelow(2**SEED_BITS) if seed is None else seed
    created = _check_created(created)
    with staged_dir(out, (GOLD_DIRNAME, INPUTS_DIRNAME), protect=(root,), what="blind set") as stage:
        gold = stage / GOLD_DIRNAME
        generate_corpus(
            kb_dir(root), gold, n=n, seed=seed, split=BLIND_SPLIT, workers=workers, progress=progress
        )
        generated = corpus_stats(gold, (BLIND_SPLIT,))  # the whole dialogues, before the cut
        generated["scored_action_shares"] = scored_action_shares(_cut_gold(gold, seed))
        stripped = stage / "inputs-corpus"
        _write_inputs_corpus(gold, stripped)
        write_release(stripped, stage / INPUTS_DIRNAME)
        shutil.rmtree(stripped)
        _mark_inputs(stage / INPUTS_DIRNAME, period, n)
        record = _period_record(period, created, generated, public, root)
        write_json(stage / INPUTS_DIRNAME / PERIOD_FILE, record)
        private = {**record, "seed": seed}
        write_json(gold / PERIOD_FILE, private)
    log.info("blind set %s: %d dialogues in %s (inputs/ to publish, gold/ to keep private)", period, n, out)
    return private


def _check_created(created: str | None) -> str:
    if created is None:
        return datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        return datetime.date.fromisoformat(created).isoformat()
    except (TypeError, ValueError):
        raise TraceDataError(f"created: expected a date YYYY-MM-DD, got {created!r}") from None


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise TraceDataError("output path exists and is not a folder; expected a folder", path=out)
    if out.is_dir() and any(out.iterdir()) and not force:
        raise TraceDataError(
            "output folder exists and is not empty; refusing to overwrite a blind set (its gold may be the only "
            "copy): choose a new folder, or pass --force to replace it",
            path=out,
        )


def strip_gold(dialogue: dict[str, Any]) -> dict[str, Any]:
    """The dialogue as the inputs show it: every gold field emptied, the seed withheld (key order kept)."""
    turns = [{k: ([] if k in GOLD_TURN_FIELDS else v) for k, v in t.items()} for t in dialogue["turns"]]
    out = {k: ([] if k in GOLD_DIALOGUE_FIELDS else v) for k, v in dialogue.items()}
    out["turns"] = turns
    out["metadata"] = {**dialogue["metadata"], "seed": SEED_WITHHELD}
    return out


def blind_inputs(gold: dict[str, Any]) -> dict[str, Any]:
    """A cut gold dialogue (`blind_turns.truncate`) as the inputs show it: `strip_gold`, and its last turn, the
    scored one, with its reference content emptied (`blank_scored_turn`) and the quote spans of its quotes
    dropped (the spans of the earlier turns' quotes are a prefix, numbered as before)."""
    out = strip_gold(gold)
    turns = [*out["turns"][:-1], blank_scored_turn(out["turns"][-1])]
    out["turns"] = turns
    out["quote_spans"] = gold["quote_spans"][: quotes_in(turns)]
    return out


def _cut_gold(gold: Path, seed: int) -> list[str]:
    """Cut every dialogue of the gold folder after its scored turn (`blind_turns.scored_turn`), in place;
    returns the scored turns' actions."""
    actions: list[str] = []
    for split in SPLITS:
        with atomic_open(split_file(gold, split), "w") as f:
            for d in iter_dialogues(gold, split):
                s = scored_turn(d, seed)
                actions.append(d["turns"][s]["action"])
                f.write(dumps(truncate(d, s)) + "\n")
    return actions


def read_scored_turns(data_dir: str | os.PathLike) -> str | None:
    """What the period.json of a data directory says of its scored turns: LAST_SYSTEM_TURN for a blind set's
    gold (or inputs), None for a data directory without a period.json or one that says nothing."""
    path = Path(data_dir) / PERIOD_FILE
    if not path.exists():
        return None
    record = read_json(path)
    value = record.get(SCORED_TURNS_FIELD) if isinstance(record, dict) else None
    if value not in (None, LAST_SYSTEM_TURN):
        raise TraceDataError(
            f"{SCORED_TURNS_FIELD}: {value!r}; expected {LAST_SYSTEM_TURN!r} (a blind set scores the last system "
            "turn of each dialogue) or no such field",
            path=path,
        )
    return value


def _mark_inputs(inputs: Path, period: str, n: int) -> None:
    """The release's card says it is a blind set's inputs, right under its title; no eval.yaml (its Hub
    leaderboards would take scores nobody can compute without the gold)."""
    from trace_dataset.release.card import CARD_FILE
    from trace_dataset.release.eval_yaml import EVAL_YAML

    (inputs / EVAL_YAML).unlink(missing_ok=True)
    card = (inputs / CARD_FILE).read_text(encoding="utf-8")
    title_end = card.index("\n", card.index("\n# ") + 1)
    note = (
        f"\n\n> **Blind test set, period {period}: inputs only.** {n} test dialogues made by the Trace generator "
        f"with a private seed; the fields {', '.join(f'`{k}`' for k in GOLD_TURN_FIELDS + GOLD_DIALOGUE_FIELDS)} are empty and "
        "`metadata.seed` is 0. Each dialogue ends at the one system turn it scores, whose text, referenced "
        "ids and citations are empty too (predict it and every other system turn; only the last one is "
        "scored). The gold is kept by the leaderboard's maintainer, who scores submissions against it; the "
        "sections below describe a Trace release in general."
    )
    write_text(inputs / CARD_FILE, card[:title_end] + note + card[title_end:])


def _write_inputs_corpus(gold: Path, dest: Path) -> None:
    """A data directory of the stripped dialogues over the gold's knowledge base (review text included, for
    the release's checks; no corpus.json: it records the seed)."""
    for split in SPLITS:
        with atomic_open(split_file(dest, split), "w") as f:
            for d in iter_dialogues(gold, split):
                f.write(dumps(blind_inputs(d)) + "\n")
    for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, KB_META_FILE):
        if (kb_dir(gold) / name).exists():
            copy_file(kb_dir(gold) / name, kb_dir(dest) / name)


def compare_stats(blind: dict[str, Any], public: dict[str, Any]) -> dict[str, Any]:
    """Whether both hold the same city x type cells, and per statistic of BLIND_TOLERANCES the largest
    difference between the blind and public values, the bound it is held to and whether it is within."""
    n1, n2 = max(blind["dialogues"], 1), max(public["dialogues"], 1)
    out: dict[str, Any] = {"same_cells": sorted(blind["cells"]) == sorted(public["cells"])}
    for key, tol in BLIND_TOLERANCES.items():
        a, b = blind[key], public[key]
        if isinstance(a, dict):  # shares: the binomial standard error of a difference (dialogues as the unit)
            diffs = {k: (abs(a[k] - b.get(k, 0.0)), (a[k] + b.get(k, 0.0)) / 2) for k in a}
            worst = max(diffs, key=lambda k: diffs[k][0])
            diff, p = diffs[worst]
            se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
        else:
            diff = abs(a - b)
            se = math.sqrt(blind["turns_sd"] ** 2 / n1 + public["turns_sd"] ** 2 / n2)
        bound = max(tol, BLIND_STANDARD_ERRORS * se)
        out[key] = {
            "max_difference": round(diff, 4),
            "tolerance": tol,
            "bound": round(bound, 4),
            "within": diff <= bound,
        }
    return out


def _period_record(
    period: str, created: str, blind: dict[str, Any], public: dict[str, Any], root: Path
) -> dict[str, Any]:
    return {
        "period": period,
        "created": created,
        "split": BLIND_SPLIT,
        "dialogues": blind["dialogues"],
        SCORED_TURNS_FIELD: LAST_SYSTEM_TURN,
        "public_corpus_version": corpus_version(corpus_meta(root)),
        "statistics": {"blind": blind, "public_test": public},
        "comparison": compare_stats(blind, public),
    }


def format_comparison(record: dict[str, Any]) -> str:
    """The blind set's Table 3 statistics beside the public test split's, one line each."""
    from trace_dataset.generate.stats import format_stats

    stats = record["statistics"]
    parts = [
        f"blind set {record['period']} ({record['dialogues']} dialogues, created {record['created']}):",
        format_stats(stats["blind"]),
        "",
        f"public test split ({stats['public_test']['dialogues']} dialogues):",
        format_stats(stats["public_test"]),
        "",
        "scored turns' actions (one per dialogue; blind / public split, expected of a uniform pick): "
        + ", ".join(
            f"{a} {share:.1%} / {stats['public_test']['scored_action_shares'].get(a, 0.0):.1%}"
            for a, share in stats["blind"]["scored_action_shares"].items()
        ),
    ]
    for key, c in record["comparison"].items():
        if key == "same_cells":
            parts.append(f"same city x type cells: {'yes' if c else 'NO'}")
        else:
            verdict = "within" if c["within"] else "OUTSIDE"
            parts.append(
                f"{key}: largest difference {c['max_difference']:.4f} ({verdict} {c['bound']:.4f}: the "
                f"generator's {c['tolerance']} or {BLIND_STANDARD_ERRORS:g} standard errors)"
            )
    return "\n".join(parts)
