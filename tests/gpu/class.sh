#!/usr/bin/env bash
# A class of 30 with the protocol client against one `streamlit run app.py` on this machine: everyone on the first
# preset's link, then half of them on runs of their own. Usage: bash tests/gpu/class.sh PYTHON OUT
set -uo pipefail
PY="$1"; OUT="$2"
PORT=8599
"$PY" -m streamlit run app.py --server.headless true --server.port $PORT --server.address 127.0.0.1 \
  --browser.gatherUsageStats false >"$OUT/class-server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$PORT/_stcore/health" >/dev/null && break; sleep 0.5; done
"$PY" -m tests.load.protocol_client --base "http://127.0.0.1:$PORT" --sessions 1 --mix same --timeout 120 \
  >"$OUT/class-warm.txt" 2>&1  # the first compile, before the class arrives
for mix in same half; do
  echo "== N = 30, mix $mix"
  "$PY" -m tests.load.protocol_client --base "http://127.0.0.1:$PORT" --sessions 30 --mix $mix --timeout 120 \
    --server-pid $SERVER
done
