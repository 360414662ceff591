#!/bin/sh
# `make install` as a user does it, and the installed prefix standing alone: install into a
# temporary prefix, move the prefix elsewhere (it is relocatable), then with the source and build
# trees hidden (a private mount namespace with empty directories over them: "the clone removed")
# run the installed caustic (--denoise: Open Image Denoise from under the prefix) and fedtrain,
# and build and run examples against libcaustic.so and libcaustic.a through pkg-config. Also:
# only caustic_* symbols exported by either library, caustic.pc with no CUDA or absolute paths
# under Libs, and the options size check. Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
T=$(mktemp -d /tmp/caustic_install_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
CC=${CC:-cc}

cmake --install "$BUILD" --prefix "$T/first" > "$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "cmake --install"; }
mv "$T/first" "$T/prefix"           # relocated: nothing may point at the first prefix
P=$T/prefix
LIB=$(ls "$P"/lib*/libcaustic.a 2>/dev/null | head -n 1)
[ -n "$LIB" ] || fail "no libcaustic.a installed"
LIBDIR=$(dirname "$LIB")
SO=$LIBDIR/libcaustic.so
[ -e "$SO" ] || fail "no libcaustic.so installed beside libcaustic.a"
[ -f "$P/include/caustic.h" ] || fail "no caustic.h installed"
PC=$LIBDIR/pkgconfig
[ -f "$PC/caustic.pc" ] || fail "no caustic.pc installed"
[ -x "$P/bin/caustic" ] || fail "no bin/caustic installed"
if [ -x "$BUILD/fedtrain" ]; then
    [ -x "$P/bin/fedtrain" ] || fail "fedtrain built but not installed"
fi
HAVE_OIDN=0
if [ -e "$SRC/third_party/oidn/lib/libOpenImageDenoise.so.2" ]; then
    HAVE_OIDN=1
    ls "$LIBDIR"/caustic/oidn/lib/libOpenImageDenoise.so.2 >/dev/null 2>&1 || fail "Open Image Denoise not installed under $LIBDIR/caustic/oidn/lib"
fi

# every defined global symbol is caustic_-prefixed (nm -g: T/D/B/R/W/V... with a value)
nm -g --defined-only "$LIB" | awk 'NF == 3 { print $3 }' > "$T/globals"
[ -s "$T/globals" ] || fail "no global symbols at all in $LIB"
if grep -v '^caustic_' "$T/globals" > "$T/leaks"; then
    echo "test_install: unprefixed global symbols in the installed library:" >&2
    head -n 20 "$T/leaks" >&2
    fail "$(wc -l < "$T/leaks") unprefixed symbols"
fi
grep -q '^caustic_render$' "$T/globals" || fail "caustic_render is not exported"
nm -D --defined-only "$SO" | awk 'NF == 3 { print $3 }' | grep -v '^caustic_' > "$T/soleaks" && {
    head -n 20 "$T/soleaks" >&2; fail "libcaustic.so exports $(wc -l < "$T/soleaks") unprefixed symbols"; }
nm -D --defined-only "$SO" | grep -q ' caustic_render$' || fail "libcaustic.so does not export caustic_render"
echo "test_install: $(wc -l < "$T/globals") global symbols, all caustic_*, in libcaustic.a and libcaustic.so"

# caustic.pc: the shared library by default; private dependencies only in Libs.private
LIBS=$(PKG_CONFIG_PATH="$PC" pkg-config --libs caustic) || fail "pkg-config caustic"
STATIC=$(PKG_CONFIG_PATH="$PC" pkg-config --static --libs caustic) || fail "pkg-config --static caustic"
CFLAGS=$(PKG_CONFIG_PATH="$PC" pkg-config --cflags caustic)
case "$LIBS" in *cuda*|*mpi*|*/lib*.so*|*-lpng*) fail "caustic.pc Libs carries private dependencies: $LIBS" ;; esac
case "$STATIC" in *-lpng*) ;; *) fail "caustic.pc Libs.private lacks the static archive's dependencies: $STATIC" ;; esac
grep -q "$T/first" "$PC/caustic.pc" && fail "caustic.pc names the prefix it was installed to (not relocatable)"

