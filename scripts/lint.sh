#!/usr/bin/env bash
# Style and type checks CI runs beside the tests: ruff's lint rules, ruff's formatter (check only) and mypy
# over the seven product packages ([tool.mypy] in pyproject.toml). Set up first with `bash scripts/setup.sh test`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${TRACE_VENV:-.venv}"
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .
"$venv/bin/mypy"
