"""The `hf` backend on a tiny random-weight Llama built offline (fast)."""

from __future__ import annotations

import logging

import pytest

from trace_llm import DecodingSettings, LLMError, load_llm

SHORT = DecodingSettings(max_new_tokens=6)
CONVS = [[{"role": "user", "content": "hello " * k}] for k in (1, 9, 3)] + [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "quiet museum in Tampa"}]
]


@pytest.fixture
def tiny(tiny_llama_dir, tmp_path):
    llm = load_llm(f"hf:{tiny_llama_dir}", SHORT, cache_path=tmp_path / "c.sqlite", batch_size=3)
    yield llm
    llm.close()


def test_describe_and_cpu_dtype(tiny, tiny_llama_dir):
    d = tiny.describe()
    assert d["backend"] == "hf" and d["model"] == str(tiny_llama_dir.resolve())
    assert d["settings"] == SHORT.to_dict() and d["dtype"] == "float32"
    assert tiny.cache_model.endswith("|float32")


def test_batches_are_left_padded_like_single_calls(tiny, tiny_llama_dir):
    batched = tiny.generate_batch(CONVS)
    assert len(set(batched)) > 1, "the random model should answer different prompts differently"
    single = load_llm(f"hf:{tiny_llama_dir}", SHORT, cache_path=False, batch_size=1)
    assert [single.generate(c) for c in CONVS] == batched
    assert tiny._tokenizer.padding_side == "left"


def test_usage_counts_tokens(tiny):
    tiny.generate_batch(CONVS)
    usage = tiny.usage
    assert usage["requests"] == 4 and usage["cache_hits"] == 0
    assert usage["completion_tokens"] > 0 and usage["prompt_tokens"] > 4 * 5
    completion = tiny.complete_batch(CONVS[:1])[0]
    assert completion.finish_reason in ("stop", "length")


def test_second_identical_call_makes_no_model_call(tiny, tiny_llama_dir, tmp_path, monkeypatch):
    first = tiny.generate_batch(CONVS)
    again = load_llm(f"hf:{tiny_llama_dir}", SHORT, cache_path=tmp_path / "c.sqlite")

    def no_model(*args, **kwargs):
        raise AssertionError("the model was called for a cached answer")

    monkeypatch.setattr(again, "_complete", no_model)
    assert again.generate_batch(CONVS) == first
    assert again.usage["requests"] == 0 and again.usage["cache_hits"] == 4
    assert again._pipe is None  # a fully cached rerun never loads the model
    with pytest.raises(AssertionError, match="model was called"):
        again.generate(CONVS[0], SHORT.replace(max_new_tokens=7))  # different settings: a miss


def test_interrupted_batch_resumes(tiny, tiny_llama_dir, tmp_path):
    convs = [[{"role": "user", "content": f"question number {i}"}] for i in range(7)]
    tiny._load()
    real_pipe = tiny._pipe
    calls = []

    def crashing_pipe(inputs, **kwargs):
        calls.append(len(inputs))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_pipe(inputs, **kwargs)

    tiny._pipe = crashing_pipe
    with pytest.raises(KeyboardInterrupt):
        tiny.generate_batch(convs)
    assert tiny.usage["requests"] == 3  # the first batch of 3 was answered and cached
    resumed = load_llm(f"hf:{tiny_llama_dir}", SHORT, cache_path=tmp_path / "c.sqlite", batch_size=3)
    answers = resumed.generate_batch(convs)
    assert resumed.usage["requests"] == 4 and resumed.usage["cache_hits"] == 3
    fresh = load_llm(f"hf:{tiny_llama_dir}", SHORT, cache_path=False, batch_size=3)
    assert fresh.generate_batch(convs) == answers


def test_sampling_is_seeded(tiny_llama_dir):
    import torch

    llm = load_llm(f"hf:{tiny_llama_dir}", cache_path=False)
    llm._load()
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    hot = DecodingSettings(temperature=1.0, max_new_tokens=12, seed=1)
    a, b = llm.generate(CONVS[0], hot), llm.generate(CONVS[0], hot)
    c = llm.generate(CONVS[0], hot.replace(seed=2))
    assert a == b and a != c
    assert torch.equal(torch.rand(3), expected)  # the caller's global RNG stream is untouched
    greedy = [llm.generate(CONVS[0], DecodingSettings(max_new_tokens=12, seed=s)) for s in (1, 2)]
    assert greedy[0] == greedy[1]


def test_model_without_chat_template_uses_plain_prompt(tiny_llama_plain_dir, caplog):
    llm = load_llm(f"hf:{tiny_llama_plain_dir}", SHORT, cache_path=False)
    with caplog.at_level(logging.WARNING, logger="trace_llm.hf"):
        assert isinstance(llm.generate(CONVS[3]), str)
    assert "no chat template" in caplog.text
    assert llm._prompt_text(CONVS[3]).endswith("User: quiet museum in Tampa\n\nAssistant:")


def test_folder_without_model_is_a_clear_error(tmp_path):
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    with pytest.raises(LLMError, match="cannot load"):
        load_llm(f"hf:{empty}", cache_path=False).generate(CONVS[0])


def test_bad_batch_size_and_dtype(tiny_llama_dir):
    with pytest.raises(ValueError, match="batch_size"):
        load_llm(f"hf:{tiny_llama_dir}", cache_path=False, batch_size=0)
    with pytest.raises(ValueError, match="dtype"):
        load_llm(f"hf:{tiny_llama_dir}", cache_path=False, dtype="float8")
