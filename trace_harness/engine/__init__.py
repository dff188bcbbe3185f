"""The job engine: what the main job (`trace-bench demo`) and `trace-bench reproduce` are both built from.

    stage.py     Stage (a name, what it writes, when it is done, how it runs, the failures it may have) and
                 run_stages: in order, logged and timed, each skipped when done (so a rerun resumes), the
                 allowed failures collected while the others still run
    settings.py  the settings record beside a job's output: a rerun with other data-shaping settings is refused
    forks.py     tasks side by side in forked worker processes that inherit the parent's memory (no pickling
                 of shared state, no module-level global)
    manifest.py  what every job manifest holds: the environment, and each stage's output and completeness

docs/development.md ("A stage, the main job") shows how a stage and a job are defined.
"""
