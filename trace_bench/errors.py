"""The one base class of errors a user can fix: bad input, a missing file or package, a server that refuses.

The root command (`trace_bench.cli`) prints such an error as one line, `trace-bench: error: MESSAGE`, and exits
with status 2; anything else is a bug and keeps its traceback. Each layer derives its own errors from it
(`trace_llm.LLMError`, `trace_dataset.io.TraceDataError`, ...), so the message is the only thing a user sees.
"""

from __future__ import annotations


class TraceBenchError(Exception):
    """An error the user can act on; its message names the input (file, line, field, option) and what was expected."""


__all__ = ["TraceBenchError"]
