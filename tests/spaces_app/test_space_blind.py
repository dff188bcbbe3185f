"""The blind track: a period's submissions scored against its private gold (the same scores as offline scoring),
shown as their own track, refused once the period closes, and with no gold POI in any message or row."""

from __future__ import annotations

import html
import json

import pytest

from spaces_app.blind import REFUSED_MESSAGE, PeriodError, load_period, load_periods
from spaces_app.owners import Owner
from spaces_app.settings import Settings
from spaces_app.store import LocalStore
from spaces_app.submissions import SubmissionError, submit
from tests.support.space_blind import SECRET_SEED, gold_poi_ids, predictions_on, write_gold
from trace_dataset.datadir import corpus_meta, corpus_version, iter_dialogues

ALICE = Owner("hf", user="alice")


@pytest.fixture()
def gold(space_world, tmp_path):
    return write_gold(space_world["data"], tmp_path / "blind" / "gold")


@pytest.fixture()
def blind_settings(space_settings, gold):
    return Settings(**{**space_settings.__dict__, "blind_dirs": (gold,)})


def _ctx(settings):
    from spaces_app.app import AppContext

    return AppContext(settings, LocalStore(settings.results_dir), periods=load_periods(settings.blind_dirs))


def test_blind_scores_equal_offline_scoring_against_the_gold(blind_settings, gold, valid_predictions):
    from trace_metrics.lib.suite import evaluate_run

    store = LocalStore(blind_settings.results_dir)
    row = submit(store, blind_settings, valid_predictions, name="Mine", owner=ALICE, period=load_period(gold))
    offline = evaluate_run(gold, valid_predictions, split="test", pool="closed")
    assert row["metrics"] == {k: v for k, v in offline["values"].items() if v is not None}
    assert row["period"] == "2026-12" and row["track"] == "blind" and row["submissions"] == 1
    assert set(row["ci"]) and "per_dialogue" not in row  # intervals kept; no per-dialogue scores
    assert corpus_version(corpus_meta(gold)) not in json.dumps(row)
    stored = (store.root / "results" / "mine__closed__blind-2026-12.json").read_text()
    for secret in (
        str(SECRET_SEED),
        str(gold),
        *gold_poi_ids(gold),
    ):  # the row files are public on a Hub store
        assert secret not in json.dumps(row) and secret not in stored, secret
    assert row["request"].startswith("requests/mine__closed__blind-2026-12/")


def test_blind_rows_are_their_own_track(blind_settings, gold, valid_predictions):
    ctx = _ctx(blind_settings)
    submit(ctx.store, blind_settings, valid_predictions, name="Blindy", owner=ALICE, period=ctx.periods[0])
    submit(ctx.store, blind_settings, valid_predictions, name="Publicy", owner=ALICE)
    groups = ["non-LLM", "LLM", "submitted"]
    public, blind = _headline(ctx, groups=groups), _headline(ctx, "blind 2026-12", groups)
    assert "Publicy" in public and "Blindy" not in public
    assert "Blindy" in blind and "Publicy" not in blind and "TF-IDF" not in blind
    assert 'data-period="2026-12" data-state="open"' in blind and "never with the public track" in blind
    assert [r["system"] for r in ctx.rows()].count("Blindy") == 0


def test_a_one_turn_period_scores_the_last_turns_and_shows_no_tsr_or_t2r(
    space_world, space_settings, valid_predictions, tmp_path
):
    """A period as `corpus blind` writes it (one scored turn per dialogue): scored with no option, the
    per-turn metrics as offline scoring gives them, and TSR and T2R with no value, shown as empty cells."""
    from trace_metrics.lib.suite import evaluate_run
    from trace_metrics.tables import column, header

    gold = write_gold(space_world["data"], tmp_path / "one" / "gold", period="2027-01", one_turn=True)
    settings = Settings(**{**space_settings.__dict__, "blind_dirs": (gold,)})
    ctx = _ctx(settings)
    preds = predictions_on(gold, valid_predictions, tmp_path / "on_inputs.jsonl")
    row = submit(ctx.store, settings, preds, name="Onesy", owner=ALICE, period=ctx.periods[0])
    offline = evaluate_run(gold, preds, split="test", pool="closed")
    assert offline["config"]["scored_turns"] == "last" and offline["values"]["recall@1"] is not None
    assert row["metrics"] == {k: v for k, v in offline["values"].items() if v is not None}
    assert "tsr" not in row["metrics"] and "t2r" not in row["metrics"] and "recall@1" in row["metrics"]
    board = _headline(ctx, "blind 2027-01")
    assert "Onesy" in board
    for metric in ("tsr", "t2r"):
        assert (
            f'data-column="{html.escape(header(column(metric)))}" title="not reported / not scored"' in board
        )


