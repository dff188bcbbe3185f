"""Interactive evaluation: a simulated traveler talks to a system, and Trace's metrics score the live
conversation. `run.run_interactive` is the `trace` protocol, `sniprec.run_sniprec` SnipRec's own simulator
protocol, `cli` the `trace-bench interact` command. The travelers themselves (hidden goals, the rules and LLM
simulators) live in `trace_harness.protocols.interactive.simulator`.
"""
