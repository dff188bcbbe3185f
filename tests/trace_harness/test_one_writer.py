"""One writer per output, for every command that writes a resumable output: `run`'s predictions file, every
protocol's output, CoRE's folder and reproduce's out folder refuse a second process, naming its pid, and leave
what the first writes untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.baselines import sample_dialogues, write_data_dir
from tests.support.cli import run_cli
from tests.support.llm import ScriptedLLM
from tests.support.locks import held_elsewhere
from tests.support.reproduce import write_config
from trace_dataset.lock import OutputBusy
from trace_harness.protocols.base import Protocol, RunConfig
from trace_metrics.core.prompts import load_prompts
from trace_metrics.core.runner import run_corpus


@pytest.fixture
def data(tmp_path):
    return write_data_dir(tmp_path / "corpus", sample_dialogues(2, "test"))


def test_run_refuses_a_predictions_file_another_process_writes(capsys, data, tmp_path):
    out = tmp_path / "runs" / "popularity.jsonl"
    with held_elsewhere(out) as child:
        rc, text = run_cli(capsys, "run", "popularity", "--data", data, "--out", out, "--no-progress")
        assert rc == 2 and f"pid {child.pid}) is writing this predictions file" in text, text
        assert not out.exists()
    rc, text = run_cli(capsys, "run", "popularity", "--data", data, "--out", out, "--no-progress")
    assert rc == 0 and out.exists(), text


def test_a_protocol_does_not_start_while_another_process_writes_its_output(tmp_path):
    class Never(Protocol):
        name, unit = "never", "item"

        def start(self) -> None:
            raise AssertionError("started while another process held the output")

        def steps(self) -> Iterator[int]:
            yield 0

        def finish(self) -> None:
            return None

    out = tmp_path / "interactive"
    with held_elsewhere(out) as child, pytest.raises(OutputBusy, match=f"pid {child.pid}"):
        Never(RunConfig(Path(".")), out, progress=False).run()


def test_core_refuses_a_folder_another_process_scores_into(tmp_path):
    llm = ScriptedLLM(lambda conv: "<rating>3</rating>")
    with held_elsewhere(tmp_path / "core") as child, pytest.raises(OutputBusy, match=f"pid {child.pid}"):
        run_corpus(llm, [], tmp_path / "core", load_prompts())
    assert not (tmp_path / "core").exists()


def test_reproduce_refuses_an_out_folder_another_process_writes(capsys, data, tmp_path):
    path = write_config(
        tmp_path / "c.yaml", data, "http://127.0.0.1:9/v1", parts=["table5"], systems=["popularity"]
    )
    with held_elsewhere(tmp_path / "out") as child:
        rc, text = run_cli(capsys, "reproduce", str(path), "--dry-run")
        assert rc == 2 and f"pid {child.pid}) is writing this reproduce output folder" in text, text
    assert not (tmp_path / "out").exists()
