"""A live render loop from Python: passes, then the image updated in place, while the camera orbits.

In Jupyter (each cell's output replaced, the image shown through caustic's _repr_png_):

    %run examples/live_loop.py --seconds 20

In a terminal it prints one line per frame and writes the last frame as PNG:

    python3 examples/live_loop.py --scene cornell --size 256 --seconds 10 -o live.png

Ctrl-C (or the notebook's stop button) ends the loop at once; the image so far is kept. The
render runs without the GIL, so a notebook stays responsive between frames."""
import argparse
import sys
import time

import caustic


def in_notebook() -> bool:
    try:
        from IPython import get_ipython
        return get_ipython() is not None and "IPKernelApp" in get_ipython().config
    except ImportError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="cornell", help="a built-in name or a scene file")
    ap.add_argument("--size", type=int, default=256, help="image width and height")
    ap.add_argument("--seconds", type=float, default=10.0, help="how long the loop runs")
    ap.add_argument("--frames", type=int, default=0, help="stop after this many frames (0: by time)")
    ap.add_argument("--spp-per-frame", type=int, default=2, help="samples per pixel between frames")
    ap.add_argument("--orbit", type=float, default=0.0, help="degrees the camera turns every 8 frames")
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda")
    ap.add_argument("--tonemap", default="agx", help="clamp, aces or agx")
    ap.add_argument("-o", "--output", default=None, help="write the last frame here (.png, .exr, .pfm)")
    args = ap.parse_args(argv)

    r = caustic.Renderer(args.scene, width=args.size, height=args.size, spp=1 << 20, device=args.device)
    notebook = in_notebook()
    handle = None
    if notebook:
        from IPython.display import Image as IPImage, display
        handle = display(IPImage(data=r._repr_png_()), display_id=True)
    t0 = time.monotonic()
    frame = 0
    try:
        while time.monotonic() - t0 < args.seconds and (args.frames == 0 or frame < args.frames):
            r.passes(1, args.spp_per_frame)          # the GIL is released while this runs
            frame += 1
            if args.orbit and frame % 8 == 0:
                r.orbit(args.orbit)                  # moves the camera: the image restarts
            st = r.stats()
            line = (f"frame {frame}: {r.spp} spp, {st['samples'] / max(st['seconds'], 1e-9) / 1e6:.2f} "
                    f"Msamples/s on {st['device']}")
            if notebook:
                from IPython.display import Image as IPImage
                png = caustic._png(r.rgb8(args.tonemap))
                handle.update(IPImage(data=png))
            else:
                print(line, flush=True)
    except KeyboardInterrupt:
        print(f"stopped after {frame} frames ({r.spp} spp kept)", file=sys.stderr)
    if args.output:
        r.save(args.output, tonemap=args.tonemap)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
