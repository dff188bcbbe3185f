"""Collab-REC figures: the moderator's speed without an LLM, and the LLM calls a query costs.

    .venv/bin/python benchmarks/collab_rec.py --kb ../shared/collab_rec/eu-cities-database.csv \
        --queries ../shared/collab_rec/queries.csv                    # moderator rounds/s (scripted agents)
    .venv/bin/python benchmarks/collab_rec.py ... --runs /tmp/collab_runs/sasi /tmp/collab_runs/mami_a
                                                                      # calls, tokens, rounds per query of runs

Moderator: every query runs T_max = 10 rounds (stopping "fixed") with three scripted agents that follow App. D's
revision rule (keep 7 of the collective offer, replace 3 with seeded picks from the rest, 10% of names outside
the catalogue), so the figure is the moderator's own cost per round (grounding, Eq. 3-12) on the 200-city
catalogue. Runs: `agent_calls_per_query` and the LLM layer's token counts from each run's metrics.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from pathlib import Path

# Run as a script, this folder comes first on sys.path and benchmarks/baselines.py would shadow the `baselines`
# package: drop the folder from the path and load the shared helpers by file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
_spec = importlib.util.spec_from_file_location("_bench_common", _HERE / "_common.py")
_common = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_common)  # type: ignore[union-attr]
machine, timed = _common.machine, _common.timed


def scripted(seed: int):
    def propose(requests):
        out = []
        for task, agent, mod in requests:
            rng = random.Random(f"{seed}:{task.id}:{agent}:{mod.round}")
            free = [c for c in task.catalogue if c not in mod.rejected and c not in mod.offer]
            keep = list(mod.offer)[:7] if mod.offer else rng.sample(free, 7)
            extra = rng.sample([c for c in free if c not in keep], 3)
            items = keep + extra
            if rng.random() < 0.1:
                items[-1] = f"Atlantis {rng.randrange(100)}"
            out.append(items)
        return out

    return propose


def moderator_speed(kb_path: str, queries_path: str, repeat: int) -> dict:
    from baselines.collab_rec.catalogue import load_city_kb, load_queries
    from baselines.collab_rec.moderator import ModeratorConfig
    from baselines.collab_rec.negotiation import run_mami
    from trace_harness.protocols.collab_rec.run import city_tasks

    kb, queries = load_city_kb(kb_path), load_queries(queries_path)
    config = ModeratorConfig(stopping="fixed", t_max=10)
    tasks = city_tasks(kb, queries, config)
    best = None
    for i in range(repeat):
        results, wall, cpu = timed(lambda i=i: run_mami(tasks, scripted(i), config))
        rounds = sum(len(r.rounds) for r in results)
        if best is None or wall < best["wall_s"]:
            best = {
                "queries": len(tasks),
                "rounds": rounds,
                "wall_s": round(wall, 3),
                "cpu_s": round(cpu, 3),
                "rounds_per_s": round(rounds / wall, 1),
                "ms_per_round": round(1000 * wall / rounds, 3),
            }
    return best


def run_costs(dirs: list[str]) -> list[dict]:
    rows = []
    for d in dirs:
        metrics = json.loads((Path(d) / "metrics.json").read_text())
        counts, usage = metrics["counts"], (metrics.get("llm") or {}).get("usage_this_process", {})
        n = counts["queries"]
        rows.append(
            {
                "run": d,
                "strategy": metrics["strategy"],
                "queries": n,
                "agent_calls_per_query": counts["agent_calls_per_query"],
                "mean_rounds_run": (metrics.get("rounds") or {}).get("mean_rounds_run"),
                "failed_calls": counts["agent_failures"],
                "prompt_tokens_per_query": round(usage.get("prompt_tokens", 0) / n) if n else None,
                "completion_tokens_per_query": round(usage.get("completion_tokens", 0) / n) if n else None,
                "requests_this_process": usage.get("requests"),
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--repeat", type=int, default=3, help="best of N timings (default: 3)")
    p.add_argument("--runs", nargs="*", default=[], metavar="DIR", help="finished `collab-rec run` folders")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    args = p.parse_args()
    out = {
        "machine": machine(),
        "moderator": moderator_speed(args.kb, args.queries, args.repeat),
        "runs": run_costs(args.runs),
    }
    m = out["moderator"]
    print(f"machine: {out['machine']}")
    print(
        f"moderator (scripted agents, {m['queries']} queries x 10 rounds): {m['rounds']} rounds in {m['wall_s']} s "
        f"wall ({m['cpu_s']} s CPU): {m['rounds_per_s']} rounds/s, {m['ms_per_round']} ms/round"
    )
    for r in out["runs"]:
        print(
            f"{r['run']}: {r['strategy']}, {r['queries']} queries, {r['agent_calls_per_query']:.1f} agent calls/query"
            f", rounds {r['mean_rounds_run']}, failed calls {r['failed_calls']}, tokens/query "
            f"{r['prompt_tokens_per_query']} in + {r['completion_tokens_per_query']} out"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
