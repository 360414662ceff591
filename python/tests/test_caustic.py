"""pytest suite of the Python module (run by ctest as test_python: python/tests/run_tests.py).

Renders are tiny (32..64 pixels, a few spp) so that the suite takes seconds on 2 cores."""
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
import zlib

import numpy as np
import pytest

import caustic

SMALL = dict(width=48, height=40, spp=2, threads=2)


def cli():
    path = os.environ.get("CAUSTIC_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("CAUSTIC_CLI (the caustic binary) not given")
    return path


# ---- the check ---------------------------------------------------------------------------
def test_done_when_command():
    """The exact command of the issue, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", "import caustic; img = caustic.render('cornell', spp=16); "
                          "print(img.shape, img.dtype)"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(800, 800, 3) float32"


# ---- rendering ---------------------------------------------------------------------------------
def test_render_shape_and_content():
    img = caustic.render("cornell", **SMALL)
    assert isinstance(img, np.ndarray) and isinstance(img, caustic.Image)
    assert img.shape == (40, 48, 3) and img.dtype == np.float32
    assert np.isfinite(img).all() and img.mean() > 0.01


def test_same_pixels_as_the_cli(tmp_path):
    """The module renders what `caustic render` renders, to the bit (same seed and options)."""
    exe = cli()
    pfm = tmp_path / "cli.pfm"
    subprocess.run([exe, "render", "cornell", "--res", "32x24", "--spp", "3", "--threads", "2", "--seed", "7",
                    "-o", str(pfm)], check=True, capture_output=True, timeout=300)
    ref = caustic.load_image(pfm)
    img = caustic.render("cornell", width=32, height=24, spp=3, threads=2, seed=7)
    assert ref.shape == img.shape
    assert np.array_equal(np.asarray(ref), np.asarray(img))
    # and a different seed differs (the comparison can fail)
    other = caustic.render("cornell", width=32, height=24, spp=3, threads=2, seed=8)
    assert not np.array_equal(np.asarray(ref), np.asarray(other))


def test_image_is_a_copy():
    r = caustic.Renderer("cornell", **SMALL)
    r.passes(1)
    a = r.image()
    before = a.copy()
    r.passes(1)
    assert np.array_equal(a, before)           # later passes do not change an array returned
    assert not np.array_equal(r.image(), before)


def test_passes_camera_reset():
    r = caustic.Renderer("cornell", width=32, height=32, spp=8, threads=2)
    assert r.passes(2) == 2 and r.spp == 2
    assert r.passes(3, spp=2) == 6 and r.spp == 8
    assert r.passes(1) == 0                    # the target reached
    cam = r.camera
    r.camera = {"eye": (cam["eye"][0] + 1.0, cam["eye"][1], cam["eye"][2])}
    assert r.spp == 0
    assert r.camera["eye"][0] == pytest.approx(cam["eye"][0] + 1.0)
    r.passes(1)
    r.orbit(15)
    assert r.spp == 0
    r.passes(1)
    r.reset()
    assert r.spp == 0
    r.resize(16, 8)
    r.passes(1)
    assert r.image().shape == (8, 16, 3)
    with pytest.raises(caustic.Error, match="."):
        r.camera = {"eye": r.camera["lookat"]}   # degenerate: refused with caustic's message


def test_progress_callback_and_stop():
    seen = []

    def cb(p):
        assert isinstance(p, caustic.Progress)
        seen.append(p)
        return True                            # True stops after this pass

    r = caustic.Renderer("cornell", width=32, height=32, spp=64, threads=2, device="cpu")  # passes of 1 spp
    r.render(progress=cb)
    assert len(seen) == 1 and seen[0].spp_target == 64 and seen[0].spp_done == r.spp
    assert 1 <= r.spp < 64
    assert 0 < seen[0].fraction <= 1.0 and seen[0].samples_per_second > 0
    r.render(progress=lambda p: None)          # None goes on: to the target
    assert r.spp == 64


def test_progress_exception_propagates():
    def cb(p):
        raise ValueError("from the callback")

    r = caustic.Renderer("cornell", width=16, height=16, spp=16, threads=2, device="cpu")
    with pytest.raises(ValueError, match="from the callback"):
        r.render(progress=cb)
    assert r.spp < 16
    r.passes(1)                                # the renderer is still usable


class FakeBar:
    """What tqdm_progress uses of a tqdm bar."""
    def __init__(self):
        self.total, self.n, self.postfix = None, 0, ""

    def update(self, k):
        self.n += k

    def set_postfix_str(self, s, refresh=True):
        self.postfix = s


def test_tqdm_progress():
    bar = FakeBar()
    caustic.render("cornell", width=16, height=16, spp=5, threads=2, progress=caustic.tqdm_progress(bar))
    assert bar.total == 5 and bar.n == 5 and "Msamples/s" in bar.postfix
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return
    caustic.render("cornell", width=16, height=16, spp=3, threads=2, progress=True)


def test_ctrl_c_stops_cleanly():
    """SIGINT during a long render: KeyboardInterrupt within a pass, the samples kept, the
    renderer usable afterwards."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    # the time limit bounds the test where Ctrl-C does not stop the render (it then fails on took)
    r = caustic.Renderer("cornell", width=200, height=200, spp=100000, threads=2, time_limit=30)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        r.render()
    took = time.monotonic() - t0
    timer.join()
    assert took < 20, f"Ctrl-C took {took:.1f} s to stop the render"
    assert r.spp < 100000
    n = r.spp
    r.passes(1)
    assert r.spp == n + 1
    assert np.isfinite(r.image()).all()
    # Python's own SIGINT handling is back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_gil_released_during_a_pass():
    """Another Python thread runs while a pass renders."""
    r = caustic.Renderer("cornell", width=160, height=160, spp=6, threads=1, device="cpu")  # a GPU is too fast to tell
    done = threading.Event()
    span = []

    def work():
        t0 = time.monotonic()
        r.render()
        span.append(time.monotonic() - t0)
        done.set()

    ticks = 0
    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert span[0] > 0.05, "the render was too short to tell"
    # with the GIL held during the render this loop could not run until it ended
    assert ticks > 10 * r.spp, f"{ticks} ticks of another thread in a {span[0]:.2f} s render: the GIL was held"


def test_busy_renderer_refused():
    r = caustic.Renderer("cornell", width=160, height=160, spp=50000, threads=1)
    t = threading.Thread(target=r.render)
    t.start()
    time.sleep(0.3)
    try:
        with pytest.raises(caustic.Error, match="busy"):
            r.passes(1)
    finally:
        r.cancel()
        t.join()


# ---- scenes ------------------------------------------------------------------------------------
def test_builtin_scenes_and_stats():
    names = caustic.builtin_scenes()
    assert "cornell" in names and "rtow" in names
    st = caustic.Scene("cornell").stats()
    assert st["primitives"] > 0 and st["lights"] >= 1 and st["width"] == 800


def test_scene_built_in_code():
    s = caustic.Scene()
    grey = s.material("diffuse", color=(0.7, 0.7, 0.7))
    red = s.material("conductor", color=(0.9, 0.2, 0.2), roughness=0.3)
    lamp = s.material("emitter", emission=(8, 8, 8))
    s.sphere((0, 0, 0), 0.8, red)
    s.quad((-0.5, 2.0, -0.5), (0, 0, 1), (1, 0, 0), lamp)     # faces u x v = -y: down
    pos = np.array([[-3, -1, -3], [3, -1, -3], [3, -1, 3], [-3, -1, 3]], dtype=np.float64)  # converted
    idx = np.array([[0, 2, 1], [0, 3, 2]], dtype=np.int64)
    s.mesh(pos, idx, grey)
    s.point_light((2, 3, 3), (5, 5, 5))
    s.sky((0.1, 0.1, 0.15))
    s.render_defaults(40, 30, 4, 6)
    s.camera = {"eye": (0, 1, 6), "lookat": (0, 0, 0), "fov_y": 40}
    img = caustic.render(s, threads=2)
    assert img.shape == (30, 40, 3)
    st = s.stats()
    assert st["triangles"] == 2 and st["spheres"] == 1 and st["quads"] == 1 and st["materials"] == 3
    assert img.mean() > 0.01
    # the centre sees the red metal sphere: red dominates
    c = img[12:18, 17:23].mean(axis=(0, 1))
    assert c[0] > c[1] and c[0] > c[2]


def test_mesh_input_checks():
    s = caustic.Scene()
    m = s.material()
    with pytest.raises(ValueError, match="indices"):
        s.mesh(np.zeros((3, 3)), np.array([[0, 1, 3]]), m)
    with pytest.raises(ValueError, match="multiple of 3"):
        s.mesh(np.zeros(7), np.array([0, 1, 2]), m)
    with pytest.raises(ValueError, match="normals"):
        s.mesh(np.zeros((3, 3)), np.array([[0, 1, 2]]), m, normals=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="kind"):
        s.material("velvet")


def test_scene_from_string_and_errors(tmp_path):
    text = """{"Materials": {"white": {"TYPE": "Diffuse", "RGB": [0.8, 0.8, 0.8]},
                              "light": {"TYPE": "Emitting", "RGB": [1, 1, 1], "EMITTANCE": 5}},
               "Camera": {"RES": [24, 16], "FOVY": 45, "ITERATIONS": 2, "DEPTH": 4, "FILE": "x",
                          "EYE": [0, 0, 5], "LOOKAT": [0, 0, 0], "UP": [0, 1, 0]},
               "Objects": [{"TYPE": "sphere", "MATERIAL": "white", "TRANS": [0, 0, 0], "ROTAT": [0, 0, 0],
                            "SCALE": [2, 2, 2]},
                           {"TYPE": "cube", "MATERIAL": "light", "TRANS": [0, 3, 0], "ROTAT": [0, 0, 0],
                            "SCALE": [1, 0.1, 1]}]}"""
    s = caustic.scene_from_string(text)
    assert s.stats()["width"] == 24
    assert caustic.render(s, threads=2).shape == (16, 24, 3)
    with pytest.raises(caustic.Error) as e:
        caustic.scene_from_string('{"Materials": {}}')
    assert str(e.value).startswith("<string>: ") and "Camera" in str(e.value)
    with pytest.raises(caustic.Error, match="no-such-scene.json"):
        caustic.Scene(tmp_path / "no-such-scene.json")


def test_options_as_keywords():
    with pytest.raises(TypeError, match="unknown option 'sppp'"):
        caustic.Renderer("cornell", sppp=4)
    with pytest.raises(ValueError, match="integrator"):
        caustic.Renderer("cornell", integrator="magic")
    with pytest.raises(ValueError, match="device"):
        caustic.Renderer("cornell", device="tpu")
    r = caustic.Renderer("cornell", width=16, height=16, spp=2, threads=2, sampler="random", schedule="rows",
                         integrator="bdpt", seed=3, max_depth=4, device="cpu")
    r.render()
    st = r.stats()
    assert st["device"] == "cpu" and st["spp"] == 2 and st["width"] == 16
    with pytest.raises(caustic.Error, match="clamp"):       # caustic's own refusal, as the CLI's
        caustic.Renderer("cornell", integrator="bdpt", clamp=10.0)
    a = caustic.render("cornell", width=16, height=16, spp=2, threads=2, clamp=0.5)
    b = caustic.render("cornell", width=16, height=16, spp=2, threads=2)
    assert a.max() <= b.max() and not np.array_equal(a, b)   # the clamp took effect


# ---- images --------------------------------------------------------------------------------------
def test_aovs():
    r = caustic.Renderer("cornell", width=24, height=20, spp=2, threads=2, aovs=["albedo", "normal", "depth"])
    r.render()
    assert r.aov("albedo").shape == (20, 24, 3)
    assert r.aov("normal").shape == (20, 24, 3)
    d = r.aov("depth")
    assert d.shape == (20, 24, 1) and d.dtype == np.float32 and (d > 0).all()
    with pytest.raises(caustic.Error, match="variance"):
        r.aov("variance")
    assert r.sample_counts().shape == (20, 24) and (r.sample_counts() == 2).all()


def test_save_load_tonemap_compare(tmp_path):
    r = caustic.Renderer("cornell", **SMALL)
    img = r.render()
    img.save(tmp_path / "a.pfm")
    back = caustic.load_image(tmp_path / "a.pfm")
    assert np.array_equal(np.asarray(back), np.asarray(img))
    r.save(tmp_path / "b.png", tonemap="agx", exposure=0.5)
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img.save(tmp_path / "c.exr")
    assert caustic.load_image(tmp_path / "c.exr").shape == img.shape
    r8 = img.tonemap("aces")
    assert r8.dtype == np.uint8 and r8.shape == (40, 48, 3)
    assert np.array_equal(r.rgb8("aces"), r8)
    m = caustic.compare(img, img)
    assert m["ae"] == 0 and m["psnr"] == float("inf")
    m2 = img.compare(img * 0.5)
    assert m2["ae"] > 0 and m2["psnr"] < 60
    with pytest.raises(caustic.Error):
        img.save(tmp_path / "no-such-dir" / "x.png")
    with pytest.raises(ValueError, match="tone map"):
        img.tonemap("sepia")


def test_repr_png():
    r = caustic.Renderer("cornell", **SMALL)
    r.passes(1)
    for png in (r._repr_png_(), r.image()._repr_png_()):
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = struct.unpack(">II", png[16:24])
        assert (w, h) == (48, 40)
        idat = png.index(b"IDAT")
        n = struct.unpack(">I", png[idat - 4:idat])[0]
        raw = zlib.decompress(png[idat + 4:idat + 4 + n])
        assert len(raw) == 40 * (1 + 48 * 3)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(40, 1 + 48 * 3)[:, 1:].reshape(40, 48, 3)
    assert np.array_equal(rows, r.image().tonemap())


def test_denoise():
    ok, why = caustic.denoise_available()
    if not ok:
        pytest.skip(f"Open Image Denoise not available: {why}")
    r = caustic.Renderer("cornell", width=48, height=48, spp=2, threads=2, aovs="albedo,normal")
    noisy = r.render()
    out = r.denoise(device="cpu")
    assert out.shape == noisy.shape and out.dtype == np.float32 and np.isfinite(out).all()
    # denoising smooths: neighbouring pixels differ less
    assert np.abs(np.diff(out, axis=1)).mean() < np.abs(np.diff(noisy, axis=1)).mean()
    plain = caustic.denoise(noisy, device="cpu")
    assert plain.shape == noisy.shape


def test_warnings_become_python_warnings(tmp_path):
    scene = tmp_path / "w.json"
    scene.write_text('{"Materials": {"m": {"TYPE": "Diffuse", "RGB": [0.5, 0.5, 0.5], "BOGUS_KEY": 1}},'
                     '"Camera": {"RES": [8, 8], "FOVY": 45, "ITERATIONS": 1, "DEPTH": 2, "FILE": "x",'
                     '"EYE": [0, 0, 5], "LOOKAT": [0, 0, 0], "UP": [0, 1, 0]},'
                     '"Objects": [{"TYPE": "sphere", "MATERIAL": "m", "TRANS": [0, 0, 0], "ROTAT": [0, 0, 0],'
                     '"SCALE": [1, 1, 1]}]}')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        caustic.Scene(scene)
    assert any(issubclass(x.category, caustic.CausticWarning) and "BOGUS_KEY" in str(x.message) for x in w)
    with pytest.raises(caustic.Error, match="BOGUS_KEY"):
        caustic.Scene(scene, strict=True)


def test_gpu_when_present():
    if "cuda" not in caustic.devices().lower() or "no cuda" in caustic.devices().lower():
        pytest.skip("no CUDA device: " + caustic.devices().strip())
    r = caustic.Renderer("cornell", width=64, height=64, spp=8, device="cuda")
    img = r.render()
    assert r.stats()["device"] == "cuda" and img.shape == (64, 64, 3) and img.mean() > 0.01


def test_version_and_devices():
    assert caustic.__version__ == caustic.version() and caustic.version()
    assert isinstance(caustic.devices(), str) and caustic.cpu_isa()


def test_example_live_loop(tmp_path):
    """examples/live_loop.py runs as its docstring says (terminal mode)."""
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, "..", "..", "examples", "live_loop.py")
    out = subprocess.run([sys.executable, script, "--size", "32", "--frames", "9", "--orbit", "10",
                          "-o", str(tmp_path / "live.png")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stdout.splitlines() if l.startswith("frame ")]
    assert len(lines) == 9 and "Msamples/s" in lines[-1]
    assert (tmp_path / "live.png").read_bytes()[:4] == b"\x89PNG"
