"""trace_harness: what runs systems against the data, the simulator and the metrics, above every system.

    runner.py, resume.py, params.py, cli.py   `trace-bench run`: a registered system over a split, resumable
    interactive/                              `trace-bench interact`: the `trace` and `sniprec` protocols
      simulator/                              the simulated travelers and their hidden goals
    leaderboard/                              `trace-bench leaderboard`: the paper's tables from runs
    collab_rec/                               `trace-bench collab-rec`: Collab-REC's own benchmark

The simulator lives here, above `baselines`, so that no system can import it (tests/test_layers.py checks
that, and every other import direction, on each commit).
"""
