"""`corpus release` / `corpus hydrate` commands, and `--release hub` (never touching the network)."""

from __future__ import annotations

import argparse
import shutil

import pytest

from trace_dataset.constants import OFFICIAL_HUB_DATASET
from trace_dataset.io import TraceDataError
from trace_dataset.release import hub
from trace_dataset.release.cli import add_parsers
from trace_dataset.release.hydrate import HYDRATION_META_FILE


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="trace-bench corpus")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_release_then_hydrate(tiny, tmp_path, capsys):
    assert _run(["release", "--corpus", str(tiny.corpus), "--out", str(tmp_path / "rel")]) == 0
    out = capsys.readouterr().out
    assert "12 dialogues" in out and "48 quotes as [Q:N] placeholders" in out
    assert (
        _run(
            [
                "hydrate",
                "--release",
                str(tmp_path / "rel"),
                "--yelp",
                str(tiny.yelp),
                "--out",
                str(tmp_path / "hyd"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "48/48 quotes" in out and "PARTIAL" not in out
    assert (tmp_path / "hyd" / HYDRATION_META_FILE).exists()


def test_allow_partial_flag(tiny, tmp_path, capsys):
    _run(["release", "--corpus", str(tiny.corpus), "--out", str(tmp_path / "rel")])
    lines = (tiny.yelp / "yelp_academic_dataset_review.json").read_text().splitlines()
    (tiny.yelp / "yelp_academic_dataset_review.json").write_text("\n".join(lines[15:40]) + "\n")
    argv = [
        "hydrate",
        "--release",
        str(tmp_path / "rel"),
        "--yelp",
        str(tiny.yelp),
        "--out",
        str(tmp_path / "hyd"),
    ]
    with pytest.raises(TraceDataError, match="not in the Yelp bundle"):
        _run(argv)
    assert _run([*argv, "--allow-partial"]) == 0
    assert "PARTIAL:" in capsys.readouterr().out


def test_hub_spec_parsing():
    assert hub.is_hub_spec("hub") and hub.is_hub_spec("hf:someone/data") and not hub.is_hub_spec("./hub-copy")
    assert hub.hub_repo_id("hub") == OFFICIAL_HUB_DATASET == "taoist/TRACE"
    assert hub.hub_repo_id("hf:someone/data") == "someone/data"
    with pytest.raises(TraceDataError, match="expected 'hub' or 'hf:OWNER/NAME'"):
        hub.hub_repo_id("hf:nothing")


def test_hub_offline_gives_a_clear_error(tmp_path, monkeypatch):
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    with pytest.raises(TraceDataError, match=r"could not fetch the release 'taoist/TRACE'.*--release DIR"):
        hub.fetch_release("hub", local_dir=tmp_path / "hub-copy")


def test_hub_release_goes_through_the_same_hydration(tiny, tmp_path, monkeypatch, capsys):
    """A Hub snapshot (data/ + knowledge_base/ + card) is hydrated like a local release."""
    _run(["release", "--corpus", str(tiny.corpus), "--out", str(tmp_path / "rel")])
    calls = []

    def fake_snapshot_download(**kwargs):
        calls.append(kwargs)
        snap = tmp_path / "snapshot"
        shutil.copytree(tmp_path / "rel", snap)
        (snap / "release.json").unlink()  # the Hub layout has data/ + knowledge_base/ + README only
        return str(snap)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    assert (
        _run(["hydrate", "--release", "hub", "--yelp", str(tiny.yelp), "--out", str(tmp_path / "hyd")]) == 0
    )
    assert calls[0]["repo_id"] == "taoist/TRACE" and calls[0]["repo_type"] == "dataset"
    for split in ("train", "validation", "test"):
        assert (tmp_path / "hyd" / "data" / f"{split}.jsonl.gz").read_bytes() == (
            tiny.corpus / "data" / f"{split}.jsonl.gz"
        ).read_bytes()


def test_hub_snapshot_without_data_folder(tmp_path, monkeypatch):
    import huggingface_hub

    (tmp_path / "snap").mkdir()
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda **kw: str(tmp_path / "snap"))
    with pytest.raises(TraceDataError, match="has no data/ folder"):
        hub.fetch_release("hf:someone/other")


def test_root_command_registers_release_and_hydrate(tiny, tmp_path):
    """Through the real `trace-bench corpus ...` command group."""
    from trace_bench.cli import main

    assert main(["corpus", "release", "--corpus", str(tiny.corpus), "--out", str(tmp_path / "rel")]) == 0
    assert (
        main(
            [
                "corpus",
                "hydrate",
                "--release",
                str(tmp_path / "rel"),
                "--yelp",
                str(tiny.yelp),
                "--out",
                str(tmp_path / "hyd"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "corpus",
                "hydrate",
                "--release",
                str(tmp_path / "nowhere"),
                "--yelp",
                str(tiny.yelp),
                "--out",
                str(tmp_path / "hyd2"),
            ]
        )
        == 2
    )
