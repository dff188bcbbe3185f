"""The teacher-forced protocol (`trace-bench run`): every system turn of a split, the reference history given.

runner.py   run_baseline: predictions written resumably, the run metadata beside them
resume.py   the rows an earlier invocation left, checked against the ledger in the metadata
cli.py      the `trace-bench run` command
"""
