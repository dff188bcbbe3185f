"""What CoRE costs per dialogue (LLM calls and prompt tokens, factors and debate apart) and how many dialogues/s
it scores against a local `transformers serve` with the packaged SmolLM2, at client concurrency 1 and 16.

    .venv/bin/python benchmarks/core.py                          # toy dialogues, 2 of them, 32 new tokens
    .venv/bin/python benchmarks/core.py --n 3 --max-new-tokens 64 --json out.json
    .venv/bin/python benchmarks/core.py --spec openai:http://127.0.0.1:8000/v1#MODEL   # a server already running

Concurrency 1 scores the dialogues one at a time, one request in flight; concurrency 16 scores them as one
batch (all their factor requests, then every debate round of all of them, at most 16 requests in flight).
The response cache is off, so both runs send every request. SmolLM2 rarely answers in the required form, so
its debates run all rounds with JSON repairs: the debate figures are an upper bound for a capable model, which
often agrees earlier (the paper: unanimity in 35-50% of the logs by round 4).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, timed  # noqa: E402


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=None, help="Trace data directory (default: the toy corpus)")
    p.add_argument(
        "--predictions", type=Path, default=None, help="predictions (default: the toy reference copy)"
    )
    p.add_argument("--n", type=int, default=2, help="dialogues (default 2)")
    p.add_argument(
        "--max-new-tokens", type=int, default=32, help="factor reply tokens (default 32; CoRE's is 1024)"
    )
    p.add_argument(
        "--debate-max-new-tokens", type=int, default=64, help="debate reply tokens (default 64; CoRE's 512)"
    )
    p.add_argument("--rounds", type=int, default=4, help="debate rounds (default 4)")
    p.add_argument("--max-retries", type=int, default=2, help="rating retries per factor (default 2)")
    p.add_argument("--max-repairs", type=int, default=2, help="JSON repairs per debate reply (default 2)")
    p.add_argument("--spec", default=None, help="an OpenAI-compatible server to use instead of starting one")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the started server (default 1)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    return p.parse_args(argv)


def _start_server(stack: ExitStack, tmp: Path, threads: int) -> tuple[str, float]:
    """A `transformers serve` of the packaged SmolLM2, stopped when `stack` closes: its spec and start seconds."""
    from trace_llm.local_server import transformers_serve
    from trace_llm.smollm2 import smollm2_model_dir

    server, start_s, _ = timed(
        lambda: stack.enter_context(
            transformers_serve(smollm2_model_dir(), log_path=tmp / "serve.log", threads=threads)
        )
    )
    return server.spec, start_s


def _score_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of `score_logs` from the command line: rounds, retries, repairs, decoding."""
    from trace_llm import DecodingSettings

    factor = DecodingSettings(max_new_tokens=args.max_new_tokens)
    return {
        "max_rounds": args.rounds,
        "max_retries": args.max_retries,
        "max_repairs": args.max_repairs,
        "factor_settings": factor,
        "debate_settings": factor.replace(max_new_tokens=args.debate_max_new_tokens),
    }


