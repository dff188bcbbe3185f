"""Structured outputs with the packaged SmolLM2: the share of schema-valid FIRST answers with and without
constrained decoding, on the package's real requests, and what the constraint costs per token.

    .venv/bin/python benchmarks/structured.py --data DIR                    # in process (smollm2), both modes
    .venv/bin/python benchmarks/structured.py --data DIR --server           # + through llama-cpp-python's server
    .venv/bin/python benchmarks/structured.py --data DIR --kinds dst --dialogues 22 --llm-cache FILE  # one caller
    .venv/bin/python benchmarks/structured.py --engines                     # xgrammar against llguidance (hf)
    .venv/bin/python benchmarks/structured.py --llamacpp-cost --threads 1   # llama.cpp's grammar's cost

Validity: the five JSON-answering LLM baselines (llm_zero_shot, rag_citation, itinerary_llm, memory_aug, dst),
Collab-REC's agents (its Trace pipeline, SASI: one agent call a turn) and CoRE's factor ratings run on the seeded `--dialogues`-dialogue
subset of the test split with no repair or retry (`json_repairs=0`, `max_repairs=0`, `max_retries=0`), once
with `--structured prompt` and once with `auto`; every first reply is checked against its schema (CoRE: the
`<rating>N</rating>` parse). Goal: >= 99% valid with constraints for every kind. `--kinds` picks the callers
(CoRE rates Zero-Shot's dialogues, so `core_factor` runs Zero-Shot untallied); `--llm-cache FILE` keeps the
replies, so the same command resumes an interrupted run, and a larger `--dialogues` reuses a smaller run's
replies (the seeded subsets are nested).

Cost: decoding seconds per completion token, constrained against free, in process (llama.cpp: the grammar's
share of decoding; hf: the logits processor's own time, measured directly) and through the server.

`--engines` compares the two grammar engines that install from wheels here on the hf path: compile time,
mask time per token, mask share of decoding, and whether the replies validate (what trace_llm.grammar chose
by). `--llamacpp-cost` measures the default runtime's constraint the same way, per generated token with the
prompt's evaluation taken out, on the same prompts: the product's greedy sampler (the grammar asked about the
top token first, trace_llm/llama_greedy.py) and llama-cpp-python's own grammar sampler, each against free
decoding, with whether their replies are identical. Figures
go to stdout as JSON, with the machine (load average included: wall times on a shared machine are
inflated, CPU seconds much less).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [
    p for p in sys.path if Path(p or ".").resolve() != _HERE
]  # baselines.py would shadow `baselines`


def _machine() -> str:
    """benchmarks/_common.py's machine line, loaded by path (the folder itself stays off sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_common", _HERE / "_common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.machine()


JSON_BASELINES = ("llm_zero_shot", "rag_citation", "itinerary_llm", "memory_aug", "dst")


class Tally:
    """Wraps an LLM's generate_json_batch and complete_batch: first replies and their validity, per caller."""

    def __init__(self, llm: Any):
        self.llm = llm
        self.kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"first_answers": 0, "valid": 0})
        self.label = ""
        self.decode_s = 0.0
        self.tokens = 0
        original = llm.generate_json_batch
        complete = llm.complete_batch

        def generate_json_batch(conversations, schema, settings=None, max_repairs=2):
            t, before = time.perf_counter(), llm.usage["completion_tokens"]
            out = original(conversations, schema, settings, max_repairs=0)
            self.decode_s += time.perf_counter() - t
            self.tokens += llm.usage["completion_tokens"] - before
            kind = self.kinds[self.label or "json"]
            kind["first_answers"] += len(out)
            kind["valid"] += sum(not isinstance(v, Exception) for v in out)
            return out

        def complete_batch(conversations, settings=None, constraint=None):
            t, before = time.perf_counter(), llm.usage["completion_tokens"]
            out = complete(conversations, settings, constraint)
            self.decode_s += time.perf_counter() - t
            self.tokens += llm.usage["completion_tokens"] - before
            return out

        llm.generate_json_batch = generate_json_batch
        llm.complete_batch = complete_batch


