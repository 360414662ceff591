#!/usr/bin/env python3
"""CPU samples/s of the render phase alone of `caustic render ...` (loading and the BVH build left
out): the process's CPU time is read from /proc when the first progress line comes and again when
it exits, and the samples done between the two (the progress lines' spp) are divided by it. CPU
time, not wall time: the shared development box runs other jobs on the same cores.

  render_cpu_rate.py -- build/caustic render scene.json --spp 64 --threads 1 --res 160x90 -o /tmp/x.pfm
prints cpu_Msamples/s=..."""
import os
import re
import subprocess
import sys


def cpu_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick  # utime, stime


def main():
    cmd = sys.argv[1:]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    res = None
    for i, a in enumerate(cmd):
        if a == "--res":
            res = cmd[i + 1]
    w, h = (int(v) for v in res.split("x"))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    spp0 = cpu0 = None
    last = ""
    buf = ""
    while True:
        ch = p.stdout.read(1)
        if not ch:
            break
        if ch in "\r\n":
            m = re.search(r"render\s+[0-9.]+%\s+(\d+)/(\d+) spp", buf)
            if m and spp0 is None:
                spp0, cpu0 = int(m.group(1)), cpu_of(p.pid)
            if buf.strip():
                last = buf
            buf = ""
        else:
            buf += ch
    _, status, ru = os.wait4(p.pid, 0)
    cpu1 = ru.ru_utime + ru.ru_stime
    m = re.search(r"spp=(\d+)", last)
    if status != 0 or spp0 is None or not m:
        sys.exit(f"render_cpu_rate.py: no progress or summary (status {status}): {last}")
    spp1 = int(m.group(1))
    print(last)
    print(f"cpu_seconds={cpu1 - cpu0:.3f} samples={(spp1 - spp0) * w * h} "
          f"cpu_Msamples/s={(spp1 - spp0) * w * h / (cpu1 - cpu0) / 1e6:.4f}")


if __name__ == "__main__":
    main()
