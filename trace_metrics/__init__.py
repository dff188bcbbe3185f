"""trace_metrics: Trace's metrics as plain functions (`trace_metrics.lib`), a registry of metric specs
(`trace_metrics.specs`), `evaluate` modules (`trace_metrics/<name>/<name>.py`) and the `trace-bench evaluate`
command.

    import evaluate, trace_metrics
    accuracy = evaluate.load(trace_metrics.module_path("accuracy"))
    row = trace_metrics.evaluate_run("data/trace", "preds.jsonl", split="test", pool="closed")
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODULES", "evaluate_run", "module_path"]

MODULES: tuple[str, ...] = (
    "accuracy",
    "grounding",
    "text",
    "practical",
    "recovery",
    "trace_suite",
    "entailment",
    "llm_judge",
    "human",
    "core",
    "collab_rec",
)


def module_path(name: str) -> str:
    """Absolute path of an evaluate module folder, for `evaluate.load(module_path("grounding"))`."""
    if name not in MODULES:
        raise ValueError(f"unknown trace metric module {name!r}; expected one of {MODULES}")
    path = Path(__file__).resolve().parent / name
    if not (path / f"{name}.py").is_file():
        raise FileNotFoundError(f"metric module {name!r} is not installed at {path}")
    return str(path)


def __getattr__(name: str):
    # Lazy: the CLI imports this package for `--help`, which must stay fast.
    if name == "evaluate_run":
        from trace_metrics.lib.suite import evaluate_run

        return evaluate_run
    raise AttributeError(f"module 'trace_metrics' has no attribute {name!r}")
