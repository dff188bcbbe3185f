"""trace_bench: the product's kernel, below every other package.

It holds only what every layer needs and nothing of the domain: the seed the paper fixes, the base class of
user-facing errors (`trace_bench.errors`), how printed commands are spelled (`trace_bench.shell`) and the root
`trace-bench` command (`trace_bench.cli`), which finds every sub-command through entry points and imports no
package above it. The layers, bottom to top (docs/development.md; tests/test_layers.py enforces them):

    trace_bench -> trace_llm -> trace_dataset -> trace_metrics -> baselines -> trace_harness -> spaces_app
"""

from __future__ import annotations

__version__ = "0.1.0"

SEED = 42  # Trace §5: "All dataset / evaluation sampling uses random.seed=42"

__all__ = ["SEED", "__version__"]
