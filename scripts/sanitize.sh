#!/usr/bin/env bash
# Sanitizers and fuzzing (issue 12). Installs what it needs from Debian's packages (idempotent, as
# scripts/setup.sh does), configures and builds build-san (clang-14, host only, -DLABRUN_SANITIZE=ON
# -DLABRUN_FUZZ=ON: AddressSanitizer + UndefinedBehaviorSanitizer everywhere, and the libFuzzer targets), runs the
# host tests under the sanitizers (the CLI tests run the sanitized build-san/labrun), then each fuzzer for a
# bounded time over a copy of its seed corpus (fuzz/corpus/<target>/, never grown by this script) with its
# dictionary (fuzz/<target>.dict). Exits non-zero on a failed test or on any fuzzer finding (crash, leak,
# undefined behaviour, an exception other than the documented ones, a timeout, memory beyond the limit); the
# input that triggered it is kept in build-san/fuzz-run/<target>/findings/. fuzz/README.md says what to do then.
#
# Usage: scripts/sanitize.sh [SECONDS]   seconds per fuzzer (default 60, or $LABRUN_FUZZ_SECONDS); 0: no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-${LABRUN_FUZZ_SECONDS:-60}}"

packages=(cmake ninja-build git clang-14 libclang-rt-14-dev llvm-14 libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
          libspdlog-dev libfmt-dev libgtest-dev python3-matplotlib)
scripts/install_missing.sh sanitize "${packages[@]}"

jobs="$(nproc)"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ ! -f build-san/build.ninja ]; then
  cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLABRUN_SANITIZE=ON -DLABRUN_FUZZ=ON "${launcher[@]}"
fi
start=$SECONDS
cmake --build build-san -j"$jobs"
echo "sanitize: build-san built in $((SECONDS - start)) s"

# Every finding stops the process that has it (abort_on_error, halt_on_error) with a symbolized stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer; fi

start=$SECONDS
ctest --test-dir build-san -L host --output-on-failure -j"$jobs"
echo "sanitize: host tests passed under ASan+UBSan in $((SECONDS - start)) s"

[ "$fuzz_seconds" -gt 0 ] || exit 0
# One fuzzer: a fresh copy of its seeds, the time limit, 2 GB of memory and 10 s per input.
fuzz() {
  local target=$1 dir=build-san/fuzz-run/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/findings"
  cp fuzz/corpus/"$target"/* "$dir/corpus/"
  if build-san/fuzz/fuzz_"$target" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -timeout=10 \
       -dict=fuzz/"$target".dict -artifact_prefix="$dir/findings/" -print_final_stats=1 "$dir/corpus" \
       > "$dir/log" 2>&1; then
    echo "sanitize: fuzz_$target: no finding in ${fuzz_seconds} s; $(grep -E '^#[0-9]+[[:space:]]+DONE' "$dir/log" | tail -1)"
  else
    echo "sanitize: fuzz_$target FOUND A PROBLEM; its log ends:" >&2
    tail -n 80 "$dir/log" >&2
    echo "sanitize: the input is in $dir/findings/: $(ls "$dir/findings")" >&2
    return 1
  fi
}
start=$SECONDS
status=0
if [ "$jobs" -ge 2 ]; then  # one core each
  fuzz config & config_pid=$!
  fuzz results & results_pid=$!
  wait "$config_pid" || status=1
  wait "$results_pid" || status=1
else
  fuzz config || status=1
  fuzz results || status=1
fi
echo "sanitize: fuzzing took $((SECONDS - start)) s"
exit "$status"
