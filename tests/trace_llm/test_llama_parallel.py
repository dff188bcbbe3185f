"""Side-by-side decoding on llama.cpp (`parallel`) and how prompts are read (trace_llm/llama_reads.py): a batch
decoded as sequences of one context gives the replies, token counts and finish reasons of one request at a time
(free text, JSON under a grammar, seeded sampling); one request's error leaves the others answered and cached;
the prompt cache and a sequence's held cells change what is read, never a reply; the option is checked, reaches
the backend from `--llm-parallel` and is left out of a run's identity."""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from tests.support.requires import needs_llama_cpp
from trace_harness.protocols.teacher_forced.runner import llm_identity
from trace_llm import DecodingSettings, LLMConfigError, LLMError, load_llm, prefix_reuse
from trace_llm.cli import add_llm_argument, llm_options
from trace_llm.llama_reads import common_prefix, read_start, reusable_after
from trace_llm.structured import Constraint

SHORT = DecodingSettings(max_new_tokens=8)
SAMPLED = DecodingSettings(max_new_tokens=8, temperature=0.7, seed=3)
JSON_BUDGET = DecodingSettings(
    max_new_tokens=40
)  # a constrained reply to SCHEMA always closes in 31 (trace_llm.budget)
PLACES = (
    "a quiet cafe in Tampa",
    "a museum in Reno",
    "cheap tacos in Tucson",
    "a park in Boise",
    "a bar in Miami",
)
CONVS = [
    [{"role": "system", "content": "You recommend places."}, {"role": "user", "content": f"Name {p}."}]
    for p in PLACES
]
SCHEMA = {
    "type": "object",
    "properties": {
        "place": {"type": "string", "maxLength": 16},
        "stars": {"type": "integer", "enum": [1, 2, 3]},
    },
    "required": ["place", "stars"],
    "additionalProperties": False,
}


def llm(tmp_path, name: str, **options):
    return load_llm("smollm2:llamacpp", SHORT, cache_path=tmp_path / f"{name}.sqlite", threads=1, **options)


@pytest.mark.parametrize(
    ("n", "shared", "start"),
    [
        (34, 0, 0),
        (34, 34, 32),  # the whole prompt held: the last two tokens read, not the last alone
        (34, 20, 20),
        (513, 512, 512),  # a fresh read ends with the last token alone (513 = 512 + 1): so does this one
        (513, 300, 0),
        (1025, 700, 512),
        (514, 513, 512),  # not 513: the last token alone; 512 reads two
        (1, 0, 0),
        (2, 2, 0),
    ],
)
def test_a_read_starts_where_its_chunks_are_a_fresh_reads(n, shared, start):
    assert read_start(n, shared) == start
    chunks = [min(512, n - s) for s in range(start, n, 512)]
    fresh = [min(512, n - s) for s in range(0, n, 512)]
    assert (chunks[-1] == 1) == (fresh[-1] == 1) and 1 not in chunks[:-1]
    assert reusable_after(n, start) == n - (fresh[-1] == 1)  # all but a last token read alone
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2 and common_prefix([], [1]) == 0


