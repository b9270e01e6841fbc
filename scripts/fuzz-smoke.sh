#!/usr/bin/env bash
# cargo-fuzz runs of the conversion core (core/fuzz), one after the other, sharing the time:
#   core_map     map_model, map_tool_result, Scalar::of on arbitrary bytes, with invariant checks
#                (2/3 of the time)
#   otlp_decode  otlp::decode_spans, the receiver's decoder (decodeOtlpTraces), on arbitrary bytes
#                (1/3 of the time)
# Usage: scripts/fuzz-smoke.sh [seconds]   (total; default: 30 in smoke mode, 600 otherwise)
# The stable toolchain is enough: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags. cargo-fuzz
# is installed when missing (CI starts from a clean machine). Exits non-zero on any finding; the
# crashing input is left in core/fuzz/artifacts/<target>/ (turn it into a test in core/tests or
# core/src/otlp.rs).
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
map_seconds=$(( seconds * 2 / 3 ))
otlp_seconds=$(( seconds - map_seconds ))
# Build both first, so that the fuzzing time is not spent compiling.
cargo fuzz build core_map
cargo fuzz build otlp_decode
mkdir -p fuzz/corpus/core_map fuzz/corpus/otlp_decode
started=$(date +%s)
echo "fuzzing core_map for ${map_seconds}s"
cargo fuzz run core_map fuzz/corpus/core_map fuzz/seeds -- \
  -max_total_time="$map_seconds" -dict=fuzz/genkit.dict -max_len=65536 -rss_limit_mb=4096 -timeout=20 \
  -print_final_stats=1
echo "fuzzing otlp_decode for ${otlp_seconds}s"
cargo fuzz run otlp_decode fuzz/corpus/otlp_decode -- \
  -max_total_time="$otlp_seconds" -max_len=65536 -rss_limit_mb=4096 -timeout=20 -print_final_stats=1
echo "fuzz runs: $(( $(date +%s) - started ))s wall, corpus $(ls fuzz/corpus/core_map | wc -l) + $(ls fuzz/corpus/otlp_decode | wc -l) inputs, no findings"