# a program that sets a wrong options size (another caustic.h) is refused with a clear message
cat > "$T/size.c" <<'EOF'
#include <caustic.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    char err[512] = "";
    caustic_scene *s;
    if (caustic_scene_load(&s, "cornell", err, sizeof err)) return 3;
    caustic_options o;
    caustic_options_init(&o);
    if (o.size != sizeof o) return 4;
    o.size -= 8; /* as a program built against an older caustic.h would pass */
    caustic_renderer *r = caustic_renderer_create(s, &o, err, sizeof err);
    if (r || !strstr(err, "caustic_options: size")) { printf("not refused: %s\n", err); return 5; }
    puts(err);
    caustic_scene_free(s);
    return 0;
}
EOF

# from here on the source and build trees are hidden, as if the clone were gone
cat > "$T/standalone.sh" <<EOF
set -eu
cd "$T"
# the shared library, linked through pkg-config, found through an rpath to the prefix
$CC -std=c11 -Wall -Wextra -Wpedantic -Werror "$T/src/render.c" $CFLAGS $LIBS -Wl,-rpath,"$LIBDIR" -o render_so
ldd ./render_so | grep -q "$SO" || { ldd ./render_so; echo "render_so does not use the installed libcaustic.so"; exit 1; }
./render_so "$T/out_so.png"
# the static archive with its private dependencies (pkg-config --static)
$CC -std=c11 -Wall -Wextra -Wpedantic -Werror "$T/src/orbit.c" $CFLAGS -Wl,-Bstatic -lcaustic -Wl,-Bdynamic \
    \$(echo "$STATIC" | sed 's/-lcaustic//') -lm -o orbit_static
ldd ./orbit_static | grep -q libcaustic && { echo "orbit_static links libcaustic.so"; exit 1; }
./orbit_static "$T" 3 > orbit.log
$CC -std=c11 size.c $CFLAGS $LIBS -Wl,-rpath,"$LIBDIR" -o size && ./size
# the installed binaries
"$P/bin/caustic" render cornell --res 48x48 --spp 4 --threads 2 -o "$T/cli.png" $( [ $HAVE_OIDN = 1 ] && echo --denoise ) > cli.log 2>&1 \
    || { cat cli.log; exit 1; }
if [ $HAVE_OIDN = 1 ]; then
    [ -s "$T/cli.denoised.png" ] || { cat cli.log; echo "installed caustic did not denoise with the tree gone"; exit 1; }
fi
if [ -x "$P/bin/fedtrain" ]; then "$P/bin/fedtrain" --version; fi
EOF
mkdir -p "$T/src"
cp "$SRC/examples/render.c" "$SRC/examples/orbit.c" "$T/src/"
if unshare -m true 2>/dev/null; then
    # empty directories over the trees (and over the parent of BUILD if it is outside SRC)
    unshare -m sh -c "mount -t tmpfs none '$SRC' && { [ \"\${BUILD#$SRC/}\" != '$BUILD' ] || mount -t tmpfs none '$BUILD'; } \
        && [ ! -e '$SRC/CMakeLists.txt' ] && sh '$T/standalone.sh'" > "$T/standalone.log" 2>&1 \
        || { cat "$T/standalone.log" >&2; fail "the installed prefix does not stand alone (log above)"; }
    echo "test_install: source tree $SRC hidden while the installed prefix ran"
else
    echo "test_install: note: no private mount namespace here (unshare -m): the source tree stays visible"
    sh "$T/standalone.sh" > "$T/standalone.log" 2>&1 || { cat "$T/standalone.log" >&2; fail "installed prefix (log above)"; }
fi
cat "$T/standalone.log"
[ -s "$T/out_so.png" ] || fail "examples/render.c (libcaustic.so) wrote no image"
[ -s "$T/orbit.002.png" ] || fail "examples/orbit.c (libcaustic.a) wrote no frames"
[ -s "$T/cli.png" ] || fail "the installed caustic wrote no image"
grep -q "caustic_options: size" "$T/standalone.log" || fail "a wrong options size was not refused"
[ $HAVE_OIDN = 1 ] && echo "test_install: the installed caustic denoised with Open Image Denoise from $LIBDIR/caustic/oidn/lib"
echo "test_install: ok"
