#!/usr/bin/env python3
"""Run labelled commands interleaved (A, B, C, A, B, C, ...) and print each one's median of a
figure parsed from its output: by default caustic's 'Msamples/s=' summary. Used for the
side-by-side measurements in docs/performance-log.md.

  tools/interleave.py --runs 5 'old=taskset -c 1 /tmp/old render ...' 'new=taskset -c 1 build/caustic render ...'
  --regex 'samples/s=([0-9.]+)'   the figure (first group, a float); --base LABEL: ratios to it
  --cpu-work N                    the figure is N / (the command's user + system CPU seconds)
                                  instead: robust to other processes sharing the core (it
                                  includes the command's set-up, e.g. loading the scene)
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--regex", default=r"Msamples/s=([0-9.]+)")
    ap.add_argument("--cpu-work", type=float, help="figure = this / CPU seconds of the command")
    ap.add_argument("--base", help="label the ratios are taken against (default: the first)")
    ap.add_argument("cmds", nargs="+", help="LABEL=COMMAND")
    a = ap.parse_args()
    cmds = []
    for c in a.cmds:
        label, _, cmd = c.partition("=")
        if not cmd:
            sys.exit(f"interleave.py: '{c}' is not LABEL=COMMAND")
        cmds.append((label, cmd))
    rx = re.compile(a.regex)
    vals = {label: [] for label, _ in cmds}
    for r in range(a.runs):
        for label, cmd in cmds:
            t0 = os.times()
            out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            t1 = os.times()
            m = rx.findall(out.stdout + out.stderr)
            if out.returncode != 0 or (not m and not a.cpu_work):
                sys.exit(f"interleave.py: '{label}' failed (exit {out.returncode}):\n{out.stdout}{out.stderr}")
            if a.cpu_work:
                v = a.cpu_work / ((t1.children_user - t0.children_user) + (t1.children_system - t0.children_system))
            else:
                v = float(m[-1])
            vals[label].append(v)
            print(f"run {r + 1} {label}: {v:g}", file=sys.stderr, flush=True)
    base = a.base or cmds[0][0]
    bm = statistics.median(vals[base])
    for label, _ in cmds:
        med = statistics.median(vals[label])
        print(f"{label:24s} median {med:10.4f}  ratio to {base} {med / bm:6.3f}  runs {' '.join(f'{v:g}' for v in vals[label])}")


if __name__ == "__main__":
    main()
