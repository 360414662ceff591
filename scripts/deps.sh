#!/usr/bin/env bash
# Installs the Debian packages caustic and fedtrain need, but only the missing ones,
# and only when run as root (otherwise it lists what is missing and carries on).
set -eu
pkgs="build-essential cmake pkg-config libpng-dev libjpeg-dev zlib1g-dev libcjson-dev libtinyexr-dev libstb-dev
      libopenblas-dev libopenmpi-dev openmpi-bin dataset-fashion-mnist gnuplot-nox libembree-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "deps: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "deps: missing Debian packages:$missing (run 'make deps' as root to install them)" >&2
fi