KINDS = (*JSON_BASELINES, "collab_rec", "core_factor")


def validity(
    spec: str,
    mode: str,
    data: Path,
    dialogues: int,
    work: Path,
    options: dict[str, Any],
    core_factors: tuple[str, ...] | None = None,
    kinds: tuple[str, ...] = KINDS,
    cache: Path | None = None,
) -> dict:
    """First replies of the `kinds` of callers on the seeded `dialogues`-dialogue subset of the test split.

    `cache`: a response cache (one file per mode, beside it), so that an interrupted run resumes: cached
    replies are the same first replies and are checked again. The seeded subsets are nested (`random.sample`
    draws the same first dialogues for a larger n), so a cache serves a larger run's first dialogues too."""
    from baselines.llm.common import decoding
    from trace_harness.protocols.teacher_forced.runner import run_baseline
    from trace_llm import load_llm

    cache_path = cache.with_name(f"{cache.stem}-{mode}{cache.suffix}") if cache else False
    llm = load_llm(spec, decoding(), cache_path=cache_path, structured=mode, **options)
    tally = Tally(llm)
    out = work / mode
    for name in JSON_BASELINES:
        if name not in kinds and not (name == "llm_zero_shot" and "core_factor" in kinds):
            continue
        tally.label = name if name in kinds else "untallied"  # CoRE rates Zero-Shot's dialogues
        run_baseline(
            name,
            data,
            out / f"{name}.jsonl",
            subset=dialogues,
            progress=False,
            params={"llm": llm, "json_repairs": 0},
            overwrite=True,
        )
        if name in kinds:  # partial figures
            print(json.dumps({mode: {name: tally.kinds[name]}}), file=sys.stderr, flush=True)
    tally.kinds.pop("untallied", None)
    if "collab_rec" in kinds:
        collab_rec_agents(llm, tally, data, dialogues, out)
    if "core_factor" in kinds:
        core_factor_ratings(llm, tally, data, dialogues, out, core_factors)
    report = {
        "mode": mode,
        "spec": spec,
        "dialogues": dialogues,
        "kinds": {
            k: {**v, "valid_share": round(v["valid"] / v["first_answers"], 4) if v["first_answers"] else None}
            for k, v in tally.kinds.items()
        },
        "usage": llm.usage,
        "seconds_per_completion_token": round(tally.decode_s / tally.tokens, 4) if tally.tokens else None,
    }
    llm.close()
    return report


def collab_rec_agents(llm: Any, tally: Tally, data: Path, dialogues: int, out: Path) -> None:
    """Collab-REC's Trace pipeline; its run summary counts the agent calls and the failed ones."""
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    tally.label = "collab_rec agent"  # SASI: one agent call per turn, the agents' schema (MAMI asks the same)
    meta = run_baseline(
        "collab_rec",
        data,
        out / "collab_rec.jsonl",
        subset=dialogues,
        progress=False,
        params={"llm": llm, "max_repairs": 0, "strategy": "sasi"},
        overwrite=True,
    )
    rows = (meta.get("summary") or {}).get("rows") or {}
    tally.kinds["collab_rec agent"] = {
        "first_answers": rows.get("agent_calls", 0),
        "valid": rows.get("agent_calls", 0) - rows.get("agent_failures", 0),
    }
    print(json.dumps({"collab_rec agent": tally.kinds["collab_rec agent"]}), file=sys.stderr, flush=True)