def test_llamacpp_computes_a_token_the_same_in_any_chunk_of_two_or_more(tmp_path):
    """What side-by-side decoding and the prompt cache rely on, checked on this build: every token read with
    others gives the same logits bit for bit whatever the chunks (a token read alone may not)."""
    needs_llama_cpp()
    model = llm(tmp_path, "probe")
    llama = model._load()
    cards = "\n".join(f"Place {j} | a quiet cafe | {3 + j % 3}.{j % 10} stars" for j in range(12))
    tokens = llama.tokenize(
        f"<|im_start|>user\n{cards}\nPick one.<|im_end|>\n".encode(), add_bos=False, special=True
    )

    def logits(splits):
        llama.reset()
        llama._ctx.kv_cache_clear()
        for i in range(len(splits) - 1):
            llama.eval(tokens[splits[i] : splits[i + 1]])
        return np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).copy()

    n = len(tokens)
    fresh = logits([0, n])
    for splits in ([0, 2, n], [0, n - 2, n], [0, 7, n // 2, n]):
        assert np.array_equal(logits(splits), fresh), splits
    model.close()


def test_side_by_side_answers_like_one_at_a_time(tmp_path):
    needs_llama_cpp()
    runs = {}
    for n in (1, 3):
        model = llm(tmp_path, f"p{n}", parallel=n)
        free = model.complete_batch(CONVS)
        json = model.complete_batch(CONVS, JSON_BUDGET, constraint=Constraint.json(SCHEMA))
        sampled = model.complete_batch(CONVS, SAMPLED)
        runs[n] = free, json, sampled, model.usage, model.describe()
        assert (len(model._sides) == 1) == (n > 1)
        model.close()
    (*one, one_usage, one_described), (*three, three_usage, three_described) = runs[1], runs[3]
    assert three == one  # texts, token counts and finish reasons
    assert (
        three_usage == one_usage
        and one_usage["requests"] == 3 * len(CONVS)
        and one_usage["constrained"] == len(CONVS)
    )
    assert "parallel" not in one_described and three_described["parallel"] == 3
    assert llm_identity(three_described) == llm_identity(one_described)  # a run resumes with another count
    again = llm(tmp_path, "p3", parallel=3)  # every reply in its cache
    assert again.complete_batch(CONVS) == one[0] and again.usage["cache_hits"] == len(CONVS)
    again.close()


def test_a_step_of_several_sequences_runs_on_the_reading_threads_and_answers_the_same(tmp_path):
    """At the default threads (one generating, every core reading a prompt), a step of several sequences runs on
    every core, as llama.cpp runs any call of more than one token: the replies are one thread's."""
    needs_llama_cpp()
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: generating and reading threads are the same")
    import llama_cpp

    one = llm(tmp_path, "t1")
    side = load_llm("smollm2:llamacpp", SHORT, cache_path=False, parallel=3)
    assert side.generate_batch(CONVS) == one.generate_batch(CONVS)
    ctx = side._sides[0]._ctx.ctx
    assert llama_cpp.llama_n_threads_batch(ctx) == os.cpu_count() > llama_cpp.llama_n_threads(ctx)
    one.close()
    side.close()


def test_held_cells_and_the_prompt_cache_change_what_is_read_not_the_replies(tmp_path):
    """The same prompts again (a state or a sequence holds each whole) and replies continued (a JSON repair's
    shape: the prompt holds the reply, whose cells were generated one token at a time)."""
    needs_llama_cpp()
    runs = {}
    for name, options in (("fresh", {"prompt_cache": 0}), ("cache", {}), ("side", {"parallel": 4})):
        model = load_llm("smollm2:llamacpp", SHORT, cache_path=False, threads=1, **options)
        with prefix_reuse():
            first = model.generate_batch(CONVS[:3])
            before = model.prompt_tokens_read
            again = model.generate_batch(CONVS[:3])
            read_again = model.prompt_tokens_read - before
            longer = model.generate_batch(
                [
                    c + [{"role": "assistant", "content": r}, {"role": "user", "content": "Shorter."}]
                    for c, r in zip(CONVS, first, strict=False)
                ]
            )
        runs[name] = first, again, longer, read_again
        model.close()
    fresh, cache, side = runs["fresh"], runs["cache"], runs["side"]
    assert cache[:3] == fresh[:3] == side[:3] and fresh[0] == fresh[1]
    assert cache[3] < fresh[3] and side[3] < fresh[3]  # held prompts were not read again


def test_one_request_too_long_leaves_the_others_answered(tmp_path):
    needs_llama_cpp()
    long = [{"role": "user", "content": "word " * 80}]
    model = llm(tmp_path, "err", parallel=2, context=64)
    with pytest.raises(LLMError, match="exceed context window of 64"):
        model.generate_batch([CONVS[1], long, CONVS[2]])
    assert model.usage["requests"] == 2  # the two that fit were answered, and cached
    assert model.generate_batch([CONVS[1], CONVS[2]]) and model.usage["cache_hits"] == 2
    model.close()


def test_side_by_side_on_two_copies(tmp_path):
    needs_llama_cpp()
    one = llm(tmp_path, "c1")
    two = llm(tmp_path, "c2", parallel=2, instances=2)
    assert two.generate_batch(CONVS) == one.generate_batch(CONVS)
    assert len(two._sides) == 2
    one.close()
    two.close()


def test_llm_parallel_flag_reaches_the_backend_and_is_checked(capsys):
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    assert llm_options(parser.parse_args([]))["parallel"] is None  # the backend's default
    assert llm_options(parser.parse_args(["--llm-parallel", "8"]))["parallel"] == 8
    with pytest.raises(SystemExit):
        parser.parse_args(["--llm-parallel", "0"])
    assert "--llm-parallel" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_parallel_must_be_a_positive_whole_number(bad):
    needs_llama_cpp()
    with pytest.raises(LLMConfigError, match="parallel=.*expected a positive integer"):
        load_llm("smollm2:llamacpp", cache_path=False, parallel=bad)
