#!/usr/bin/env bash
# Fails (exit 1) when a tracked C/C++/CUDA file (scripts/format_files.sh) differs from what clang-format 14 makes of
# it with .clang-format, listing those files; run by .ci/run. Fix: scripts/format.sh. Changes no file.
# Usage: scripts/check_format.sh [-v]   (-v: also print each such file's diff)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/format_files.sh
# clang-format --dry-run -Werror reports a file's first difference as "FILE:LINE:COL: error: code should be
# clang-formatted" (then the line); any other error (a file that cannot be read, say) is shown and fails the check too.
report=$(format_files | xargs -d '\n' -r -n 32 "$CLANG_FORMAT" --style=file --dry-run -Werror \
           --ferror-limit=1 2>&1 || true)
differ=$(grep -oE '^[^:[:space:]]+:[0-9]+:[0-9]+: error: code should be clang-formatted' <<< "$report" |
           cut -d: -f1 | sort -u || true)
other=$(grep -E '^([^[:space:]]+: ?)?error:|No such file' <<< "$report" |
          grep -v 'error: code should be clang-formatted' || true)
total=$(format_files | wc -l)
if [ -n "$other" ]; then
  echo "check_format: clang-format reported:" >&2
  echo "$other" >&2
  exit 1
fi
if [ -n "$differ" ]; then
  echo "check_format: $(wc -l <<< "$differ") of $total files are not laid out as .clang-format says:" >&2
  sed 's/^/  /' <<< "$differ" >&2
  if [ "${1:-}" = -v ]; then
    while IFS= read -r f; do "$CLANG_FORMAT" --style=file "$f" | diff -u "$f" - || true; done <<< "$differ"
  fi
  echo "check_format: run scripts/format.sh (clang-format 14) and commit the result;" \
       "scripts/check_format.sh -v shows the differences." >&2
  exit 1
fi
echo "check_format: all $total files laid out as .clang-format says"
