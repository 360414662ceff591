#!/usr/bin/env bash
# docs/images/tonemap.png: scenes/sky-sphere.json (a diffuse sphere under a bright sky and sun)
# rendered once to a linear EXR, then written through clamp, aces and agx side by side.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
caustic=${CAUSTIC:-$root/build/caustic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$root/docs/images"
"$caustic" render "$root/scenes/sky-sphere.json" --device cpu --spp 256 --seed 1 -o "$tmp/sky.exr" --quiet
"$caustic" tonemap "$tmp/sky.exr" "$root/docs/images/tonemap.png" --tonemap clamp,aces,agx
