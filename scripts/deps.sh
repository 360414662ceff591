#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages caustic and fedtrain need, but only the missing ones, and
# only when run as root (otherwise it lists what is missing and carries on). Where they cannot be
# installed (no package registry, e.g. an offline GPU node with the libraries under a prefix named
# by CMAKE_PREFIX_PATH), it says so and carries on: CMake then names any required library it
# cannot find, and optional ones (Embree, tinygltf, gnuplot, Fashion-MNIST) are simply not used.
# Open Image Denoise (optional, for --denoise) comes from PyPI: scripts/fetch-oidn.sh, run last.
# libsdl2-dev gives `caustic view` its window (optional: without it the viewer runs headless only);
# libsdl2-ttf-dev, fonts-dejavu-core and libfontconfig-dev its on-screen readout (optional: without
# them the window title shows the figures);
# xvfb, xauth, xdotool and imagemagick are for the viewer's test (a virtual display, X events,
# screenshots).
# libexpat1-dev reads Mitsuba XML scenes (optional: without it loading one says so).
# libcivetweb-dev gives `caustic serve` (the viewer as a web page; without it serve is left out).
# CAUSTIC_DEPS_BROWSER=1 also installs chromium, chromium-driver and python3-selenium for
# caustic serve's browser test (tests/test_serve.py browser; about 150 MB to fetch and 500 MB on
# disk, so opt-in: without them that test is skipped with a message naming them).
# python3-dev builds the Python module (optional: without it CMake says so and skips it);
# python3-numpy and python3-pytest run it and its tests (without them test_python is skipped with
# one message). Where `python3` is not Debian's (a pyenv or venv interpreter first on PATH), numpy
# and pytest are installed for it from PyPI by pip (python_deps below).
set -eu
python_deps() {
  py=$(command -v python3) || return 0
  "$py" -c 'import numpy, pytest' 2>/dev/null && return 0
  [ "$py" = /usr/bin/python3 ] && { echo "deps: numpy/pytest missing for $py (apt-get install python3-numpy python3-pytest)" >&2; return 0; }
  echo "deps: installing numpy and pytest for $py (pip)" >&2
  "$py" -m pip install --quiet --disable-pip-version-check numpy pytest >/dev/null 2>&1 \
    || echo "deps: could not pip-install numpy pytest for $py: test_python will be skipped" >&2
}
trap 'python_deps; "$(dirname "$0")"/fetch-oidn.sh' EXIT
pkgs="build-essential cmake pkg-config libpng-dev libjpeg-dev zlib1g-dev libexpat1-dev libcjson-dev libtinyexr-dev libstb-dev
      libopenblas-dev libopenmpi-dev openmpi-bin dataset-fashion-mnist gnuplot-nox libembree-dev python3-pip
      libtinygltf-dev libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core libfontconfig-dev xvfb xauth xdotool imagemagick
      libcivetweb-dev python3-dev python3-numpy python3-pytest libnanovdb-dev libopenvdb-dev libboost-dev"
[ "${CAUSTIC_DEPS_BROWSER:-0}" = 1 ] && pkgs="$pkgs chromium chromium-driver python3-selenium"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "deps: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null; }; then
    echo "deps: could not install$missing (no package registry?); building with what is there" >&2
  fi
else
  echo "deps: missing packages:$missing (run 'make deps' as root to install them)" >&2
fi
