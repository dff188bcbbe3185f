"""A reproduction killed mid-run (SIGKILL, no chance to clean up) resumes: the rerun sends only what was not
answered and ends with the same predictions as an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import dry_run_responder, requests_by_role, write_config
from tests.support.stub_server import StubOpenAI
from trace_bench.cli import main
from trace_dataset.io import read_json

CLI = "import sys; from trace_bench.cli import main; sys.exit(main(sys.argv[1:]))"
SYSTEMS = ["popularity", "llm_zero_shot", "rag_citation"]


@pytest.mark.slow
def test_a_run_killed_mid_way_resumes_to_the_same_result(tmp_path):
    data = write_data_dir(tmp_path / "data")
    with StubOpenAI(dry_run_responder, delay=0.3) as stub:
        config = write_config(
            tmp_path / "killed" / "c.yaml", data, stub.url, systems=SYSTEMS, transport={"concurrency": 1}
        )
        child = subprocess.Popen(
            [sys.executable, "-c", CLI, "reproduce", str(config), "--no-progress"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 300
        while requests_by_role(stub.requests).get("systems", 0) < 8:
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            if time.monotonic() > deadline:
                pytest.fail("the child never got going")
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stderr.close()
        killed = requests_by_role(stub.requests)["systems"]
        assert main(["reproduce", str(config), "--no-progress"]) == 0
        resumed = requests_by_role(stub.requests)["systems"]
        fresh = write_config(tmp_path / "fresh" / "c.yaml", data, stub.url, systems=SYSTEMS)
        assert main(["reproduce", str(fresh), "--no-progress"]) == 0
        uninterrupted = requests_by_role(stub.requests)["systems"] - resumed
    # only the requests in flight when the child was killed are sent twice: at most one per concurrent call
    # (Zero-Shot and RAG-Citation ask each group of candidate counts at the same time, 3 groups at most here)
    assert uninterrupted <= resumed <= uninterrupted + 3 and 8 <= killed < uninterrupted
    for name in SYSTEMS:
        a, b = (tmp_path / d / "out" / "runs" / "closed" / f"{name}.jsonl" for d in ("killed", "fresh"))
        assert a.read_bytes() == b.read_bytes()
        assert read_json(a.with_name(a.name + ".meta.json"))["complete"]
    assert read_json(tmp_path / "killed" / "out" / "manifest.json")["parts"]["table5"]["sent_all_invocations"]
