#!/usr/bin/env bash
# The prepared check for a session that has a GPU (every step has its own time limit and a failed step does not
# stop the others). Results: one JSON file per step under $OUT, and $OUT/summary.json.
#
#   scripts/gpu_check.sh                                  # DEVICE=cuda: every step (1-6 ~10 min, 7 ~8, 8 ~1)
#   GPU_CHECK_STEPS=large scripts/gpu_check.sh            # only step 7 (the ~1B model): under 8 minutes on an H100
#   GPU_CHECK_STEPS=split scripts/gpu_check.sh            # only step 8 (two GPUs; skipped with a line on one)
#   GPU_CHECK_STEPS="tests quickstart bilm head plan compare" scripts/gpu_check.sh     # steps 1-6 only
#   DEVICE=cpu scripts/gpu_check.sh      # (or: scripts/gpu_check.sh cpu) a dry run of every step on the CPU
#   DEVICE=cpu GPU_CHECK_STEPS=large GPU_CHECK_SIZE=tiny scripts/gpu_check.sh     # step 7's path on a tiny model
#
# Steps (seconds allowed on cuda):
#   1. tests (150)       the CUDA tests: tests/test_device.py (its has_cuda tests run where a GPU is) and the
#                        paper-size smoke runs of all six heads on the GPU under amp=bf16
#                        (ELMO_BENCH_TEST_DEVICE / ELMO_BENCH_TEST_AMP); junit XML + counts
#   2. quickstart (120)  python run.py experiment=quickstart device=cuda (NER sample, GloVe vs +ELMo)
#   3. bilm (90)         embed tokens/s of a random biLM of the public ELMo size, with its model-FLOP utilisation
#   4. head (90)         the paper-size SRL head's steps/s under amp=bf16 at its paper batch size (80)
#   5. plan (90)         elmo-bench plan of that SRL run, memory measured on the device
#   6. compare           the plan's priced seconds against steps 3 and 4 (what --gpu-tflops this GPU reaches)
#   7. large (480)       issue 46: a ~1.1B-parameter Llama-style model built from a config (random weights, a
#                        tokenizer trained on EWT here; nothing downloaded), every 4th layer in bf16 over UD EWT
#                        through probe=pos (encoder.layers=every:4 encoder.dtype=bfloat16 encoder.max_tokens=16384):
#                        subword tokens/s, peak GPU memory (torch.cuda.max_memory_allocated), the probe's accuracies
#                        (scripts/gpu_check_large.py; GPU_CHECK_SIZE=tiny: width 64, 8 blocks, 200 sentences)
#   8. split (180)       issue 58: with two or more GPUs, a small Llama-style model spread over two of them
#                        (encoder.device_map=balanced) against the same model on one GPU: its layers compared
#                        bit for bit (scripts/gpu_check_split.py); with fewer, one line saying why it skipped.
#                        The CPU dry run splits it between the CPU and accelerate's disk offload
# bilm=custom without its files: the plan prices the public biLM's architecture, the one steps 3-4 time.
# The CPU dry run shrinks each step: test_device.py only, one quickstart epoch, 8 sentences, one step of the paper
# NER head on the NER sample in fp32 (bf16 autocast on a CPU is slow and says nothing about a GPU).
set -uo pipefail

DEVICE=${1:-${DEVICE:-cuda}}
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d -t gpu_check.XXXXXX)}
WORK=$(mktemp -d -t gpu_check_work.XXXXXX)       # caches and run directories: not results, not sent back
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
: >"$WORK/steps.tsv"
cd "$REPO" || exit 2
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python}
STEPS=" ${GPU_CHECK_STEPS:-tests quickstart bilm head plan compare large split} "
wanted() { [[ "$STEPS" == *" $1 "* ]]; }

if [ "$DEVICE" = cpu ]; then
  T_TESTS=120; T_QUICK=120; T_STEP=120
  TESTS=(tests/test_device.py)
  QUICK_EXTRA=(trainer.max_epochs=1)
  SENTENCES=8; HEAD_TASK=ner; HEAD_DATA=ner_sample; HEAD_STEPS=1; HEAD_AMP=off; PLAN_BATCHES=1
  T_LARGE=900; LARGE_SIZE=${GPU_CHECK_SIZE:-tiny}
else
  T_TESTS=150; T_QUICK=120; T_STEP=90
  TESTS=(tests/test_device.py tests/test_paper_scale_smoke.py)
  QUICK_EXTRA=()
  SENTENCES=2000; HEAD_TASK=srl; HEAD_DATA=default_srl; HEAD_STEPS=20; HEAD_AMP=bf16; PLAN_BATCHES=2
  T_LARGE=480; LARGE_SIZE=${GPU_CHECK_SIZE:-1b}
fi

