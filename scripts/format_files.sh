#!/usr/bin/env bash
# The files scripts/format.sh formats and scripts/check_format.sh checks: every tracked C, C++ and CUDA source and
# header (.cpp .hpp .cu .cuh .h), one per line, relative to the repository root. Also sets CLANG_FORMAT (default
# clang-format-14, the version .clang-format is written for) and installs it from Debian's packages if missing.
# Usage: source scripts/format_files.sh; format_files   (from the repository root)
format_files() {
  git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h'
}
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CLANG_FORMAT" > /dev/null && [ "$CLANG_FORMAT" = clang-format-14 ]; then
  scripts/install_missing.sh format clang-format-14
fi
if ! "$CLANG_FORMAT" --version | grep -q 'version 14\.'; then
  echo "format: $CLANG_FORMAT is not clang-format 14 ($("$CLANG_FORMAT" --version 2>&1 | head -1)); .clang-format is" \
       "written for 14, other versions lay some lines out differently. Install clang-format-14 or set CLANG_FORMAT." >&2
  exit 2
fi
