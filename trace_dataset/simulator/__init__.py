"""Simulated travelers for interactive evaluation (issue 17): hidden goals, the acceptance check, and the
`rules` and `llm` simulators that talk to a system under test.

The hidden state lives here, below `baselines`, so nothing a system imports can read it; the interaction
loop (`baselines.interactive`) passes the system only what the traveler says.
"""
