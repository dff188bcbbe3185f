#!/usr/bin/env bash
# Set up (if needed) and run the main job on the built-in synthetic Yelp bundle.
# Extra arguments go to `trace-bench demo` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
venv="${TRACE_VENV:-.venv}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
"$venv/bin/trace-bench" demo "$@"