step() {  # step NAME LIMIT COMMAND...: run with a time limit, log to $OUT/NAME.log, note rc and seconds
  local name=$1 limit=$2 rc; shift 2
  wanted "$name" || return 0
  local start=$SECONDS
  echo "== $name (limit ${limit}s): $*" >&2
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - start))" >>"$WORK/steps.tsv"
  echo "   rc=$rc in $((SECONDS - start))s" >&2
}

step tests "$T_TESTS" env ELMO_BENCH_TEST_DEVICE="$DEVICE" ELMO_BENCH_TEST_AMP=bf16 \
  "$PY" -m pytest -q -p no:cacheprovider -rs "${TESTS[@]}" --junitxml="$OUT/tests.xml"
wanted tests && "$PY" - "$OUT/tests.xml" "$OUT/tests.json" <<'EOF'
import json, sys, xml.etree.ElementTree as ET
try:
    suite = ET.parse(sys.argv[1]).getroot()
    suite = suite.find("testsuite") if suite.tag == "testsuites" else suite
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    counts["skips"] = sorted({s.get("message", "") for s in suite.iter("skipped")})
except (OSError, ET.ParseError) as err:
    counts = {"error": f"no junit report: {err}"}
open(sys.argv[2], "w").write(json.dumps(counts, indent=2) + "\n")
EOF

step quickstart "$T_QUICK" "$PY" run.py experiment=quickstart "device=$DEVICE" logger=disabled progress=false \
  "paths.results_dir=$WORK/results" "paths.cache_dir=$WORK/cache" "${QUICK_EXTRA[@]}"
wanted quickstart && "$PY" - "$WORK/results/quickstart" "$OUT/quickstart.json" <<'EOF'
import json, sys
from pathlib import Path
runs = []
for path in sorted(Path(sys.argv[1]).glob("**/results.json")):
    r = json.loads(path.read_text())
    runs.append({"embedder": r["embedder"], "dev": r["metrics"].get("dev"), "test": r["metrics"].get("test"),
                 "epochs": r["epochs"]["run"], "device": r["device"], "timings": r["timings"]})
open(sys.argv[2], "w").write(json.dumps({"runs": runs}, indent=2) + "\n")
EOF

step bilm "$T_STEP" "$PY" scripts/gpu_check.py bilm --device "$DEVICE" --sentences "$SENTENCES" --out "$OUT/bilm.json"
step head "$T_STEP" "$PY" scripts/gpu_check.py head --device "$DEVICE" --task "$HEAD_TASK" --data "$HEAD_DATA" \
  --amp "$HEAD_AMP" --steps "$HEAD_STEPS" --out "$OUT/head.json"
GPU_FLAG=()
if [ "$DEVICE" != cpu ]; then
  GPU=$("$PY" -c "import torch; from scripts.gpu_check import gpu_key; print(gpu_key(torch.device('cuda')) or '')" 2>/dev/null)
  [ -n "$GPU" ] && GPU_FLAG=(--gpu "$GPU")
fi
step plan "$T_STEP" sh -c "\"$PY\" -m elmo_bench plan task=$HEAD_TASK head=paper data=$HEAD_DATA bilm=custom \
  embedder=glove_elmo embedder.glove_source=file amp=$HEAD_AMP --device $DEVICE --sample-batches $PLAN_BATCHES \
  ${GPU_FLAG[*]} --format json > \"$OUT/plan.json\""
step compare 60 "$PY" scripts/gpu_check.py compare --bilm "$OUT/bilm.json" --head "$OUT/head.json" \
  --plan "$OUT/plan.json" --out "$OUT/compare.json"
step large "$T_LARGE" "$PY" scripts/gpu_check_large.py --device "$DEVICE" --size "$LARGE_SIZE" --out "$OUT/large.json"
step split 180 "$PY" scripts/gpu_check_split.py --device "$DEVICE" --out "$OUT/split.json"
wanted split && [ -f "$OUT/split.json" ] && grep -q '"skipped"' "$OUT/split.json" && \
  echo "   split: skipped ($(tail -1 "$OUT/split.log"))" >&2

"$PY" - "$OUT" "$DEVICE" "$WORK/steps.tsv" <<'EOF'
import json, sys
out, device, table = sys.argv[1:4]
steps = {}
for line in open(table):
    name, rc, seconds = line.rstrip("\n").split("\t")
    steps[name] = {"rc": int(rc), "seconds": int(seconds)}
summary = {"device": device, "ok": all(v["rc"] == 0 for v in steps.values()), "steps": steps, "out": out,
           "seconds": sum(v["seconds"] for v in steps.values())}
open(f"{out}/summary.json", "w").write(json.dumps(summary, indent=2) + "\n")
print(json.dumps(summary))
EOF
