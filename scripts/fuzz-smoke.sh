#!/usr/bin/env bash
# cargo-fuzz run of the conversion core (core/fuzz, target core_map): map_model, map_tool_result,
# Scalar::of and otlp::decode_spans on arbitrary bytes, with invariant checks.
# Usage: scripts/fuzz-smoke.sh [seconds]   (default: 30 in smoke mode, 600 otherwise)
# The stable toolchain is enough: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags. cargo-fuzz
# is installed when missing (CI starts from a clean machine). Exits non-zero on any finding; the
# crashing input is left in core/fuzz/artifacts/core_map/ (turn it into a test in core/tests).
set -euo pipefail
cd "$(dirname "$0")/../core"
if [[ $# -ge 1 ]]; then
  seconds="$1"
elif [[ "${GENKIT_FOR_MAPLE_SMOKE:-}" == "1" ]]; then
  seconds=30
else
  seconds=600
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
mkdir -p fuzz/corpus/core_map
echo "fuzzing core_map for ${seconds}s"
started=$(date +%s)
cargo fuzz run core_map fuzz/corpus/core_map fuzz/seeds -- \
  -max_total_time="$seconds" -dict=fuzz/genkit.dict -max_len=65536 -rss_limit_mb=4096 -timeout=20 \
  -print_final_stats=1
echo "fuzz run: $(( $(date +%s) - started ))s wall, corpus $(ls fuzz/corpus/core_map | wc -l) inputs, no findings"
