"""The llm backend on the real packaged SmolLM2-135M (`--llm smollm2`), one dialogue, on CPU.

A 135M model rarely writes a valid 8-12 turn JSON dialogue with verbatim quotes; what must hold is that
whatever it writes goes through parsing and validation, failures are counted by reason, and the dialogue
falls back to the template text of the same plan, marked as such."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def test_smollm2_one_dialogue(fixture_kb, tmp_path):
    llm_mod = pytest.importorskip("trace_llm")
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.generate import generate_corpus

    try:
        llm = llm_mod.load_llm("smollm2", llm_mod.DecodingSettings(max_new_tokens=96), cache_path=False)
    except llm_mod.LLMError as e:
        pytest.skip(f"SmolLM2 is not available here: {e}")
    report = generate_corpus(
        fixture_kb,
        tmp_path / "c",
        n=1,
        backend="llm",
        llm=llm,
        llm_attempts=1,
        llm_json_repairs=0,
        progress=False,
    )
    info = report["llm"]
    assert info["describe"]["model"] and info["llm_attempts"] == 1
    assert info["dialogues_written_by_llm"] + info["template_fallbacks"] == 1
    [d] = list(iter_dialogues(tmp_path / "c"))
    if info["template_fallbacks"]:
        assert d["metadata"]["backend"] == "template" and sum(info["llm_failure_reasons"].values()) >= 1
    else:
        assert d["metadata"]["backend"] == "llm" and d["metadata"]["model"]
    print(json.dumps(info, indent=1))
