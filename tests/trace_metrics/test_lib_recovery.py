"""TSR, T2R and rejection recovery: hand-computed dialogues."""

from __future__ import annotations

import pytest

from trace_metrics.lib import recovery as rc

D_HIT_AFTER_REJECTION = [
    ("greet_and_seek", None),
    ("ask_preference", None),
    ("provide_preference", None),
    ("recommend", False),
    ("reject_and_refine", None),
    ("ask_preference", None),
    ("recommend", True),
    ("accept", None),
    ("farewell", None),
]
D_NEVER = [
    ("greet_and_seek", None),
    ("compare", False),
    ("reject_and_refine", None),
    ("recommend", False),
    ("reject_and_refine", None),
    ("farewell", None),
]


def test_task_success_and_t2r():
    assert rc.task_success(D_HIT_AFTER_REJECTION) == 1.0 and rc.turns_to_first_hit(D_HIT_AFTER_REJECTION) == 2
    assert rc.task_success(D_NEVER) == 0.0 and rc.turns_to_first_hit(D_NEVER) is None
    assert rc.task_success([("greet_and_seek", None), ("farewell", None)]) is None


def test_rejection_episodes_skip_ask_preference_and_keep_unfollowed():
    assert rc.rejection_episodes(D_HIT_AFTER_REJECTION) == [(4, True)]
    assert rc.rejection_episodes(D_NEVER) == [(2, False), (4, None)]


def test_score():
    out = rc.score([D_HIT_AFTER_REJECTION, D_NEVER], return_per_item=True)
    assert out == {
        "tsr": 0.5,
        "t2r": 2.0,
        "rejection_recovery": 0.5,
        "tsr_n": 2,
        "t2r_n": 1,
        "rejection_recovery_n": 2,
        "rejection_episodes_without_followup": 1,
        "n": 2,
        "tsr_per_item": [1.0, 0.0],
        "t2r_per_item": [2.0, None],
        "rejection_recovery_per_item": [1.0, 0.0, None],
    }


def test_missing_hit_is_an_error():
    with pytest.raises(ValueError, match="need True or False"):
        rc.task_success([("recommend", None)])
