"""Trace run from other harnesses: the Inspect AI tasks (`inspect_eval/`, `inspect eval trace_bench/trace`).

An integration drives the benchmark's own pieces (the turn rows, the LLM Zero-Shot request and reading, the
metric registry, the interaction loop) from another framework; it defines no protocol or metric of its own.
The framework itself is an optional extra, imported only inside its integration package.
"""