def core_factor_ratings(
    llm: Any, tally: Tally, data: Path, dialogues: int, out: Path, factors: tuple[str, ...] | None
) -> None:
    """CoRE's factor ratings of the Zero-Shot run's dialogues, checked by CoRE's `<rating>N</rating>` parse."""
    from trace_harness.protocols.teacher_forced.runner import meta_path
    from trace_metrics.core.factors import parse_rating, rate_factors
    from trace_metrics.core.prompts import FACTOR_IDS, load_prompts
    from trace_metrics.core.runner import collect_logs

    subset_dir = json.loads(meta_path(out / "llm_zero_shot.jsonl").read_text())["subset"]["data_dir"]
    logs, _ = collect_logs(out / "llm_zero_shot.jsonl", subset_dir, limit=dialogues)
    tally.label = "core factor"
    results = rate_factors(
        llm,
        logs,
        load_prompts(),
        max_retries=0,
        factors=factors or FACTOR_IDS,
        settings=llm.settings.replace(max_new_tokens=1024),
    )
    ratings = [r for per_log in results for r in per_log.values()]
    tally.kinds["core factor"] = {
        "first_answers": len(ratings),
        "valid": sum(parse_rating(r["rationale"]).status == "ok" for r in ratings),
    }


def llama_server(gguf: str, threads: int | None, log: Path):
    """`python -m llama_cpp.server` on a free port serving the packaged GGUF; returns (process, spec)."""
    import httpx

    from trace_llm.local_server import free_port

    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        gguf,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--model_alias",
        "smollm2",
    ]
    if threads:
        cmd += ["--n_threads", str(threads)]
    proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return proc, f"openai:http://127.0.0.1:{port}/v1#smollm2"
        except httpx.TransportError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"llama_cpp.server did not start; see {log}")


# ---- the engine comparison (hf path) -------------------------------------------------------------------
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


def llamacpp_grammar_cost(names: list[str], threads: int) -> dict:
    """llama.cpp's grammar against free decoding, the same prompts as `engines`: milliseconds per generated
    token with the prompt's evaluation taken out (llama.cpp's own perf counter), for the product's greedy sampler
    (the grammar asked about the top token first: trace_llm/llama_greedy.py) and for llama-cpp-python's own
    grammar sampler (the whole vocabulary masked at every step); a grammar's share of decoding is
    1 - free / constrained. Greedy, 300 new tokens at most, one process."""
    import llama_cpp
    from llama_cpp import Llama, LlamaGrammar

    from trace_harness.constraints import package_constraints
    from trace_llm.llama_greedy import greedy_grammar_llama_class
    from trace_llm.llamacpp import grammar_error, json_gbnf
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

    def run(llama: Any, messages: list[dict], grammar: Any) -> tuple[str, int, float]:
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

    def share(constrained: float, free: float) -> float | None:
        return round(1 - free / constrained, 4) if constrained else None

    rows: dict[str, Any] = {}
    for name in names:
        c = constraints[name]
        t = time.perf_counter()
        gbnf = json_gbnf(c.schema) if c.kind == "json" else c.grammar
        problem = grammar_error(stock, gbnf)
        if problem is not None:
            rows[name] = {"error": problem}
            continue
        grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        compile_s = time.perf_counter() - t
        steps_before, full_before = ours.grammar_counts()
        stats = dict.fromkeys(
            ("replies", "valid", "identical_replies", "tokens", "stock_tokens", "free_tokens"), 0
        )
        ms = dict.fromkeys(("decode_ms", "stock_decode_ms", "free_decode_ms"), 0.0)
        for ask in ENGINE_PROMPTS:
            messages = engine_messages(c, ask)
            reply, tokens, took = run(ours, messages, grammar)
            stats["replies"] += 1
            stats["tokens"] += tokens
            ms["decode_ms"] += took
            stats["valid"] += reply_is_valid(c, reply)
            stock_reply, tokens, took = run(stock, messages, grammar)
            stats["stock_tokens"] += tokens
            ms["stock_decode_ms"] += took
            stats["identical_replies"] += stock_reply == reply
            _, tokens, took = run(stock, messages, None)
            stats["free_tokens"] += tokens
            ms["free_decode_ms"] += took
        steps, full = (a - b for a, b in zip(ours.grammar_counts(), (steps_before, full_before), strict=True))
        per_token = {k: ms[f"{k}decode_ms"] / max(stats[f"{k}tokens"], 1) for k in ("", "stock_", "free_")}
        rows[name] = {
            **stats,
            **{k: round(v, 1) for k, v in ms.items()},
            "grammar_build_ms": round(1000 * compile_s, 1),
            "full_masks": full,
            "steps": steps,
            "ms_per_token_constrained": round(per_token[""], 2),
            "ms_per_token_stock_sampler": round(per_token["stock_"], 2),
            "ms_per_token_free": round(per_token["free_"], 2),
            "grammar_share_of_decoding": share(per_token[""], per_token["free_"]),
            "stock_sampler_share_of_decoding": share(per_token["stock_"], per_token["free_"]),
        }
    stock.close()
    ours.close()
    return {"llama_cpp_python": llama_cpp.__version__, "threads": threads, **rows}


