from __future__ import annotations

import dataclasses

import pytest

from trace_llm import DecodingSettings, LLMConfigError, LLMError, load_llm, parse_spec


def test_settings_defaults_and_dict():
    s = DecodingSettings()
    assert s.to_dict() == {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 256, "seed": 42}
    assert s.greedy
    assert DecodingSettings.from_dict(s.to_dict()) == s
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.temperature = 1.0  # type: ignore[misc]


def test_settings_normalise_ints_so_cache_keys_agree():
    assert DecodingSettings(temperature=0, top_p=1) == DecodingSettings()
    assert isinstance(DecodingSettings(temperature=1).temperature, float)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"temperature": -0.1}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"seed": -1}, "seed"),
        ({"max_new_tokens": 1.5}, "max_new_tokens"),
        ({"temperature": "hot"}, "temperature"),
    ],
)
def test_settings_reject_bad_values(kwargs, word):
    with pytest.raises(LLMConfigError, match=word):
        DecodingSettings(**kwargs)


def test_settings_from_dict_rejects_unknown_keys():
    with pytest.raises(LLMConfigError, match="top_k"):
        DecodingSettings.from_dict({"top_k": 5})


@pytest.mark.parametrize(
    "spec, backend, target, model, gguf",
    [
        ("smollm2", "smollm2", "", "", None),
        ("SmolLM2", "smollm2", "", "", None),
        ("hf:HuggingFaceTB/SmolLM2-360M-Instruct", "hf", "HuggingFaceTB/SmolLM2-360M-Instruct", "", None),
        ("hf:/models/x", "hf", "/models/x", "", None),
        ("hf:org/repo#model.Q4_K_M.gguf", "hf", "org/repo", "", "model.Q4_K_M.gguf"),
        ("hf:/data/m/file.gguf", "hf", "/data/m", "", "file.gguf"),
        ("hf:file.gguf", "hf", ".", "", "file.gguf"),
        (
            "openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B",
            "openai",
            "http://127.0.0.1:8000/v1",
            "Qwen/Qwen3-8B",
            None,
        ),
        ("openai:https://api.example.com/v1/#gpt-x", "openai", "https://api.example.com/v1", "gpt-x", None),
    ],
)
def test_parse_spec(spec, backend, target, model, gguf):
    parsed = parse_spec(spec)
    assert (parsed.backend, parsed.target, parsed.model, parsed.gguf_file) == (backend, target, model, gguf)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "gpt4",
        "vllm:http://x#m",
        "hf:",
        "hf:repo#weights.bin",
        "openai:127.0.0.1:8000#m",
        "openai:http://x/v1",
    ],
)
def test_bad_spec_names_valid_forms(spec):
    with pytest.raises(LLMConfigError) as info:
        parse_spec(spec)
    message = str(info.value)
    for form in ("smollm2", "hf:PATH_OR_ID", "openai:BASE_URL#MODEL"):
        assert form in message
    assert isinstance(info.value, LLMError) and isinstance(info.value, ValueError)


def test_load_llm_rejects_unknown_options():
    with pytest.raises(LLMConfigError, match="unknown LLM option"):
        load_llm("openai:http://127.0.0.1:1/v1#m", cache_path=False, temprature=0.5)
