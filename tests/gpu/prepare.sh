#!/usr/bin/env bash
# Here, before a GPU run: the wheels the app needs beyond what a GPU machine's image has (Streamlit, Plotly, Babel,
# segno and their dependencies), for that machine's Python, into .gpu-wheels/ (ignored by git). A machine that
# reaches no package registry installs them from there (tests/gpu/check.sh); carry the folder with the run.
# Usage: bash tests/gpu/prepare.sh [PYTHON_VERSION]   (default 3.12)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${1:-3.12}"
rm -rf .gpu-wheels && mkdir -p .gpu-wheels
pip download -q -d .gpu-wheels --only-binary=:all: --python-version "$PY" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  "$(grep '^streamlit==' requirements.txt)" "$(grep '^plotly==' requirements.txt)" \
  "$(grep '^Babel==' requirements.txt | cut -d' ' -f1)" "$(grep '^segno==' requirements.txt)"
# numpy, pandas, pillow, pyarrow and tzdata are on the GPU image already; leaving them out keeps the carry small.
rm -f .gpu-wheels/numpy-* .gpu-wheels/pandas-* .gpu-wheels/pillow-* .gpu-wheels/pyarrow-* .gpu-wheels/tzdata-*
du -sh .gpu-wheels