def _score_one_at_a_time(llm: Any, logs: list, prompts: Any, options: dict[str, Any]) -> tuple[list, float]:
    """Concurrency 1, one dialogue at a time: each dialogue's own calls, tokens and outcome, and the total wall."""
    from trace_metrics.core.scoring import score_logs

    per_dialogue = []
    wall_1 = 0.0
    for log in logs:
        stage: dict = {}
        (record,), wall, _ = timed(
            lambda log=log, stage=stage: score_logs(llm, [log], prompts, stage_usage=stage, **options)
        )
        wall_1 += wall
        per_dialogue.append(
            {
                "dialogue": log.log_id,
                "wall_s": round(wall, 1),
                "factor_calls": stage["factors"]["requests"],
                "factor_prompt_tokens": stage["factors"]["prompt_tokens"],
                "debate_calls": stage["debate"]["requests"],
                "debate_prompt_tokens": stage["debate"]["prompt_tokens"],
                "debate_rounds": record["debate"]["rounds"],
                "ratings_missing": record["n_missing"],
                "debate_json_repairs": stage["debate"]["json_repairs"],
                "debate_failed_messages": record["debate"]["n_failed_messages"],
                "overall": record["overall"],
            }
        )
    return per_dialogue, wall_1


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    """Score the dialogues at concurrency 1 and then 16 (the server, when started here, is stopped on return)."""
    from trace_llm import load_llm
    from trace_metrics.core.prompts import load_prompts
    from trace_metrics.core.runner import collect_logs
    from trace_metrics.core.scoring import score_logs
    from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        data = args.data or write_toy_data_dir(tmp / "trace")
        predictions = args.predictions or write_toy_predictions(tmp / "reference.jsonl")
        logs, _ = collect_logs(predictions, data, limit=args.n)
        spec, start_s = args.spec, 0.0
        if spec is None:
            spec, start_s = _start_server(stack, tmp, args.threads)
        prompts = load_prompts()
        options = _score_options(args)
        factor = options["factor_settings"]
        one = load_llm(spec, factor, cache_path=False, concurrency=1)
        per_dialogue, wall_1 = _score_one_at_a_time(one, logs, prompts, options)
        many = load_llm(spec, factor, cache_path=False, concurrency=16)
        _, wall_16, _ = timed(lambda: score_logs(many, logs, prompts, **options))
    return {
        "spec": spec,
        "start_s": start_s,
        "n": len(logs),
        "per_dialogue": per_dialogue,
        "wall_1": wall_1,
        "wall_16": wall_16,
    }


def _figures(args: argparse.Namespace, run: dict[str, Any]) -> dict[str, Any]:
    per_dialogue, n = run["per_dialogue"], run["n"]
    keys = ("factor_calls", "factor_prompt_tokens", "debate_calls", "debate_prompt_tokens")
    mean = {k: sum(d[k] for d in per_dialogue) / len(per_dialogue) for k in keys}
    return {
        "machine": machine(),
        "llm": run["spec"] if args.spec else "SmolLM2-135M-Instruct via transformers serve",
        "server_threads": None if args.spec else args.threads,
        "server_start_s": round(run["start_s"], 1),
        "n_dialogues": n,
        "max_new_tokens": args.max_new_tokens,
        "debate_max_new_tokens": args.debate_max_new_tokens,
        "rounds": args.rounds,
        "max_retries": args.max_retries,
        "max_repairs": args.max_repairs,
        "per_dialogue": per_dialogue,
        "mean_per_dialogue": mean,
        "dialogues_per_s": {
            "concurrency_1": round(n / run["wall_1"], 5),
            "concurrency_16": round(n / run["wall_16"], 5),
        },
        "wall_s": {"concurrency_1": round(run["wall_1"], 1), "concurrency_16": round(run["wall_16"], 1)},
    }


def _print_figures(args: argparse.Namespace, figures: dict[str, Any], wall_1: float, wall_16: float) -> None:
    print(f"CoRE cost and throughput: {figures['llm']}; {machine()}")
    print(
        f"{figures['n_dialogues']} toy dialogue(s); factor replies <= {args.max_new_tokens} tokens, debate "
        f"replies <= {args.debate_max_new_tokens}, <= {args.rounds} rounds, {args.max_retries} rating retries, "
        f"{args.max_repairs} JSON repairs; response cache off"
    )
    print(
        "per dialogue (mean): factors {factor_calls:.1f} calls, {factor_prompt_tokens:.0f} prompt tokens; "
        "debate {debate_calls:.1f} calls, {debate_prompt_tokens:.0f} prompt tokens".format(
            **figures["mean_per_dialogue"]
        )
    )
    for d in figures["per_dialogue"]:
        print(f"  {d['dialogue']}: {d}")
    print(
        f"dialogues/s: concurrency 1 {figures['dialogues_per_s']['concurrency_1']:.4f} "
        f"({wall_1:.0f} s), concurrency 16 {figures['dialogues_per_s']['concurrency_16']:.4f} ({wall_16:.0f} s)"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the started server on `kill`, too
    run = _measure(args)
    figures = _figures(args, run)
    _print_figures(args, figures, run["wall_1"], run["wall_16"])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
