#!/usr/bin/env python3
"""Breaks a `perf record -e cpu-clock --call-graph dwarf` profile of a caustic render into the
stages of a path (docs/performance-log.md, "whole-path profile"). The CPU kernel inlines everything
into one function (render_rect), so samples are told apart by their inline chains (addr2line -i
on a build with -g): the innermost function that names a stage decides; a sample outside the
binary (libm's sincosf, the kernel) is charged to its call site in the binary.

  perf record -e cpu-clock -F 1000 --call-graph dwarf,8192 -o p.data -- taskset -c 1 \\
      build/caustic render cornell --res 256x256 --spp 32 --threads 1 --quiet -o /tmp/p.pfm
  tools/perf_breakdown.py build/caustic p.data [--detail N]
"""
import argparse
import collections
import os
import re
import subprocess

STAGES = [  # (stage, the functions that name it), for the innermost match of a sample's chain
    ("traversal (closest hit)", {"trace_closest", "trace_closest_layout"}),
    ("shadow rays (any hit)", {"trace_occluded", "trace_occluded_layout"}),
    ("sampler", {"sampler_bounce", "sampler_camera", "sampler_start", "sobol_lanes", "sampler_1d", "sampler_2d"}),
    ("BSDF eval/sample", {"bsdf_eval", "bsdf_pdf", "bsdf_sample_dir", "bsdf_sides_agree", "frame_from_normal",
                          "frame_to_local", "frame_to_world"}),
    ("light selection/sampling, emission", {"sample_light", "light_pdf", "emitted_radiance", "env_eval", "env_pdf"}),
    ("materials, texture lookups", {"material_at", "material_albedo", "material_emission", "texture_eval"}),
    ("hit point (surface_at)", {"surface_at"}),
    ("camera ray", {"camera_ray"}),
    ("accumulation, film", {"film_trace_pixel", "render_rect"}),
]
# the path loop's own code (between the stages above): "other"
LOOP = {"path_trace", "path_trace_sample", "stage_shade_with", "stage_shade", "stage_intersect", "stage_shadow",
        "path_generate"}
OTHER = "other (path loop, shading glue)"
SETUP = "set-up (load, BVH build, output; not counted)"


def samples(binary, data):
    """Sample counts per address in the binary (ELF address: dso-relative, PIE)."""
    base = os.path.basename(binary)
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso", "--no-inline"], capture_output=True,
                         text=True, check=True).stdout
    ips, outside, via = collections.Counter(), collections.Counter(), collections.Counter()
    for block in out.split("\n\n"):
        frames = []
        for line in block.splitlines():
            m = re.match(r"\s*([0-9a-f]+)\s+(.*)\s+\((.*)\)$", line)
            if m:
                frames.append((int(m.group(1), 16), m.group(2), m.group(3)))
        if not frames:
            continue
        for k, (ip, _, dso) in enumerate(frames):
            if os.path.basename(dso) == base:
                a = ip - (1 if k else 0)  # a return address - 1 lies in its call
                ips[a] += 1
                if k:
                    via[(a, frames[0][1].split("+")[0])] += 1
                break
        else:
            outside[os.path.basename(frames[0][2])] += 1
    return ips, outside, via


def chains(binary, addrs):
    """Inline chain (innermost first) of each address."""
    res = subprocess.run(["addr2line", "-e", binary, "-f", "-i", "-a"] + [hex(a) for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    ch, cur, i = {}, None, 0
    while i < len(res):
        if res[i].startswith("0x"):
            cur = int(res[i], 16)
            ch[cur] = []
            i += 1
            continue
        ch[cur].append(res[i])
        i += 2
    return ch


def stage_of(names):
    for f in names:
        if f in LOOP:
            return OTHER
        for stage, fs in STAGES:
            if f in fs:
                return stage
    return SETUP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data")
    ap.add_argument("--detail", type=int, default=0, help="show each stage's N heaviest inline chains")
    a = ap.parse_args()
    ips, outside, via = samples(a.binary, a.data)
    ch = chains(a.binary, sorted(ips))
    count, detail = collections.Counter(), collections.defaultdict(collections.Counter)
    for addr, n in ips.items():
        st = stage_of(ch.get(addr, []))
        count[st] += n
        detail[st][" < ".join(ch.get(addr, ["?"])[:3])] += n
    render = sum(n for st, n in count.items() if st != SETUP)
    total = sum(count.values()) + sum(outside.values())
    print(f"samples {total}; render {render} (set-up {count[SETUP]}, outside the binary {sum(outside.values())})")
    print("| stage | samples | % of render |\n|---|---:|---:|")
    for st, n in count.most_common():
        if st != SETUP:
            print(f"| {st} | {n} | {100.0 * n / render:.1f} |")
    lib = collections.Counter()
    for (addr, sym), n in via.items():
        lib[(stage_of(ch.get(addr, [])), sym)] += n
    print("outside the binary, charged to the stage of the call:",
          ", ".join(f"{sym} {n} ({st})" for (st, sym), n in lib.most_common(6)))
    for st, _ in count.most_common() if a.detail else []:
        print(st)
        for k, n in detail[st].most_common(a.detail):
            print(f"    {n:6d}  {k}")


if __name__ == "__main__":
    main()
