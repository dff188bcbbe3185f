"""The llamacpp backend's `instances` option: copies of the model answering a batch side by side give the same
replies, in the same order, as one copy; a failed request still raises in the caller's thread; the option is
checked, reaches the backend from `--llm-instances`, and is left out of a run's identity."""

from __future__ import annotations

import argparse

import pytest

from tests.support.requires import needs_llama_cpp
from trace_harness.protocols.teacher_forced.runner import llm_identity
from trace_llm import DecodingSettings, LLMConfigError, LLMError, load_llm
from trace_llm.cli import add_llm_argument, llm_options

SHORT = DecodingSettings(max_new_tokens=8)
JSON_SHORT = DecodingSettings(max_new_tokens=24)
CATALOGUE = "\n".join(f"Place {i} | a quiet cafe, {20 + i} reviews" for i in range(3))
# three requests: copy 0 answers the first and the third (its prompt cache then holds the first), copy 1 the second
PROMPTS = [[{"role": "user", "content": f"Catalogue:\n{CATALOGUE}\nAgent {a}: pick one."}] for a in "AB"] + [
    [{"role": "user", "content": "Name a museum in Tampa."}]
]
SCHEMA = {
    "type": "object",
    "properties": {"place": {"type": "string", "maxLength": 20}},
    "required": ["place"],
    "additionalProperties": False,
}


def test_llm_instances_flag_reaches_the_backend_and_is_checked(capsys):
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    assert llm_options(parser.parse_args([]))["instances"] is None  # the backend's default: one copy
    assert llm_options(parser.parse_args(["--llm-instances", "2"]))["instances"] == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["--llm-instances", "0"])
    assert "--llm-instances" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_instances_must_be_a_positive_whole_number(bad):
    needs_llama_cpp()
    with pytest.raises(LLMConfigError, match="instances=.*expected a positive integer"):
        load_llm("smollm2:llamacpp", cache_path=False, instances=bad)


def test_two_copies_answer_like_one(tmp_path):
    needs_llama_cpp()
    runs = {}
    for n in (1, 2):  # one thread a copy: llama.cpp's default threads crawl on a machine busy with other jobs
        llm = load_llm(
            "smollm2:llamacpp", SHORT, cache_path=tmp_path / f"cache{n}.sqlite", instances=n, threads=1
        )
        replies = llm.generate_batch(PROMPTS)
        answers = [repr(a) for a in llm.generate_json_batch(PROMPTS[:2], SCHEMA, JSON_SHORT, max_repairs=0)]
        runs[n] = replies, answers, llm.usage, llm.describe()
        assert len(llm._llamas) == n
        llm.close()
    (one, one_json, one_usage, one_described), (two, two_json, two_usage, two_described) = runs[1], runs[2]
    assert two == one and two_json == one_json
    assert two_usage == one_usage and two_usage["requests"] == 5 and two_usage["constrained"] == 2
    assert "instances" not in one_described and two_described["instances"] == 2
    assert llm_identity(two_described) == llm_identity(one_described)  # a run resumes with another count
    # answered by the second copy too: its own response cache holds every reply, in its place
    again = load_llm("smollm2:llamacpp", SHORT, cache_path=tmp_path / "cache2.sqlite", instances=2, threads=1)
    assert again.generate_batch(PROMPTS) == one and again.usage["cache_hits"] == len(PROMPTS)
    again.close()


def test_a_failed_request_raises_in_the_callers_thread(tmp_path):
    needs_llama_cpp()
    # a catalogue prompt does not fit a 48-token context; the short one does
    llm = load_llm("smollm2:llamacpp", SHORT, cache_path=tmp_path / "c.sqlite", instances=2, context=48)
    with pytest.raises(LLMError, match="SmolLM2-135M-Instruct"):
        llm.generate_batch([PROMPTS[2], PROMPTS[0], PROMPTS[2]])
    llm.close()


def test_instances_are_capped_by_the_flag_and_by_the_cores(capsys, monkeypatch):
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    for bad in ("65", "99999999999999999999"):
        with pytest.raises(SystemExit):
            parser.parse_args(["--llm-instances", bad])
        assert "expected an integer in [1, 64]" in capsys.readouterr().err
    needs_llama_cpp()
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    with pytest.raises(LLMConfigError, match="instances=3: more copies than this machine's 2 cores"):
        load_llm("smollm2:llamacpp", cache_path=False, instances=3)


def test_running_out_of_memory_loading_copies_is_one_line(monkeypatch):
    needs_llama_cpp()

    class Hungry:
        def __init__(self, **kwargs):
            raise MemoryError

    monkeypatch.setattr("trace_llm.llama_greedy.greedy_grammar_llama_class", lambda: Hungry)
    llm = load_llm("smollm2:llamacpp", cache_path=False, instances=2)
    with pytest.raises(LLMError, match="ran out of memory loading copy 1 of 2 .*use fewer --llm-instances"):
        llm._load()
