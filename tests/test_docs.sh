#!/bin/sh
# The documents keep their purposes (docs/architecture.md): the map and the current-figures page
# stay short, every relative link in README.md and docs/*.md names a file that exists (and, for
# PERFORMANCE.md, a heading it has), every docs file a source comment cites exists, section names
# the map quotes are headings of internals.md, and code comments cite no "stop NN".
# Usage: test_docs.sh SOURCE_DIR
set -u
src=${1:?usage: test_docs.sh SOURCE_DIR}
cd "$src" || exit 1
fail=0
bad() { echo "test_docs: $*" >&2; fail=1; }

n=$(wc -l < docs/architecture.md)
[ "$n" -le 300 ] || bad "docs/architecture.md has $n lines: a map holds at most 300 (recipes go to docs/extending.md, design notes to docs/internals.md)"
n=$(wc -l < docs/PERFORMANCE.md)
[ "$n" -le 400 ] || bad "docs/PERFORMANCE.md has $n lines: the current figures hold at most 400 (history goes to docs/performance-log.md)"

# relative links [text](path) and [text](path#anchor) in README.md and docs/*.md
for f in README.md docs/*.md; do
    dir=$(dirname "$f")
    grep -o '](\([^)#: ]*\)\(#[^) ]*\)\?)' "$f" | sed 's/^](//; s/)$//' | while IFS= read -r link; do
        path=${link%%#*}
        [ -n "$path" ] || continue
        [ -e "$dir/$path" ] || echo "$f: link to $path: no such file"
        case $link in
        *'#'*)
            anchor=${link#*#}
            # GitHub's anchors: lower case, punctuation dropped, spaces to hyphens
            grep '^#' "$dir/$path" | sed 's/^#* //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g' |
                grep -qx -- "$anchor" || echo "$f: link to $link: no heading gives that anchor"
            ;;
        esac
    done
done > /tmp/test_docs.$$ 2>&1
if [ -s /tmp/test_docs.$$ ]; then
    while IFS= read -r l; do bad "$l"; done < /tmp/test_docs.$$
fi
rm -f /tmp/test_docs.$$

# documents cited from code
for d in $(grep -rhoE 'docs/[A-Za-z0-9_-]+\.md' src include tests tools fuzz examples scripts CMakeLists.txt | sort -u); do
    [ -e "$d" ] || bad "a source comment cites $d, which does not exist"
done

# "stop NN" (a session's number) in code comments: cite a document's section instead
hits=$(grep -rnE '\bstop [0-9]+' src include tests tools fuzz examples --include='*.c' --include='*.h' \
    --include='*.cu' --include='*.cuh' --include='*.cpp' --include='*.py' --include='*.sh' | grep -v '^tests/test_docs.sh')
[ -z "$hits" ] || bad "code comments cite \"stop NN\" (cite docs/performance-log.md by date and branch):
$hits"

# the map's quoted section names are headings of internals.md
grep -o '"[A-Z][^"]*"' docs/architecture.md | tr -d '"' | sort -u | while IFS= read -r s; do
    grep -qxF "## $s" docs/internals.md || grep -qxF "### $s" docs/internals.md ||
        echo "docs/architecture.md quotes \"$s\", which is not a heading of docs/internals.md"
done > /tmp/test_docs.$$
if [ -s /tmp/test_docs.$$ ]; then
    while IFS= read -r l; do bad "$l"; done < /tmp/test_docs.$$
fi
rm -f /tmp/test_docs.$$

[ $fail -eq 0 ] && echo "test_docs: ok"
exit $fail
