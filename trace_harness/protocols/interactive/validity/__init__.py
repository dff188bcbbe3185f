"""How far to trust the simulated traveller: the simulator report of every `trace` run and the comparison of
simulators (docs/interactive.md, "How far to trust the simulated traveller").

    leaks            the traveller's utterances that name or quote a target the system had not shown
    counterfactual   the deliberately bad systems (random_pick, contrary) on the same travellers
    report           OUT/simulator_report.json and .md: the checks, their intervals and verdicts
    compare          `trace-bench interact validity RUN ...`: Kendall tau between the rankings of systems
                     that two simulators (or two seeds) give
"""
