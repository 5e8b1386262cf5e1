#!/usr/bin/env bash
# Formats every tracked C/C++/CUDA file (scripts/format_files.sh) in place with clang-format 14 and .clang-format.
# Usage: scripts/format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/format_files.sh
format_files | xargs -d '\n' -r -n 16 -P "$(nproc)" "$CLANG_FORMAT" -i --style=file
echo "format: formatted $(format_files | wc -l) files with $("$CLANG_FORMAT" --version | head -1)"
