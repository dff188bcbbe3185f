"""What a reliability report rates again: the items of CoRE runs or of the LLM judge, and how to re-rate them.

A `Subject` holds the items (ids, rated system, response length in words), the keys rated (CoRE's factors,
`factor_mean` and `overall`; the judge's five scales), the stored ratings where the run has them, the rated
systems' model ids, and `rate(repeat, reverse)`: every item rated once more, one list of {key: score} per item.

- repeat r: the same request with the decoding seed raised by r, at the run's own temperature (settings from
  CoRE's run.json; the judge LLM's own settings). Repeat 0 is the run itself (CoRE: the stored records; the
  judge: its ratings, served from the response cache when the run used the same cache).
- reverse: the order check. CoRE: the session's recommendation list and the debaters' speaking order
  reversed (the debate buffer then lists the roles last first). The judge: its cited reviews listed last first,
  each under its own [Rn] label. Reversing is the permutation that moves every position of a list of two or
  more (Zheng et al. 2023 swap the two answers of a pairwise judge, its two-item case).
- length: CoRE, the words of the system's turns in the rated interaction; the judge, the words of the response.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_dataset.io import TraceDataError, read_json
from trace_metrics.core.conversation import ConversationLog
from trace_metrics.core.runner import DIALOGUES_DIR, RUN_FILE, system_name
from trace_metrics.core.scoring import FACTOR_MEAN, OVERALL, rated, score_logs

if TYPE_CHECKING:
    from trace_llm import LLM

Ratings = list[dict[str, float | None]]


@dataclass(frozen=True)
class Subject:
    kind: str  # "core" | "judge"
    ids: tuple[str, ...]
    systems: tuple[str, ...]
    lengths: tuple[int, ...]
    keys: tuple[str, ...]
    stored: Ratings | None
    rate: Callable[[int, bool], Ratings]
    source: dict[str, Any]


def words(text: str) -> int:
    return len(text.split())


def system_models(predictions: Sequence[str | os.PathLike]) -> dict[str, str | None]:
    """system name -> the model id its predictions' run metadata records (`parameters.llm.model`), else None."""
    out: dict[str, str | None] = {}
    for path in map(Path, predictions):
        meta_file = path.with_name(path.name + ".meta.json")
        meta = read_json(meta_file) if meta_file.exists() else {}
        llm = (meta.get("parameters") or {}).get("llm") if isinstance(meta.get("parameters"), dict) else None
        model = llm.get("model") if isinstance(llm, dict) else None
        out[system_name(path)] = model if isinstance(model, str) else None
    return out


# ---------------------------------------------------------------------------------------------------
# CoRE
# ---------------------------------------------------------------------------------------------------
def _core_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    run_file = run_dir / RUN_FILE
    if not run_file.is_file():
        raise TraceDataError(
            f"no {RUN_FILE}: not a CoRE output folder (`trace-bench core score`)", path=run_dir
        )
    identity = read_json(run_file).get("identity") or {}
    records = [read_json(p) for p in sorted((run_dir / DIALOGUES_DIR).glob("*.json"))]
    if not records:
        raise TraceDataError(f"no rated dialogue in {DIALOGUES_DIR}/", path=run_dir)
    return identity, sorted(records, key=lambda r: r["id"])


def record_ratings(record: Mapping[str, Any], debate: bool) -> dict[str, float | None]:
    out: dict[str, float | None] = {f: record["factors"][f]["score"] for f in rated(record)}
    out[FACTOR_MEAN] = record["factor_mean"]
    if debate:
        out[OVERALL] = record["overall"]
    return out


def reversed_log(log: ConversationLog) -> ConversationLog:
    return dataclasses.replace(
        log,
        recommendations=tuple(reversed(log.recommendations)),
        recommendation_ids=tuple(reversed(log.recommendation_ids)),
    )


def _check_same_judge(llm: LLM, identity: Mapping[str, Any], run_dir: Path) -> None:
    stored = identity.get("llm") or {}
    described = llm.describe()
    if (stored.get("backend"), stored.get("model")) != (described.get("backend"), described.get("model")):
        raise TraceDataError(
            f"was rated by {stored.get('backend')} {stored.get('model')!r}, not by the given LLM "
            f"{described.get('backend')} {described.get('model')!r}; a reliability report re-rates with the "
            "run's own judge",
            path=run_dir / RUN_FILE,
        )


def _core_rater(llm: LLM, identity: Mapping[str, Any], logs: Sequence[ConversationLog], prompts: Any):
    from trace_llm import DecodingSettings

    options = dict(identity.get("options") or {})
    settings = {
        k: DecodingSettings.from_dict(options.pop(k)) if options.get(k) else llm.settings
        for k in ("factor_settings", "debate_settings")
    }

    def rate(repeat: int, reverse: bool) -> Ratings:
        chosen: dict[str, Any] = {k: s.replace(seed=s.seed + repeat) for k, s in settings.items()}
        convs = [reversed_log(c) for c in logs] if reverse else list(logs)
        ps = dataclasses.replace(prompts, roles=tuple(reversed(prompts.roles))) if reverse else prompts
        records = score_logs(llm, convs, ps, **options, **chosen)
        return [record_ratings(r, bool(options.get("debate", True))) for r in records]

    return rate


