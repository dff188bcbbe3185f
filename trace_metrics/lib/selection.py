"""Which turns each metric family scores, and the join of predictions to the reference turns (§3, App. J).

- accuracy: recommend/compare system turns (the *reference* action at that turn) with at least one gold POI;
- grounding (and entailment, the judge): recommend/compare system turns;
- text (BLEU-4, ROUGE-L): every system turn (ask_preference, recommend, compare, farewell);
- grounding with `grounding_turns="system"` (the other reading of the paper, see docs/leaderboard.md): every
  system turn;
- practical value: per dialogue, over its *recommended POIs* (`conventions.recommended_by_turn`): the top-1 of
  each recommend turn and the top two of each compare turn (a comparison puts two POIs forward), then the POIs
  whose reviews those turns' responses cite, distinct, in order of first appearance;
- recovery: per dialogue (TSR, T2R) and per reject_and_refine episode, with a *hit* (`conventions.is_hit`) =
  a gold POI among what the turn recommends (the top-1 of a recommend turn, the top two of a compare turn).

The pool (closed, pool_16, pool_32, open) changes the candidates a system ranks (checked by predictions
validation), never the gold, so selection is the same for every pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.io import TraceDataError
from trace_dataset.prediction import Prediction
from trace_dataset.quotes import PLACEHOLDER_RE
from trace_metrics.lib.conventions import DEFAULT_COMPARE_HIT, CompareHit, is_hit, recommended_by_turn


class EvalTurn(NamedTuple):
    """A system turn: the reference side and the system's prediction."""

    dialogue_id: str
    turn_id: int
    action: str  # the reference action at this turn
    reference_text: str
    gold: tuple[str, ...]
    alternatives: tuple[str, ...]
    ranked: tuple[str, ...]
    response: str
    citations: Mapping[str, str]

    @property
    def hit(self) -> bool:
        """A gold POI among what this recommend/compare turn recommends (`conventions.is_hit`)."""
        return is_hit(self.action, self.ranked, self.gold)


class EvalDialogue(NamedTuple):
    dialogue_id: str
    actions: tuple[str, ...]  # every turn's action, in order
    user_texts: tuple[str, ...]
    system_turns: tuple[EvalTurn, ...]
    system_positions: tuple[int, ...]  # index into `actions` of each system turn


def join(dialogues: Iterable[dict], predictions: Mapping[tuple[str, int], Prediction]) -> list[EvalDialogue]:
    """Pair every system turn with its (validated) prediction row."""
    out = []
    make_turn = tuple.__new__  # EvalTurn(...) without the keyword-argument parsing (a hot loop)
    for d in dialogues:
        did = d.get("dialogue_id", "?")
        try:
            actions, user_texts, system, positions = [], [], [], []
            for i, t in enumerate(d["turns"]):
                action = t["action"]
                actions.append(action)
                if t["role"] != "system":
                    user_texts.append(t["text"])
                    continue
                text = t["text"]
                turn_id = t["turn_id"]
                if "[Q:" in text and PLACEHOLDER_RE.search(text):
                    raise TraceDataError(
                        f"dialogue {did} turn {turn_id} still holds [Q:N] placeholders: the release is not "
                        "hydrated; run `trace-bench corpus hydrate` and evaluate the hydrated directory"
                    )
                p = predictions[(did, turn_id)]
                gold = t.get("gold_poi_ids")
                alternatives = t.get("acceptable_alternative_poi_ids")
                system.append(
                    make_turn(
                        EvalTurn,
                        (
                            did,
                            turn_id,
                            action,
                            text,
                            tuple(gold) if gold else (),
                            tuple(alternatives) if alternatives else (),
                            p.ranked_poi_ids,
                            p.response,
                            p.citations,
                        ),
                    )
                )
                positions.append(i)
        except KeyError as e:
            raise TraceDataError(f"dialogue {did}: missing field or prediction {e}") from None
        out.append(
            make_turn(EvalDialogue, (did, tuple(actions), tuple(user_texts), tuple(system), tuple(positions)))
        )
    return out


def scored_system_turns(dialogue: EvalDialogue, scored_turns: str) -> tuple[EvalTurn, ...]:
    """The system turns scored (`conventions.resolve_scored_turns`'s "all" or "last"): every one, or only the
    last."""
    return dialogue.system_turns if scored_turns == "all" else dialogue.system_turns[-1:]


def scores_episode(dialogue: EvalDialogue, position: int, scored_turns: str) -> bool:
    """Whether the rejection episode of the reject_and_refine turn at `position` is scored: always under "all";
    under "last", when its follow-up (the first recommend/compare turn after it) is the last system turn."""
    if scored_turns == "all":
        return True
    actions = dialogue.actions
    followup = next(
        (j for j in range(position + 1, len(actions)) if actions[j] in RECOMMENDATION_ACTIONS), None
    )
    return bool(dialogue.system_positions) and followup == dialogue.system_positions[-1]


def system_turns(dialogues: Iterable[EvalDialogue]) -> list[EvalTurn]:
    return [t for d in dialogues for t in d.system_turns]


def recommendation_turns(dialogues: Iterable[EvalDialogue]) -> list[EvalTurn]:
    return [t for d in dialogues for t in d.system_turns if t.action in RECOMMENDATION_ACTIONS]


def accuracy_turns(dialogues: Iterable[EvalDialogue]) -> list[EvalTurn]:
    return [t for d in dialogues for t in d.system_turns if t.action in RECOMMENDATION_ACTIONS and t.gold]


def recommended_pois(
    turns: Sequence[EvalTurn], review_business: Mapping[str, str] | None = None
) -> list[str]:
    """The POIs a dialogue's system put forward, distinct, in order of first appearance.

    Per turn, `conventions.recommended_by_turn`: the top-1 (recommend) or top two (compare) of its ranking,
    then the POIs whose reviews the response cites (label order; `review_business` maps review id -> business
    id). Cited POIs count because a response can recommend more than its ranking's head: the Itinerary
    baseline's tour stops are put forward with quotes from their reviews (paper Table 9 credits them).
    """
    seen: dict[str, None] = {}
    for t in turns:
        if t.action not in RECOMMENDATION_ACTIONS:
            continue
        cited: list[str] = []
        if review_business and t.citations:
            for label in sorted(t.citations, key=_label_number):
                business = review_business.get(t.citations[label])
                if business is not None:
                    cited.append(business)
        for p in recommended_by_turn(t.action, t.ranked, cited):
            seen.setdefault(p)
    return list(seen)


def _label_number(label: str) -> int:
    return int(label[1:]) if label[1:].isdigit() else 0


def recovery_turns(
    dialogue: EvalDialogue, compare_hit: CompareHit = DEFAULT_COMPARE_HIT
) -> list[tuple[str, bool | None]]:
    """(action, hit) of every turn: hit for recommend/compare system turns (`conventions.is_hit` with
    `compare_hit`), None otherwise."""
    out: list[tuple[str, bool | None]] = [(a, None) for a in dialogue.actions]
    for pos, t in zip(dialogue.system_positions, dialogue.system_turns, strict=True):
        if t.action in RECOMMENDATION_ACTIONS:
            out[pos] = (t.action, is_hit(t.action, t.ranked, t.gold, compare_hit))
    return out
