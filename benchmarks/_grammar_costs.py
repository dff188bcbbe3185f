"""The grammar engines' cost for benchmarks/structured.py (`--engines`, `--llamacpp-cost`): not a benchmark of its
own (the underscore, like _common.py). The same three prompts per schema of the package
(trace_harness.constraints), decoded under each engine and free; what each figure means is in
benchmarks/structured.py's docstring and docs/llm.md ("Why xgrammar", "What llama.cpp's grammar costs").
"""

from __future__ import annotations

import time
from typing import Any

ENGINE_PROMPTS = ("a quiet cafe for working", "cheap sushi near the river", "a museum for children")


def llguidance_processor(tokenizer: Any, constraint: Any) -> Any:
    """A transformers logits processor over llguidance, for the comparison only (one row)."""
    import llguidance
    import llguidance.hf
    import llguidance.torch

    lltok = llguidance.hf.from_tokenizer(tokenizer)
    t = time.perf_counter()
    if constraint.kind == "json":
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            constraint.schema, defaults={"whitespace_flexible": False}
        )
    else:
        from llguidance.gbnf_to_lark import gbnf_to_lark

        grammar = llguidance.LLMatcher.grammar_from_lark(gbnf_to_lark(constraint.grammar))
    matcher = llguidance.LLMatcher(lltok, grammar)
    compile_s = time.perf_counter() - t
    mask = llguidance.torch.allocate_token_bitmask(1, lltok.vocab_size)
    state = {"started": False, "seconds": 0.0, "compile_s": compile_s}

    def processor(input_ids: Any, scores: Any) -> Any:
        t = time.perf_counter()
        if state["started"]:
            matcher.consume_token(int(input_ids[0, -1]))
        state["started"] = True
        llguidance.torch.fill_next_token_bitmask(matcher, mask, 0)
        llguidance.torch.apply_token_bitmask_inplace(scores, mask)
        state["seconds"] += time.perf_counter() - t
        return scores

    processor.state = state  # type: ignore[attr-defined]
    return processor


def engine_messages(constraint: Any, ask: str) -> list[dict[str, str]]:
    """The one-message conversation the engine comparisons send for a traveller's `ask`."""
    from trace_llm.jsonout import schema_instruction

    text = f"A traveller wants {ask}. Answer for the candidates P1 to P8 in Tampa."
    if constraint.kind == "json":
        text += "\n\n" + schema_instruction(constraint.schema)
    return [{"role": "user", "content": text}]


def reply_is_valid(constraint: Any, reply: str) -> bool:
    """Does a whole reply satisfy its constraint: the JSON schema, or CoRE's `<rating>N</rating>` parse?"""
    if constraint.kind != "json":
        from trace_metrics.core.factors import parse_rating

        return parse_rating(reply).status == "ok"
    from trace_llm.jsonout import parse_json_output

    try:
        parse_json_output(reply, constraint.schema)
    except ValueError:
        return False
    return True


def engines(names: list[str], threads: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    from trace_harness.constraints import package_constraints
    from trace_llm.grammar import GrammarCompiler
    from trace_llm.smollm2 import smollm2_model_dir

    torch.set_num_threads(threads)
    folder = smollm2_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    constraints = package_constraints()
    out: dict[str, Any] = {}
    for engine in ("xgrammar", "llguidance"):
        t = time.perf_counter()
        compiler = (
            GrammarCompiler(tokenizer, vocab_size=model.config.vocab_size) if engine == "xgrammar" else None
        )
        rows = {"tokenizer_setup_s": round(time.perf_counter() - t, 2) if compiler else None}
        for name in names:
            c = constraints[name]
            stats = {"replies": 0, "valid": 0, "tokens": 0, "decode_s": 0.0, "mask_s": 0.0, "compile_s": 0.0}
            for ask in ENGINE_PROMPTS:
                msgs = engine_messages(c, ask)
                inputs = tokenizer.apply_chat_template(
                    msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True
                )
                if compiler is not None:
                    t = time.perf_counter()
                    proc = compiler.processor(c, 1)
                    stats["compile_s"] += time.perf_counter() - t
                else:
                    proc = llguidance_processor(tokenizer, c)
                    stats["compile_s"] += proc.state["compile_s"]
                t = time.perf_counter()
                ids = model.generate(
                    **inputs,
                    max_new_tokens=300,
                    do_sample=False,
                    logits_processor=LogitsProcessorList([proc]),
                )
                stats["decode_s"] += time.perf_counter() - t
                stats["mask_s"] += proc.seconds if compiler is not None else proc.state["seconds"]
                new = ids[0, inputs["input_ids"].shape[1] :]
                stats["tokens"] += int(new.shape[0])
                reply = tokenizer.decode(new, skip_special_tokens=True)
                stats["replies"] += 1
                stats["valid"] += reply_is_valid(c, reply)
            stats["mask_ms_per_token"] = round(1000 * stats["mask_s"] / max(stats["tokens"], 1), 2)
            stats["mask_share_of_decoding"] = round(stats["mask_s"] / stats["decode_s"], 4)
            stats["compile_ms_mean"] = round(1000 * stats["compile_s"] / stats["replies"], 1)
            rows[name] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in stats.items()}
        out[engine] = rows
    return out


