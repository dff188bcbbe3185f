"""The six LLM baselines with the packaged SmolLM2 in process under constrained decoding (slow): no turn falls
back to Popularity because of an unparsable answer, and the run summary says the answers were constrained.

Small on purpose: the one test dialogue of the small data directory (two system turns), App. F's decoding
(600 new tokens; the schemas bound the response so it closes well before), first answers only (no repairs).
"""

from __future__ import annotations

import pytest

from baselines import LLM_BASELINES
from trace_harness.protocols.teacher_forced.runner import run_all

pytestmark = pytest.mark.slow


def test_six_baselines_answer_valid_json_by_construction(tmp_path):
    from tests.support.llm_baselines import write_data_dir
    from trace_llm import LLMConfigError
    from trace_llm.smollm2 import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except LLMConfigError as e:
        pytest.skip(str(e))
    data = write_data_dir(tmp_path / "data")
    params = {
        "llm": "smollm2",
        "json_repairs": 0,
        "llm_cache": str(tmp_path / "llm.sqlite"),
        "llm_options": {"threads": 1},
    }
    metas = run_all(
        data,
        tmp_path / "runs",
        names=list(LLM_BASELINES),
        split="test",
        pool="closed",
        progress=False,
        per_name_params={n: dict(params) for n in LLM_BASELINES},
    )
    for name, meta in metas.items():
        assert isinstance(meta, dict), f"{name} failed: {meta}"
        report = meta["summary"]["fallbacks"]
        usage = meta["summary"]["usage"]["llm_usage"]
        assert report["own_result"], (name, report)
        assert meta["summary"]["rows"].get("fallback_popularity", 0) == 0, name
        assert meta["summary"]["rows"].get("dst_extraction_failed", 0) == 0, name
        assert usage["json_failures"] == 0 and usage["dialect_fallbacks"] == 0, (name, usage)
        if name != "multi_review_synthesis":  # MRS answers in free text
            assert usage["constrained"] > 0, (name, usage)
