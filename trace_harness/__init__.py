"""trace_harness: what runs systems against the data, the simulator and the metrics, above every system.

    protocols/      how systems meet the data: teacher_forced/ (`trace-bench run`), interactive/
                    (`trace-bench interact`, the simulated travellers in interactive/simulator/), collab_rec/
    leaderboard/    `trace-bench leaderboard`: the paper's tables from runs
    reproduce/      `trace-bench reproduce`: the paper's tables from one config
    fallbacks.py    the one report of fallbacks and failures every table reads
    constraints.py  the JSON constraints the package sends, for the structured-output checks

The simulator lives here, above `baselines`, so that no system can import it (tests/test_layers.py checks
that, and every other import direction, on each commit).
"""
