#!/usr/bin/env bash
# Fetches Intel Open Image Denoise (the denoiser behind `caustic render --denoise`) into
# third_party/oidn/lib. Debian 12 does not package it; PyPI's pyoidn wheel ships the library with
# its CPU and CUDA devices, so the wheel is downloaded (pip download, no install: Debian's system
# Python refuses installs, PEP 668) and the libraries are unpacked from its pyoidn/oidn/lib/.
# caustic loads them at run time; without them it renders and says that it cannot denoise.
# A failed download (no network, no pip) is remembered in third_party/oidn/FETCH_FAILED so that
# every build does not wait for it again; delete that file (or run `make oidn`) to retry.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/third_party/oidn"
version=2.5.1.0
[ -e "$dest/lib/libOpenImageDenoise.so.2" ] && exit 0
[ "${CAUSTIC_NO_OIDN:-0}" = 1 ] && exit 0
[ -e "$dest/FETCH_FAILED" ] && [ "${1:-}" != --retry ] && exit 0
mkdir -p "$dest"
fail() {
  echo "deps: could not fetch Open Image Denoise ($1); caustic builds and renders without --denoise" \
       "(retry: make oidn)" >&2
  echo "$1" > "$dest/FETCH_FAILED"
  exit 0
}
py=$(command -v python3) || fail "no python3"
"$py" -m pip --version >/dev/null 2>&1 || fail "no pip (Debian: apt-get install python3-pip)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "deps: fetching Open Image Denoise (pyoidn $version wheel from PyPI, ~90 MB)" >&2
"$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --timeout 20 --retries 1 -d "$tmp" "pyoidn==$version" >"$tmp/pip.log" 2>&1 \
  || fail "pip download pyoidn==$version failed: $(tail -n 1 "$tmp/pip.log")"
whl=$(ls "$tmp"/pyoidn-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || fail "no wheel downloaded"
# the core, CPU and CUDA devices and TBB (the CPU device needs it); not the SYCL/HIP devices
"$py" - "$whl" "$tmp/lib" <<'PY' || fail "could not unpack $whl"
import os, sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
want = ("libOpenImageDenoise.so.2", "libOpenImageDenoise_core.so.", "libOpenImageDenoise_device_cpu.so.",
        "libOpenImageDenoise_device_cuda.so.", "libtbb.so.12")
n = 0
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        base = os.path.basename(name)
        if "/oidn/lib/" in name and base.startswith(want) and not base.startswith("libtbbbind"):
            with z.open(name) as src, open(os.path.join(out, base), "wb") as dst:
                dst.write(src.read())
            n += 1
    for name in z.namelist():
        if name.endswith("LICENSE") or "/LICENSE" in name:
            with z.open(name) as src, open(os.path.join(out, "LICENSE.pyoidn"), "wb") as dst:
                dst.write(src.read())
sys.exit(0 if n >= 4 else 1)
PY
[ -e "$tmp/lib/libOpenImageDenoise.so.2" ] || fail "the wheel has no libOpenImageDenoise.so.2"
rm -rf "$dest/lib" "$dest/FETCH_FAILED"
mv "$tmp/lib" "$dest/lib"
echo "deps: Open Image Denoise in $dest/lib" >&2
