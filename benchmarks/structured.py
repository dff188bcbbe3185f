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
decoding, with whether their replies are identical (both comparisons: benchmarks/_grammar_costs.py). Figures
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trace_llm import LLM

_HERE = Path(__file__).resolve().parent
sys.path[:] = [
    p for p in sys.path if Path(p or ".").resolve() != _HERE
]  # baselines.py would shadow `baselines`


def _sibling(name: str) -> Any:
    """A module of benchmarks/ (`_common`, `_grammar_costs`), loaded by path: the folder stays off sys.path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench{name}", _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


JSON_BASELINES = ("llm_zero_shot", "rag_citation", "itinerary_llm", "memory_aug", "dst")


class Tally:
    """Wraps an LLM's generate_json_batch and complete_batch: first replies and their validity, per caller."""

    def __init__(self, llm: LLM):
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


def collab_rec_agents(llm: LLM, tally: Tally, data: Path, dialogues: int, out: Path) -> None:
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
    llm: LLM, tally: Tally, data: Path, dialogues: int, out: Path, factors: tuple[str, ...] | None
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


def _parser() -> argparse.ArgumentParser:
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
    return parser


def validity_runs(
    args: argparse.Namespace, options: dict[str, Any], kinds: tuple[str, ...]
) -> dict[str, Any]:
    """The validity figures of every `--modes` mode, in process and (`--server`) through llama-cpp-python's server."""
    factors = tuple(f.strip() for f in args.core_factors.split(",")) if args.core_factors else None
    modes = [m.strip() for m in args.modes.split(",")]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out["in_process"] = [
            validity(
                args.llm, m, args.data, args.dialogues, work / "in", options, factors, kinds, args.llm_cache
            )
            for m in modes
        ]
        if args.server:
            from trace_llm.smollm2 import smollm2_gguf_path

            proc, spec = llama_server(str(smollm2_gguf_path()), args.threads, work / "server.log")
            try:
                out["server"] = [
                    validity(spec, m, args.data, args.dialogues, work / "srv", {}, factors, kinds)
                    for m in modes
                ]
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    return out


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    if args.data is None and not (args.engines or args.llamacpp_cost):
        parser.error("give --data DIR (validity), --engines and/or --llamacpp-cost")
    options: dict[str, Any] = {"threads": args.threads, **dict(args.llm_option)}
    report: dict[str, Any] = {
        "machine": _sibling("_common").machine(),
        "threads": args.threads,
        "llm_options": options,
    }
    names = [n.strip() for n in args.engine_constraints.split(",")]
    if args.engines:
        report["engines"] = _sibling("_grammar_costs").engines(names, args.threads)
    if args.llamacpp_cost:
        report["llamacpp_grammar"] = _sibling("_grammar_costs").llamacpp_grammar_cost(names, args.threads)
    if args.data is not None:
        kinds = tuple(k.strip() for k in args.kinds.split(","))
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            parser.error(f"--kinds: unknown {', '.join(unknown)}; expected some of {', '.join(KINDS)}")
        report.update(validity_runs(args, options, kinds))
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
