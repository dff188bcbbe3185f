"""Simulated travelers for interactive evaluation: hidden goals, the acceptance check, and the `rules` and
`llm` simulators that talk to a system under test.

The hidden state lives here, in the harness above `baselines`, so no system can import it (tests/test_layers.py
checks it); the interaction loop (`trace_harness.protocols.interactive`) passes the system only what the traveler says.
"""
