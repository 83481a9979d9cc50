#!/usr/bin/env bash
#! Fuzzes every parser (fuzz/fuzz_targets/*.rs) with cargo-fuzz, one target after another, niced and in one
#! process each so other work keeps a core. Usage: scripts/fuzz.sh [RUNS | SECONDSs | RUNS/SECONDSs] [TARGET...]
#!   scripts/fuzz.sh            10 million executions per target
#!   scripts/fuzz.sh 1e7/420s   10 million executions or seven minutes per target, whichever comes first
#!   scripts/fuzz.sh 300s       five minutes per target;   scripts/fuzz.sh 3s   the short pass test.sh runs
#!   scripts/fuzz.sh 1e8 vllm_bench   one target, longer
#! Stable rustc is enough: RUSTC_BOOTSTRAP=1 lets cargo-fuzz use the nightly-only flags it needs. Targets build
#! without a sanitizer (sim-core and the app have no unsafe code) but with debug assertions, so arithmetic
#! overflow panics too. A crash leaves its input in fuzz/artifacts/<target>/ and stops the script with exit 1;
#! replay it with `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none -a <target> <file>` in fuzz/.
#! FUZZ_BUILD=dev builds unoptimised (same assertions): a third of the release build's compile time and slower
#! executions, for the short pass scripts/test.sh runs; long runs keep the release build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1
cd "$ROOT/fuzz"

budget="${1:-10000000}"
shift || true
case "$budget" in
  */*s) runs="${budget%/*}" secs="${budget#*/}"
    limit=(-runs="$(printf '%.0f' "$runs")" -max_total_time="${secs%s}") ;;
  *s) limit=(-max_total_time="${budget%s}" -runs=-1) ;;
  *) limit=(-runs="$(printf '%.0f' "$budget")") ;;
esac

# Seed corpora: the committed seeds plus the repository's own sample files (read only; new finds go to corpus/).
declare -A seeds=(
  [split_records]="seeds/split_records ../tests/import-samples"
  [url_state]="seeds/url_state"
  [hf_config]="seeds/hf_config"
  [nccl_tests]="../tests/import-samples"
  [vllm_bench]="seeds/vllm_bench ../tests/import-samples"
  [dataset_file]="../data"
  [dataset_overlay]="../data"
  [scenario]="../data/scenarios"
)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(split_records url_state hf_config nccl_tests vllm_bench dataset_file dataset_overlay scenario)

host="$(rustc -vV | sed -n 's/^host: //p')"
if [ "${FUZZ_BUILD:-release}" = dev ]; then
  echo "==> cargo fuzz build --dev" >&2
  nice -n 19 cargo fuzz build -s none --dev
  bin="$ROOT/fuzz/target/$host/debug"
else
  echo "==> cargo fuzz build" >&2
  nice -n 19 cargo fuzz build -s none -a
  bin="$ROOT/fuzz/target/$host/release"
fi
mkdir -p logs
printf '%-16s %12s %8s %8s %7s\n' target executions seconds exec/s rss_mb
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  read -r -a dirs <<<"${seeds[$t]}"
  start=$(date +%s)
  status=0
  nice -n 19 "$bin/$t" "corpus/$t" "${dirs[@]}" "${limit[@]}" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="artifacts/$t/" >"logs/$t.log" 2>&1 || status=$?
  secs=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "logs/$t.log" | tail -1)
  printf '%-16s %12s %8s %8s %7s\n' "$t" "${execs:-?}" "$secs" "$(( ${execs:-0} / (secs > 0 ? secs : 1) ))" "${rss:-?}"
  if [ "$status" -ne 0 ]; then
    echo "error: $t failed (exit $status); see fuzz/logs/$t.log and fuzz/artifacts/$t/" >&2
    grep -m1 -A5 "panicked\|ERROR: libFuzzer" "logs/$t.log" >&2 || true
    exit 1
  fi
done
