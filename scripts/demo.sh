#!/usr/bin/env bash
# Set up (if needed) and run the main job on the built-in synthetic Yelp bundle.
# Extra arguments go to `trace-bench demo` (try --help). Opt-in LLM step: `bash scripts/demo.sh --baselines all,llm`
# adds the six LLM baselines with the packaged SmolLM2 on a seeded 2-dialogue subset (docs/llm_baselines.md).
set -euo pipefail
# The commands the job prints at the end are spelled for the folder you ran this from (trace_bench/shell.py).
export TRACE_CALLER_DIR="${TRACE_CALLER_DIR:-$PWD}"
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
venv="${TRACE_VENV:-.venv}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
"$venv/bin/trace-bench" demo "$@"
