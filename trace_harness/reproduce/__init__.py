"""`trace-bench reproduce CONFIG`: the paper's tables from one config, live, as a dry run, or through batch files.

    config.py    the config file (YAML or TOML), checked whole; configs/ holds the commented examples (and the
                 main job's two, demo and demo_llm)
    fields.py    reading the file, and typed reads from its mappings
    jobs.py      the jobs a config asks for (closed and open runs, interactive, CoRE, judge, NLI), when each is
                 done, and their context
    collect.py   the requests the jobs still need, found with LLM stand-ins that never send
    dryrun.py    --dry-run: requests, tokens and cost per part
    execute.py   the jobs as stages of the job engine (trace_harness/engine), through the package's own
                 functions; the leaderboard (judge and NLI inside it)
    run.py       the live path: plan, preflight, jobs with progress bars, leaderboard, manifest
    rounds.py    the batch path: export rounds of OpenAI batch files, import the answers, finish from the cache
    manifest.py  OUT/manifest.json
    nli.py       one process of a multi-process (accelerate) NLI pass
    cli.py       the command

docs/reproducing.md is the user's page.
"""
