"""One writer per output: a second process is refused with the holder's pid; a killed holder's lock is taken
over; the lock file is gone once the writer is done; a writer that waits gets the lock when the holder lets go."""

from __future__ import annotations

import signal
import threading

import pytest

from tests.support.locks import held_elsewhere
from trace_bench.errors import TraceBenchError
from trace_dataset.lock import OutputBusy, lock_path, output_lock


def test_a_second_process_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "run.jsonl"
    with held_elsewhere(out) as child:
        with pytest.raises(OutputBusy, match=rf"pid {child.pid}\) is writing this predictions file") as e:
            with output_lock(out, "predictions file"):
                pytest.fail("the block ran while another process held the lock")
        assert isinstance(e.value, TraceBenchError) and str(out) in str(e.value)
    with output_lock(out) as lock:  # released when the holder let go
        assert lock == lock_path(out) and lock.read_text().strip().isdigit()
    assert not lock.exists()


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path):
    out = tmp_path / "out"
    with held_elsewhere(out) as child:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert lock_path(out).exists()  # left behind, but no longer locked
        with output_lock(out):
            pass
    assert not lock_path(out).exists()


def test_one_process_writing_two_outputs_holds_both(tmp_path):
    with output_lock(tmp_path / "a"), output_lock(tmp_path / "a" / "b.jsonl"):
        assert lock_path(tmp_path / "a").exists() and lock_path(tmp_path / "a" / "b.jsonl").exists()


def test_a_waiting_writer_gets_the_lock_once_the_holder_lets_go(tmp_path):
    out, order = tmp_path / "subset", []

    def wait_for_it() -> None:
        with output_lock(out, wait=True):
            order.append("acquired")

    with held_elsewhere(out) as child:
        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive()  # waiting, not refused
        order.append("released")
        assert child.stdin is not None
        child.stdin.close()
        waiter.join(30)
    assert order == ["released", "acquired"] and not lock_path(out).exists()