def core_subject(llm: LLM, run_dirs: Sequence[str | os.PathLike], prompts_dir: Any = None) -> Subject:
    """The items of one or more CoRE output folders (one per system), re-rated with `llm` (their judge)."""
    from trace_metrics.core.prompts import load_prompts

    prompts = load_prompts(prompts_dir)
    parts: list[tuple[list[dict[str, Any]], Callable[[int, bool], Ratings]]] = []
    keys: tuple[str, ...] = ()
    runs = []
    for run_dir in map(Path, run_dirs):
        identity, records = _core_run(run_dir)
        _check_same_judge(llm, identity, run_dir)
        if (identity.get("prompts") or {}).get("sha256") != prompts.sha256:
            raise TraceDataError(
                f"was rated with prompts sha256 {(identity.get('prompts') or {}).get('sha256')!r}, not the given "
                f"{prompts.sha256!r} (--prompts names the run's own prompts folder)",
                path=run_dir / RUN_FILE,
            )
        debate = bool((identity.get("options") or {}).get("debate", True))
        run_keys = tuple(record_ratings(records[0], debate))
        if keys and run_keys != keys:
            raise TraceDataError(
                f"rates {run_keys}, another run {keys}; expected the same keys", path=run_dir
            )
        keys = run_keys
        logs = [ConversationLog.from_dict(r["conversation"]) for r in records]
        parts.append((records, _core_rater(llm, identity, logs, prompts)))
        runs.append({"run": os.fspath(run_dir), "identity": identity, "n_dialogues": len(records)})
    records = [r for rs, _ in parts for r in rs]
    debate_keys = OVERALL in keys

    def rate(repeat: int, reverse: bool) -> Ratings:
        return [row for _, part in parts for row in part(repeat, reverse)]

    return Subject(
        kind="core",
        ids=tuple(r["id"] for r in records),
        systems=tuple(r.get("system", "") for r in records),
        lengths=tuple(
            sum(words(t["text"]) for t in r["conversation"]["interaction"] if t["role"] == "system")
            for r in records
        ),
        keys=keys,
        stored=[record_ratings(r, debate_keys) for r in records],
        rate=rate,
        source={"runs": runs},
    )


# ---------------------------------------------------------------------------------------------------
# The LLM judge
# ---------------------------------------------------------------------------------------------------
def judge_run_items(
    data_dir: str | os.PathLike, predictions: str | os.PathLike, split: str = "test", limit: int | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """(system, judge items) of a predictions file: its recommendation turns, as `evaluate --judge` rates them
    (`suite_optional.judge_items`); rows of other splits are left out; `limit` keeps the first N dialogues."""
    from trace_dataset.datadir import check_data_dir, iter_dialogues
    from trace_metrics.lib import items as items_mod
    from trace_metrics.lib import selection
    from trace_metrics.lib.predictions import load_predictions, validate_predictions
    from trace_metrics.lib.suite import load_kb
    from trace_metrics.lib.suite_optional import judge_items

    data_dir = check_data_dir(data_dir, splits=(split,))
    kb = load_kb(data_dir)
    dialogues = list(iter_dialogues(data_dir, split))
    in_split = {d["dialogue_id"] for d in dialogues}
    rows = [
        r for r in load_predictions(predictions) if r.get("dialogue_id") in in_split
    ]  # a run of all splits
    if not rows:
        raise TraceDataError(f"no prediction for a dialogue of the {split} split", path=predictions)
    index = validate_predictions(
        rows, dialogues, split=split, known_poi_ids=kb.pois, check_pool=False, path=predictions
    )
    if limit is not None:
        keep = {d["dialogue_id"] for d in dialogues[:limit]}
        dialogues = [d for d in dialogues if d["dialogue_id"] in keep]
        index = {k: v for k, v in index.items() if k[0] in keep}
    sources = items_mod.Sources(kb)
    turns = [items_mod.TurnItem(t, sources) for d in selection.join(dialogues, index) for t in d.system_turns]
    rec = [x for x in turns if x.recommending]
    by_id = {d["dialogue_id"]: d for d in dialogues}
    return system_name(predictions), judge_items([x.turn for x in rec], by_id, [x.cited_texts for x in rec])


def judge_subject(
    llm: LLM,
    data_dir: str | os.PathLike,
    predictions: Sequence[str | os.PathLike],
    split: str = "test",
    limit: int | None = None,
) -> Subject:
    """The recommendation turns of one or more predictions files, rated by the LLM judge `llm`."""
    from trace_metrics.lib.judge import JUDGE_SCALES, judge_turns

    items: list[dict[str, Any]] = []
    systems: list[str] = []
    for path in predictions:
        system, found = judge_run_items(data_dir, path, split, limit)
        items += [{**item, "item_id": f"{item['item_id']}:{system}"} for item in found]
        systems += [system] * len(found)

    def rate(repeat: int, reverse: bool) -> Ratings:
        settings = llm.settings.replace(seed=llm.settings.seed + repeat)
        asked = [{**item, "reversed_reviews": reverse} for item in items]
        records = judge_turns(llm, asked, settings=settings)
        return [{m: (r["ratings"][k] if r["ok"] else None) for k, m in JUDGE_SCALES.items()} for r in records]

    return Subject(
        kind="judge",
        ids=tuple(i["item_id"] for i in items),
        systems=tuple(systems),
        lengths=tuple(words(i["response"]) for i in items),
        keys=tuple(JUDGE_SCALES.values()),
        stored=None,
        rate=rate,
        source={
            "data": os.fspath(data_dir),
            "split": split,
            "predictions": [os.fspath(p) for p in predictions],
        },
    )
