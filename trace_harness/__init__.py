"""trace_harness: what runs systems against the data, the simulator and the metrics, above every system.

    protocols/                                how systems meet the data or a simulated traveller
      teacher_forced/                         `trace-bench run`: a registered system over a split, resumable
      interactive/                            `trace-bench interact`: the `trace` and `sniprec` protocols
        simulator/                            the simulated travelers and their hidden goals
      collab_rec/                             `trace-bench collab-rec`: Collab-REC's own benchmark
    leaderboard/                              `trace-bench leaderboard`: the paper's tables from runs
    engine/                                   the job engine: stages, their runner, the settings record, workers
    reproduce/                                `trace-bench reproduce`: the paper's parts from one config
    main_job/                                 `trace-bench demo`: the data stages, then reproduce's `demo` config
    fallbacks.py                              the one report of fallbacks and failures every table reads
    constraints.py                            the JSON constraints the package sends, for the structured-output checks

The simulator lives here, above `baselines`, so that no system can import it (tests/test_layers.py checks
that, and every other import direction, on each commit).
"""
