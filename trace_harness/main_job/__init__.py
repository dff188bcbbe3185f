"""The main job, `trace-bench demo`: the whole benchmark on the built-in synthetic Yelp bundle, resumable.

    options.py   DemoConfig: the command's options
    layout.py    where the job puts everything under --out (the Space reads its folders from here)
    data.py      the data stages: synthetic bundle -> knowledge base -> dialogues -> release -> hydration, with
                 the statistics printed between them
    job.py       the job: the settings check, the data stages, then `trace-bench reproduce`'s stages of the
                 packaged config `demo` (the baselines on both pools, the leaderboard, the interactive runs),
                 the opt-in LLM step, the app
    llm_step.py  the opt-in LLM step (`--baselines all,llm`): the packaged config `demo_llm` on a seeded subset
    cli.py       the command

The runs themselves are `trace-bench reproduce`'s (trace_harness/reproduce/configs/demo.yaml, demo_llm.yaml),
run by the job engine (trace_harness/engine). docs/reproducing.md "The main job" is the user's page.
"""
