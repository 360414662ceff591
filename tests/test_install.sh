#!/bin/sh
# `make install` as a user does it: install into a temporary prefix, check that the installed
# library exports only caustic_* symbols, and build and run examples/render.c against it through
# pkg-config. Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
T=$(mktemp -d /tmp/caustic_install_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$T/prefix" > "$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "cmake --install"; }
LIB=$(ls "$T"/prefix/lib*/libcaustic.a 2>/dev/null | head -n 1)
[ -n "$LIB" ] || fail "no libcaustic.a installed"
[ -f "$T/prefix/include/caustic.h" ] || fail "no caustic.h installed"
PC=$(dirname "$LIB")/pkgconfig
[ -f "$PC/caustic.pc" ] || fail "no caustic.pc installed"

# every defined global symbol is caustic_-prefixed (nm -g: T/D/B/R/W/V... with a value)
nm -g --defined-only "$LIB" | awk 'NF == 3 { print $3 }' > "$T/globals"
[ -s "$T/globals" ] || fail "no global symbols at all in $LIB"
if grep -v '^caustic_' "$T/globals" > "$T/leaks"; then
    echo "test_install: unprefixed global symbols in the installed library:" >&2
    head -n 20 "$T/leaks" >&2
    fail "$(wc -l < "$T/leaks") unprefixed symbols"
fi
grep -q '^caustic_render$' "$T/globals" || fail "caustic_render is not exported"
echo "test_install: $(wc -l < "$T/globals") global symbols, all caustic_*"

# an example built with pkg-config alone, run
FLAGS=$(PKG_CONFIG_PATH="$PC" pkg-config --cflags --libs caustic) || fail "pkg-config caustic"
${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror "$SRC/examples/render.c" $FLAGS -o "$T/render" \
    || fail "examples/render.c does not build against the installed library ($FLAGS)"
(cd "$T" && ./render "$T/out.png") || fail "examples/render.c failed"
[ -s "$T/out.png" ] || fail "no image written"
${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Werror "$SRC/examples/orbit.c" $FLAGS -lm -o "$T/orbit" \
    || fail "examples/orbit.c does not build against the installed library ($FLAGS)"
(cd "$T" && ./orbit "$T" 3 > "$T/orbit.log") || { cat "$T/orbit.log" >&2; fail "examples/orbit.c failed"; }
[ -s "$T/orbit.002.png" ] || fail "examples/orbit.c wrote no frames"
echo "test_install: ok"