def main() -> None:
    from trace_harness.protocols.params import key_value_param

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, help="a Trace data directory (validity runs)")
    parser.add_argument(
        "--dialogues", type=int, default=2, help="test dialogues of the seeded subset (default: 2)"
    )
    parser.add_argument("--llm", default="smollm2", help="in-process model (default: smollm2)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of the model (default: 1)")
    parser.add_argument(
        "--modes", default="prompt,auto", help="structured modes to compare (default: prompt,auto)"
    )
    parser.add_argument(
        "--llm-option",
        action="append",
        default=[],
        type=key_value_param,
        metavar="KEY=VALUE",
        help="an option of the in-process model, e.g. batch_size=64 or dtype=float32 (hf); VALUE read as JSON "
        "where it parses, else a string; repeatable",
    )
    parser.add_argument("--server", action="store_true", help="also through llama-cpp-python's server (auto)")
    parser.add_argument(
        "--engines", action="store_true", help="compare xgrammar and llguidance on the hf path"
    )
    parser.add_argument(
        "--llamacpp-cost",
        action="store_true",
        help="llama.cpp's grammar against free decoding: the product's sampler and llama-cpp-python's own "
        "(ms per token, the grammar's share, identical replies)",
    )
    parser.add_argument(
        "--engine-constraints", default="llm_baselines.ranking,judge.ratings,dst.delta,collab_rec.agent"
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help=f"callers whose first replies are checked (default: all: {','.join(KINDS)})",
    )
    parser.add_argument(
        "--llm-cache",
        type=Path,
        default=None,
        help="a response cache (one file per mode beside it): rerun the same command to resume (default: none)",
    )
    parser.add_argument("--core-factors", default=None, help="CoRE factors to rate (default: all twelve)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    options: dict[str, Any] = {"threads": args.threads, **dict(args.llm_option)}
    report: dict[str, Any] = {"machine": _machine(), "threads": args.threads, "llm_options": options}
    if args.engines:
        report["engines"] = engines([n.strip() for n in args.engine_constraints.split(",")], args.threads)
    if args.llamacpp_cost:
        names = [n.strip() for n in args.engine_constraints.split(",")]
        report["llamacpp_grammar"] = llamacpp_grammar_cost(names, args.threads)
    if args.data is not None:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            factors = tuple(f.strip() for f in args.core_factors.split(",")) if args.core_factors else None
            kinds = tuple(k.strip() for k in args.kinds.split(","))
            unknown = sorted(set(kinds) - set(KINDS))
            if unknown:
                parser.error(f"--kinds: unknown {', '.join(unknown)}; expected some of {', '.join(KINDS)}")
            report["in_process"] = [
                validity(
                    args.llm,
                    m.strip(),
                    args.data,
                    args.dialogues,
                    work / "in",
                    options,
                    factors,
                    kinds,
                    args.llm_cache,
                )
                for m in args.modes.split(",")
            ]
            if args.server:
                from trace_llm.smollm2 import smollm2_gguf_path

                proc, spec = llama_server(str(smollm2_gguf_path()), args.threads, work / "server.log")
                try:
                    report["server"] = [
                        validity(spec, m.strip(), args.data, args.dialogues, work / "srv", {}, factors, kinds)
                        for m in args.modes.split(",")
                    ]
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
    elif not (args.engines or args.llamacpp_cost):
        parser.error("give --data DIR (validity), --engines and/or --llamacpp-cost")
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
