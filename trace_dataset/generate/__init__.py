"""The five-stage dialogue generator (paper §2.2, App. C, G, I, M): scenario -> candidates -> generation
(template or LLM backend) -> validation -> difficulty, writing a Trace data directory.

`generate_corpus` is imported on first use, so that `trace-bench --help` (which imports the `corpus`
command's module, a submodule of this package) does not load numpy, rapidfuzz and the pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trace_dataset.generate.pipeline import generate_corpus

__all__ = ["generate_corpus"]


def __getattr__(name: str) -> Any:
    if name == "generate_corpus":
        from trace_dataset.generate.pipeline import generate_corpus

        return generate_corpus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
