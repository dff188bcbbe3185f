#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
export TRACE_CALLER_DIR="${TRACE_CALLER_DIR:-$PWD}"
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
venv="${TRACE_VENV:-.venv}"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$venv/bin/python" -m pytest "$@"