def _llama_reply(llama: Any, messages: list[dict], grammar: Any) -> tuple[str, int, float]:
    """(reply, completion tokens, decoding ms with the prompt's evaluation taken out) of one greedy request."""
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
    llama.reset()  # no prefix reuse between runs: every run evaluates its whole prompt
    started = time.perf_counter()
    out = llama.create_chat_completion(
        messages=messages, max_tokens=300, temperature=0.0, top_k=0, min_p=0.0, grammar=grammar
    )
    wall_ms = 1000 * (time.perf_counter() - started)
    prompt_ms = llama_cpp.llama_perf_context(llama._ctx.ctx).t_p_eval_ms
    return (
        out["choices"][0]["message"]["content"] or "",
        out["usage"]["completion_tokens"],
        wall_ms - prompt_ms,
    )


def _share(constrained: float, free: float) -> float | None:
    return round(1 - free / constrained, 4) if constrained else None


def _llama_schema_row(stock: Any, ours: Any, c: Any) -> dict[str, Any]:
    """One schema's figures: the product's sampler, llama-cpp-python's own and free decoding, same prompts."""
    from llama_cpp import LlamaGrammar

    from trace_llm.llamacpp import grammar_error, json_gbnf

    t = time.perf_counter()
    gbnf = json_gbnf(c.schema) if c.kind == "json" else c.grammar
    problem = grammar_error(stock, gbnf)
    if problem is not None:
        return {"error": problem}
    grammar = LlamaGrammar.from_string(gbnf, verbose=False)
    compile_s = time.perf_counter() - t
    steps_before, full_before = ours.grammar_counts()
    stats = dict.fromkeys(
        ("replies", "valid", "identical_replies", "tokens", "stock_tokens", "free_tokens"), 0
    )
    ms = dict.fromkeys(("decode_ms", "stock_decode_ms", "free_decode_ms"), 0.0)
    for ask in ENGINE_PROMPTS:
        messages = engine_messages(c, ask)
        reply, tokens, took = _llama_reply(ours, messages, grammar)
        stats["replies"] += 1
        stats["tokens"] += tokens
        ms["decode_ms"] += took
        stats["valid"] += reply_is_valid(c, reply)
        stock_reply, tokens, took = _llama_reply(stock, messages, grammar)
        stats["stock_tokens"] += tokens
        ms["stock_decode_ms"] += took
        stats["identical_replies"] += stock_reply == reply
        _, tokens, took = _llama_reply(stock, messages, None)
        stats["free_tokens"] += tokens
        ms["free_decode_ms"] += took
    steps, full = (a - b for a, b in zip(ours.grammar_counts(), (steps_before, full_before), strict=True))
    per_token = {k: ms[f"{k}decode_ms"] / max(stats[f"{k}tokens"], 1) for k in ("", "stock_", "free_")}
    return {
        **stats,
        **{k: round(v, 1) for k, v in ms.items()},
        "grammar_build_ms": round(1000 * compile_s, 1),
        "full_masks": full,
        "steps": steps,
        "ms_per_token_constrained": round(per_token[""], 2),
        "ms_per_token_stock_sampler": round(per_token["stock_"], 2),
        "ms_per_token_free": round(per_token["free_"], 2),
        "grammar_share_of_decoding": _share(per_token[""], per_token["free_"]),
        "stock_sampler_share_of_decoding": _share(per_token["stock_"], per_token["free_"]),
    }


def llamacpp_grammar_cost(names: list[str], threads: int) -> dict:
    """llama.cpp's grammar against free decoding, the same prompts as `engines`: milliseconds per generated
    token with the prompt's evaluation taken out (llama.cpp's own perf counter), for the product's greedy sampler
    (the grammar asked about the top token first: trace_llm/llama_greedy.py) and for llama-cpp-python's own
    grammar sampler (the whole vocabulary masked at every step); a grammar's share of decoding is
    1 - free / constrained. Greedy, 300 new tokens at most, one process."""
    import llama_cpp
    from llama_cpp import Llama

    from trace_harness.constraints import package_constraints
    from trace_llm.llama_greedy import greedy_grammar_llama_class
    from trace_llm.smollm2 import smollm2_gguf_path

    kwargs = dict(
        model_path=str(smollm2_gguf_path()),
        n_ctx=4096,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    stock, ours = Llama(**kwargs), greedy_grammar_llama_class()(**kwargs)
    constraints = package_constraints()
    rows = {name: _llama_schema_row(stock, ours, constraints[name]) for name in names}
    stock.close()
    ours.close()
    return {"llama_cpp_python": llama_cpp.__version__, "threads": threads, **rows}
