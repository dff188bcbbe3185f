"""trace_dataset: the Trace benchmark's data side.

Reads a Yelp Open Dataset bundle, builds the balanced knowledge base, generates dialogues, writes the
`[Q:N]` release and hydrates it, and loads everything with `datasets`. It sits on the LLM layer (`trace_llm`,
used by the generator's llm backend) and below the metrics, the systems, the harness and the Space.
"""

from __future__ import annotations

from trace_bench import __version__

__all__ = ["__version__", "load_trace"]


def __getattr__(name: str):
    # Lazy: `import trace_dataset` must stay cheap (the CLI imports it for --help).
    if name == "load_trace":
        from trace_dataset.loading import load_trace

        return load_trace
    raise AttributeError(f"module 'trace_dataset' has no attribute {name!r}")
