#!/usr/bin/env python3
"""Runs a command and prints cpu_Msamples/s = WORK / 1e6 / (its user + system CPU seconds minus
those of the --minus command, e.g. the same render with one sample: loading and BVH build), for
tools/interleave.py --regex 'cpu_Msamples/s=([0-9.]+)'. CPU time rather than wall time: the
shared development box runs other jobs on the same cores.

  tools/cpu_rate.py --work 9830400 --minus 'build/caustic render s.json --spp 1 ...' -- build/caustic render s.json --spp 128 ...
"""
import argparse
import os
import subprocess
import sys


def cpu(cmd):
    t0 = os.times()
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    t1 = os.times()
    if r.returncode != 0:
        sys.exit(f"cpu_rate.py: '{cmd}' failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system), r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=float, required=True, help="samples the command renders")
    ap.add_argument("--minus", help="command whose CPU time is subtracted (set-up only)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = " ".join(a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd)
    t, out = cpu(cmd)
    if a.minus:
        t -= cpu(a.minus)[0]
    sys.stdout.write(out)
    print(f"cpu_seconds={t:.3f} cpu_Msamples/s={a.work / t / 1e6:.4f}")


if __name__ == "__main__":
    main()
