#!/bin/sh
# Every C, CUDA and C++ file under version control is formatted by .clang-format. Formatting
# differs between clang-format releases, so the check runs only with the one the style was fixed
# with (Debian 12's clang-format 14) and skips elsewhere. Fix a failure with
#   git ls-files '*.c' '*.h' '*.cu' '*.cpp' | xargs clang-format -i
src=$1
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format not installed"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$major" = 14 ] || { echo "SKIP: clang-format $major (the style is checked with 14)"; exit 77; }
{ command -v git >/dev/null 2>&1 && [ -e "$src/.git" ]; } || { echo "SKIP: not a git checkout"; exit 77; }
cd "$src" || exit 1
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cpp' '*.cuh')
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files