@pytest.mark.parametrize("state", ["closed", "published"])
def test_a_closed_or_published_period_takes_no_submission(blind_settings, gold, valid_predictions, state):
    from spaces_app.submit_tab import submit_action

    ctx = _ctx(blind_settings)
    assert "Scored and added" in submit_action(
        ctx, str(valid_predictions), "Early", "", "closed", token="t" * 20, track="blind 2026-12"
    )
    (gold / "state").write_text(state)  # the maintainer closes the period while the app serves
    status = html.unescape(
        submit_action(
            ctx, str(valid_predictions), "Early", "", "closed", token="t" * 20, track="blind 2026-12"
        )
    )
    assert f"blind period '2026-12' is {state}: it takes no new submissions" in status
    assert [r["version"] for r in ctx.store.rows()] == [1]  # frozen
    board = _headline(ctx, "blind 2026-12")
    assert f'data-state="{state}"' in board and "Early" in board


def _headline(ctx, track=None, groups=("submitted",)):
    """The closed pool's Table 5 board as the app renders it (best first), of the public track or `track`."""
    extra = {} if track is None else {"track": track}
    return ctx.table(
        "Table 5: headline", "closed", list(groups), True, "", None, "best first", False, **extra
    )


def _bad_files(space_world, gold, tmp_path):
    """Files that fail validation in every way a gold POI could be named: another dialogue's gold ranked,
    gold POIs of the wrong split, rows missing, a row for a turn that is not there."""
    rows = [json.loads(line) for line in (space_world["runs"] / "tfidf.jsonl").read_text().splitlines()]
    dialogues = list(iter_dialogues(gold, "test"))
    gold_of = {
        d["dialogue_id"]: [p for t in d["turns"] for p in t.get("gold_poi_ids") or ()] for d in dialogues
    }
    ids = list(gold_of)
    swapped = [
        {**r, "ranked_poi_ids": gold_of[ids[(ids.index(r["dialogue_id"]) + 1) % len(ids)]]} for r in rows
    ]
    unknown = [*rows, {**rows[0], "turn_id": 999}]
    for name, content in {"swapped": swapped, "missing": rows[:-2], "unknown": unknown}.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in content))
        yield path
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"dialogue_id": ' + json.dumps(ids[0]) + ", ")
    yield broken


def test_no_refusal_names_a_gold_poi(blind_settings, gold, space_world, tmp_path):
    store = LocalStore(blind_settings.results_dir)
    period = load_period(gold)
    hidden = gold_poi_ids(gold)
    messages = []
    for path in _bad_files(space_world, gold, tmp_path):
        for pool in ("closed", "open"):
            with pytest.raises(SubmissionError) as e:
                submit(store, blind_settings, path, name="Probe", owner=ALICE, pool=pool, period=period)
            messages.append(str(e.value))
    assert not [m for m in messages if any(pid in m for pid in hidden)]
    assert REFUSED_MESSAGE in messages  # the swapped gold, outside its dialogue's candidates, is not named
    assert any("missing" in m for m in messages)  # what names no gold still says what is wrong
    assert store.rows() == []


def test_period_folders_are_checked(gold, tmp_path):
    (gold / "state").write_text("ajar")
    with pytest.raises(PeriodError, match=r"state 'ajar'; expected one of \('open', 'closed', 'published'\)"):
        load_period(gold)
    (gold / "state").unlink()
    with pytest.raises(PeriodError, match="configured twice"):
        load_periods([gold, gold])
    with pytest.raises(PeriodError, match="not a blind period's gold folder"):
        load_period(tmp_path)


def test_settings_read_the_blind_folders_and_the_quota(tmp_path):
    import os

    env = {"TRACE_SPACE_BLIND": f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}", "TRACE_SPACE_QUOTA": "5"}
    settings = Settings.from_env(env, demo_dir=tmp_path / "none")
    assert settings.blind_dirs == (tmp_path / "a", tmp_path / "b") and settings.quota == 5
    assert Settings.from_env({}, demo_dir=tmp_path / "none").quota == 3
    with pytest.raises(ValueError, match="TRACE_SPACE_QUOTA must be an integer number of submissions"):
        Settings.from_env({"TRACE_SPACE_QUOTA": "many"}, demo_dir=tmp_path / "none")
    with pytest.raises(ValueError, match="quota must be a positive integer"):
        Settings(quota=0)


def test_private_hub_datasets_are_downloaded_with_the_token(gold):
    from spaces_app.blind import download_repos

    asked = []

    def download(**kwargs):
        asked.append(kwargs)
        return str(gold)

    assert download_repos(["me/gold-2026-12"], "hf_secret", download) == [gold]
    assert asked == [{"repo_id": "me/gold-2026-12", "repo_type": "dataset", "token": "hf_secret"}]
    assert download_repos([], None) == []
