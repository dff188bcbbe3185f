"""The llamacpp backend's faster prompt reading: `dtype` (the GGUF weights rewritten by llama.cpp's quantizer)
and `flash_attn`; both are named in the model's label, the run's identity and the response cache's key."""

from __future__ import annotations

import argparse

import pytest

from tests.support.requires import needs_llama_cpp
from trace_llm import DecodingSettings, LLMConfigError, add_llm_argument, load_llm
from trace_llm.cache import CACHE_ENV
from trace_llm.cli import llm_options
from trace_llm.llama_dtype import check_llama_dtype, gguf_as_dtype

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
SHORT = DecodingSettings(max_new_tokens=12)


def test_dtype_names_are_checked():
    assert check_llama_dtype(None) is None and check_llama_dtype("auto") is None
    assert check_llama_dtype("float16") == "float16"
    with pytest.raises(LLMConfigError, match=r"dtype='int8'.*\['auto', 'float32', 'float16', 'bfloat16'\]"):
        check_llama_dtype("int8")


def test_cli_flags_reach_the_options():
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    assert llm_options(parser.parse_args([]))["flash_attn"] is None  # the backend's default: off
    options = llm_options(parser.parse_args(["--llm-flash-attn", "--llm-dtype", "float16"]))
    assert options["flash_attn"] is True and options["dtype"] == "float16"


@pytest.mark.parametrize("bad", ["yes", 1])
def test_flash_attn_must_be_a_bool(bad):
    needs_llama_cpp()
    with pytest.raises(LLMConfigError, match="flash_attn=.*expected true or false"):
        load_llm("smollm2:llamacpp", cache_path=False, flash_attn=bad)


def test_f16_copy_is_written_once_then_reused(tmp_path):
    needs_llama_cpp()
    from trace_llm.smollm2 import smollm2_gguf_path

    source = smollm2_gguf_path()
    copy = gguf_as_dtype(source, "float16", tmp_path)
    assert copy.parent == tmp_path and copy.name.endswith(".F16.gguf")
    assert copy.stat().st_size > 2.5 * source.stat().st_size  # 16 bits a weight against Q4_1's 5
    written = copy.stat().st_mtime_ns
    assert gguf_as_dtype(source, "float16", tmp_path) == copy and copy.stat().st_mtime_ns == written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [copy.name, copy.name + ".lock"]
    )  # no temp left


def test_f16_with_flash_attention_answers_under_its_own_label_and_cache_key(tmp_path, monkeypatch):
    needs_llama_cpp()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    cache = tmp_path / "responses.sqlite"
    plain = load_llm("smollm2:llamacpp", SHORT, cache_path=cache, threads=1)
    assert plain.generate(QUESTION).strip()
    described = plain.describe()
    assert "dtype" not in described and "flash_attn" not in described  # earlier runs keep their identity
    plain.close()
    fast = load_llm("smollm2:llamacpp", SHORT, cache_path=cache, threads=1, dtype="float16", flash_attn=True)
    described = fast.describe()
    assert described["model"] == plain.model + " (as float16, flash attention)"
    assert described["dtype"] == "float16" and described["flash_attn"] is True
    assert fast.generate(QUESTION).strip()
    assert fast.usage["requests"] == 1 and fast.usage["cache_hits"] == 0  # not the Q4_1 file's cached answer
    fast.close()
    assert list((tmp_path / "cache" / "models").glob("*.F16.gguf"))
