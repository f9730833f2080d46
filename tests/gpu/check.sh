#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: is rnnlab's accelerator promise true? In at most 8 minutes (RNNLAB_GPU_CHECK_S),
# everything written to one folder (default gpu-check/, or the first argument), with summary.txt listing each step:
#   1. the CUDA plugin as README says (where a package registry is reachable; else the JAX the machine has), and
#      the app's own packages (from .gpu-wheels/ when carried: tests/gpu/prepare.sh makes it);
#   2. jax.devices() and the versions;
#   3. the GPU tier of the suite (tests marked gpu) and the tests that hold the fused cells and the log-scaled probe
#      to Flax's cells and to 60-digit arithmetic, now on the GPU;
#   4. every preset's lesson checked in numbers (tests/test_presets.py, its slow tests included);
#   5. python -m rnnlab.bench --quick (training step against PyTorch's cuDNN cells, probe, sweep, first chart);
#   6. a class of 30 with the protocol client against `streamlit run app.py` on the GPU: all on the first preset's
#      link, then half on runs of their own.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-${OUT:-gpu-check}}"
mkdir -p "$OUT"
LIMIT="${RNNLAB_GPU_CHECK_S:-480}"
START=$(date +%s)
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
left() { echo $((LIMIT - ($(date +%s) - START))); }
note() { echo "$*" | tee -a "$SUMMARY"; }
step() {  # step NAME SECONDS COMMAND...: run COMMAND with at most SECONDS (less if the whole check runs out)
  local name=$1 secs=$2 budget t0 rc
  shift 2
  budget=$(left)
  ((budget > secs)) && budget=$secs
  if ((budget < 15)); then note "$name: skipped, no time left"; return; fi
  t0=$(date +%s)
  timeout -k 5 "$budget" "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  note "$name: exit $rc in $(($(date +%s) - t0)) s (limit $budget s)"
}

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] && PY=.venv/bin/python
if timeout 20 "$PY" -m pip download -q --no-deps -d /tmp/rnnlab-probe-pip "jax==0.10.2" >/dev/null 2>&1; then
  step install 150 "$PY" -m pip install -q -r requirements.txt "jax[cuda12]==0.10.2"
else
  note "install: no package registry reachable; using the machine's own JAX and the carried wheels"
  if [ -d .gpu-wheels ]; then
    step install 90 "$PY" -m pip install -q --no-index --find-links .gpu-wheels streamlit plotly Babel segno
  fi
fi
step devices 60 "$PY" -c "import jax, flax, optax, sys; print(sys.version); print(jax.__version__, flax.__version__, \
optax.__version__); print(jax.default_backend(), jax.devices())"
cat "$OUT/devices.txt" >>"$SUMMARY"
if ! grep -q -i "gpu\|cuda" "$OUT/devices.txt"; then
  if [ "${RNNLAB_GPU_CHECK_ALLOW_CPU:-}" != "1" ]; then  # 1: rehearse the steps on a CPU-only machine
    note "no GPU: JAX does not see one here; stopping"
    exit 1
  fi
  note "no GPU: rehearsing on the CPU (RNNLAB_GPU_CHECK_ALLOW_CPU=1)"
fi
export RNNLAB_MEMORY_BUDGET_GB="${RNNLAB_MEMORY_BUDGET_GB:-}"
step gpu_tier 120 "$PY" -m pytest -q -x -p no:cacheprovider tests/gpu tests/test_fused.py tests/test_log_probe.py \
  tests/test_model.py
step presets 120 "$PY" -m pytest -q -p no:cacheprovider tests/test_presets.py
step bench 120 "$PY" -m rnnlab.bench --quick --out "$OUT/bench.md"
step class 150 bash tests/gpu/class.sh "$PY" "$OUT"
note "total: $(($(date +%s) - START)) s"
grep -h "passed\|failed\|error" "$OUT"/gpu_tier.txt "$OUT"/presets.txt 2>/dev/null | tail -4 >>"$SUMMARY"
