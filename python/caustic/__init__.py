"""caustic from Python: a physically based renderer (CPU and NVIDIA GPU) over libcaustic's C API.

    >>> import caustic
    >>> img = caustic.render("cornell", spp=16)         # an Image: numpy float32, (H, W, 3), linear RGB
    >>> img.save("cornell.png", tonemap="agx")

    >>> r = caustic.Renderer("cornell", spp=256, width=256, height=256)
    >>> r.passes(4)                                      # 4 passes of 1 spp, then control comes back
    >>> r.orbit(10); r.passes(4)                         # move the camera (the image restarts)
    >>> r.image().shape, r.aov("albedo")                 # needs aovs="albedo" at creation

Images are numpy arrays (float32, height x width x channels, top row first) holding a *copy* of
the renderer's film: later passes do not change an array already returned. Arrays passed in
(meshes, images to save, compare or denoise) are read in place through the buffer protocol when
they are C-contiguous float32 (uint32 for indices), else converted once.

A render releases the GIL while a pass runs; Ctrl-C (a notebook's interrupt) stops it after the
pass under way (passes last about a second) and raises KeyboardInterrupt, keeping the samples
taken (the renderer can go on).
Failures raise caustic.Error carrying caustic's own message; caustic's warnings arrive as Python
warnings of category caustic.CausticWarning.
"""
from __future__ import annotations

import os
import struct
import tempfile
import zlib
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _caustic
from ._caustic import CausticWarning, Error

__all__ = [
    "Error", "CausticWarning", "Progress", "Image", "Scene", "Renderer", "render", "load_scene",
    "scene_from_string", "load_image", "compare", "denoise", "denoise_available", "builtin_scenes",
    "version", "devices", "cpu_isa", "tqdm_progress",
]

__version__ = _caustic.version()
PathLike = Union[str, "os.PathLike[str]"]


def version() -> str:
    """caustic's version string."""
    return _caustic.version()


def builtin_scenes() -> list:
    """Names of the built-in scenes ("cornell", "rtow", ...)."""
    return _caustic.builtin_scenes()


def devices() -> str:
    """One line per CUDA device, or why there is none."""
    return _caustic.devices()


def cpu_isa() -> str:
    """The CPU kernels' instruction-set level in use (e.g. "avx2 (AVX2+FMA, 8-wide BVH)")."""
    return _caustic.cpu_isa()


class Progress(NamedTuple):
    """What a progress callback receives after each pass."""
    spp_done: int
    spp_target: int
    elapsed: float          #: seconds
    time_limit: float       #: seconds (0: none)
    fraction: float         #: 0..1, whichever of spp / time is nearer to done
    samples_per_second: float


def _png(rgb8: np.ndarray) -> bytes:
    """An 8-bit RGB (H, W, 3) array as PNG bytes (zlib; no file)."""
    h, w, _ = rgb8.shape
    raw = b"".join(b"\x00" + rgb8[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def _f32(a: Any, what: str, channels: Optional[int] = 3) -> np.ndarray:
    arr = np.ascontiguousarray(a, dtype=np.float32)
    if channels is not None and (arr.ndim != 3 or arr.shape[2] != channels):
        raise ValueError(f"{what}: expected an array of shape (height, width, {channels}), got {arr.shape}")
    return arr


class Image(np.ndarray):
    """A linear image: a numpy float32 array of shape (height, width, channels), top row first.

    An ndarray in every respect (slicing, arithmetic, numpy functions), plus save(), tonemap(),
    denoise(), compare() and a PNG for Jupyter (_repr_png_: clamp tone map, sRGB). The data is a
    copy of the renderer's film taken when the image was asked for.
    """

    def __new__(cls, data: Any) -> "Image":
        return np.asarray(data, dtype=np.float32).view(cls)

    @property
    def width(self) -> int:
        return int(self.shape[1])

    @property
    def height(self) -> int:
        return int(self.shape[0])

    def _rgb(self) -> np.ndarray:
        a = np.asarray(self)
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3 or a.shape[2] not in (1, 3):
            raise ValueError(f"image: expected (height, width, 1 or 3) channels, got {a.shape}")
        if a.shape[2] == 1:
            a = np.repeat(a, 3, axis=2)
        return np.ascontiguousarray(a, dtype=np.float32)

    def tonemap(self, tonemap: str = "clamp", exposure: float = 0.0) -> np.ndarray:
        """8-bit sRGB (a uint8 array, H x W x 3) through exposure (EV) and a tone map (clamp, aces, agx)."""
        a = self._rgb()
        h, w, _ = a.shape
        out = _caustic.tonemap(a, w, h, tonemap, float(exposure))
        return np.frombuffer(out, dtype=np.uint8).reshape(h, w, 3)

    def save(self, path: PathLike, tonemap: Optional[str] = None, exposure: float = 0.0,
             exr_float: bool = False) -> None:
        """Writes .png (8-bit sRGB through the look), .exr (linear half; exr_float: 32-bit) or .pfm
        (linear float), atomically."""
        a = self._rgb()
        h, w, _ = a.shape
        _caustic.image_save(a, w, h, os.fspath(path), tonemap, float(exposure), bool(exr_float))

    def denoise(self, albedo: Any = None, normal: Any = None, device: str = "auto") -> "Image":
        """Open Image Denoise (albedo / normal guides optional; a normal needs an albedo)."""
        return denoise(self, albedo=albedo, normal=normal, device=device)

    def compare(self, other: Any) -> dict:
        """AE, RMSE (8-bit units), PSNR (dB) and SSIM on the sRGB values a viewer sees."""
        return compare(self, other)

    def _repr_png_(self) -> bytes:
        return _png(self.tonemap())


def _image(res: tuple) -> Image:
    buf, h, w, c = res
    return np.frombuffer(buf, dtype=np.float32).reshape(h, w, c).view(Image)


def load_image(path: PathLike) -> Image:
    """Reads .png, .exr, .pfm (and what stb_image reads) as linear RGB."""
    return _image(_caustic.image_load(os.fspath(path)))


def compare(a: Any, b: Any) -> dict:
    """Compares two linear RGB images (H x W x 3) on their 8-bit sRGB values: dict(ae, rmse, psnr, ssim)."""
    a, b = _f32(a, "first image"), _f32(b, "second image")
    if a.shape != b.shape:
        raise ValueError(f"compare: shapes differ: {a.shape} and {b.shape}")
    return _caustic.compare(a, b, a.shape[1], a.shape[0])


def denoise_available() -> tuple:
    """(True, "") when Open Image Denoise loads, else (False, why)."""
    return _caustic.denoise_available()


def denoise(color: Any, albedo: Any = None, normal: Any = None, device: str = "auto") -> Image:
    """Denoises a linear RGB image (H x W x 3) with Open Image Denoise; optional albedo and normal
    guides of the same shape (a renderer's aov("albedo") / aov("normal")). device: auto, cpu, cuda."""
    c = _f32(color, "color")
    h, w, _ = c.shape
    al = None if albedo is None else _f32(albedo, "albedo")
    nr = None if normal is None else _f32(normal, "normal")
    out = _caustic.denoise(c, w, h, al, nr, device)
    return np.frombuffer(out, dtype=np.float32).reshape(h, w, 3).view(Image)


class Scene:
    """A scene: loaded from a file or a built-in name, made from a string, or built in code.

        s = caustic.Scene()                                # empty: camera at (0,0,5) looking at the origin
        red = s.material("diffuse", color=(0.8, 0.1, 0.1))
        lamp = s.material("emitter", emission=(10, 10, 10))
        s.sphere((0, 0, 0), 1.0, red)
        s.quad((-1, 2, -1), (2, 0, 0), (0, 0, 2), lamp)      # faces u x v: down here
        s.mesh(positions, indices, red)                     # numpy (N, 3) float32, (M, 3) uint32
        s.sky((0.2, 0.3, 0.5)); s.point_light((0, 3, 3), (20, 20, 20))

    Shapes and lights cannot be added once a renderer was created on the scene.
    """

    def __init__(self, path_or_name: Optional[PathLike] = None, *, strict: bool = False,
                 dump_scene: Optional[PathLike] = None, _handle: Any = None) -> None:
        if _handle is not None:
            self._s = _handle
        elif path_or_name is None:
            self._s = _caustic.new_scene()
        else:
            self._s = _caustic.load_scene(os.fspath(path_or_name), strict,
                                          None if dump_scene is None else os.fspath(dump_scene))

    # -- reading -----------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts (triangles, spheres, ...), bounds, BVH statistics, memory and the file's settings."""
        return self._s.stats()

    @property
    def camera(self) -> dict:
        """The camera renderers created afterwards start with: eye, lookat, up, fov_y, lens_radius,
        focus_distance. Assign a dict with the keys to change (the others stay)."""
        return self._s.get_camera()

    @camera.setter
    def camera(self, c: dict) -> None:
        self._s.set_camera(dict(c))

    def orbit(self, degrees: float) -> None:
        """Turns the camera about its up direction around its look-at point."""
        self._s.orbit(float(degrees))

    # -- building ----------------------------------------------------------------------------
    def material(self, kind: str = "diffuse", *, color: Sequence[float] = (0.8, 0.8, 0.8),
                 emission: Sequence[float] = (0, 0, 0), roughness: float = 0.5, ior: float = 1.5,
                 metallic: float = 0.0, specular: Sequence[float] = (0, 0, 0), exponent: float = 0.0,
                 two_sided: bool = False, metal: Optional[str] = None, coat_roughness: float = 0.0) -> int:
        """Adds a material; returns its index. kind: diffuse, mirror, conductor, glass, emitter,
        phong, pbr, rough_glass, coated (a dielectric coat of ior and coat_roughness over a
        diffuse base of color), thin_dielectric, diffuse_transmission (specular is then the
        transmittance), interface (no surface: a medium boundary). metal names a conductor's measured complex IOR ("Au", "Ag", "Cu", ...).
        A nonzero emission makes its shapes area lights."""
        return self._s.add_material(kind, color, emission, roughness, ior, metallic, specular,
                                    exponent, two_sided, metal, coat_roughness)

    def sphere(self, center: Sequence[float], radius: float, material: int) -> int:
        return self._s.add_sphere(center, float(radius), int(material))

    def quad(self, corner: Sequence[float], u: Sequence[float], v: Sequence[float], material: int) -> int:
        """The parallelogram corner, corner+u, corner+u+v, corner+v; it faces u x v."""
        return self._s.add_quad(corner, u, v, int(material))

    def mesh(self, positions: Any, indices: Any, material: int, normals: Any = None,
             uvs: Any = None) -> int:
        """A triangle mesh from arrays: positions (N, 3), indices (M, 3), optional normals (N, 3)
        and uvs (N, 2). Read in place when already float32 / uint32 and C-contiguous."""
        pos = np.ascontiguousarray(positions, dtype=np.float32)
        if pos.size % 3:
            raise ValueError(f"mesh positions: {pos.size} values is not a multiple of 3 (x, y, z per vertex)")
        idx = np.asarray(indices)
        if idx.size and (idx.min() < 0 or idx.max() >= pos.size // 3):
            raise ValueError(f"mesh: indices must lie in [0, {pos.size // 3}) (the vertices)")
        idx = np.ascontiguousarray(idx, dtype=np.uint32)
        nrm = None if normals is None else np.ascontiguousarray(normals, dtype=np.float32)
        uv = None if uvs is None else np.ascontiguousarray(uvs, dtype=np.float32)
        return self._s.add_mesh(pos, idx, int(material), nrm, uv)

    def point_light(self, position: Sequence[float], intensity: Sequence[float]) -> int:
        """A point light of radiant intensity (W/sr) per RGB channel."""
        return self._s.add_point_light(position, intensity)

    def sky(self, radiance: Sequence[float]) -> None:
        """A constant environment of this radiance ((0, 0, 0): none)."""
        self._s.set_environment(radiance)

    def render_defaults(self, width: int, height: int, spp: int, max_depth: int) -> None:
        """What renderers take where their options leave resolution, spp and depth unset."""
        self._s.set_render_defaults(int(width), int(height), int(spp), int(max_depth))

    def renderer(self, **options: Any) -> "Renderer":
        return Renderer(self, **options)

    def __repr__(self) -> str:
        st = self.stats()
        return (f"<caustic.Scene {st['primitives']} primitives, {st['materials']} materials, "
                f"{st['lights']} lights, {st['width']}x{st['height']}>")


def load_scene(path_or_name: PathLike, strict: bool = False) -> Scene:
    """A scene file (caustic JSON and its dialects, the older text format, .obj/.ply quick look,
    glTF where built with it) or a built-in name (builtin_scenes())."""
    return Scene(path_or_name, strict=strict)


def scene_from_string(text: str, format: str = "json", strict: bool = False,
                      base_dir: Optional[PathLike] = None) -> Scene:
    """A scene from its text (format: "json", "txt" for the older text format, "obj"). The text
    is written to a temporary file in base_dir (default: a temporary directory) and loaded, so
    relative paths inside it resolve against base_dir."""
    suffix = "." + format.lstrip(".")
    d = os.fspath(base_dir) if base_dir is not None else None
    fd, path = tempfile.mkstemp(suffix=suffix, prefix="caustic_scene_", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            return Scene(path, strict=strict)
        except Error as e:
            # messages name the text, not the temporary file it passed through
            raise Error(str(e).replace(path, "<string>")) from None
    finally:
        os.unlink(path)


def tqdm_progress(bar: Any) -> Callable[[Progress], None]:
    """A progress callback that drives a tqdm bar (total: the spp target):

        from tqdm import tqdm
        with tqdm(unit="spp") as bar:
            r.render(progress=caustic.tqdm_progress(bar))
    """
    def update(p: Progress) -> None:
        if bar.total != p.spp_target:
            bar.total = p.spp_target
        bar.set_postfix_str(f"{p.samples_per_second / 1e6:.2f} Msamples/s", refresh=False)
        bar.update(p.spp_done - bar.n)
    return update


_OPTION_DOC = """Options (keyword arguments; unset ones come from the scene): width, height, spp,
time_limit (s), threads (0: all cores), seed, max_depth, schedule (tiles rows rows-static pixels),
sampler (random stratified sobol), device ("auto", "cpu", "cuda", "cuda:0,1"), clamp, adaptive,
adaptive_min_spp, integrator (pt lt bdpt ppm bpm vcm), merge_radius, merge_alpha, merge_everywhere,
gpu_mode (mega wavefront), gpu_bvh (sah lbvh cwbvh), adaptive_depth, aovs (a list or comma string
of albedo normal depth samples variance)."""


class Renderer:
    """A renderer over a scene (a Scene, a file path or a built-in name) with options as keywords.

    render() runs to the spp target or time limit; passes(n) runs n passes and returns; the camera
    can move between calls (the image restarts). The GIL is released while a pass runs.
    """

    def __init__(self, scene: Union[Scene, PathLike] = "cornell", **options: Any) -> None:
        self.scene = scene if isinstance(scene, Scene) else Scene(scene)
        aovs = options.get("aovs")
        if aovs is not None and not isinstance(aovs, str):
            options["aovs"] = ",".join(aovs)
        self.options = dict(options)
        self._r = _caustic.Renderer(self.scene._s, options)

    # -- rendering ---------------------------------------------------------------------------
    def render(self, progress: Union[None, bool, Callable[[Progress], Any]] = None) -> Image:
        """Renders until the spp target or the time limit, whichever comes first, and returns the
        image. progress: a callable taking a Progress after each pass (returning True stops), or
        True for a tqdm bar when tqdm is installed. May be called again after a stop to go on.
        Ctrl-C stops after the pass under way and raises KeyboardInterrupt (the samples kept)."""
        bar = None
        cb = progress
        if progress is True:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                bar = tqdm(unit="spp")
                cb = tqdm_progress(bar)
            else:
                cb = None
        elif progress is False:
            cb = None
        wrapped = None if cb is None else (lambda *a: cb(Progress(*a)))
        try:
            self._r.render(wrapped)
        finally:
            if bar is not None:
                bar.close()
        return self.image()

    def passes(self, n: int = 1, spp: int = 1) -> int:
        """Runs n passes of spp samples per pixel each (never beyond the spp target) and returns
        the samples per pixel added (0 once the target is reached)."""
        return self._r.passes(int(n), int(spp))

    def cancel(self) -> None:
        """Asks a render running in another thread to stop after the pass under way."""
        self._r.cancel()

    def reset(self) -> None:
        """Drops the samples taken: the next pass starts a new image."""
        self._r.reset()

    @property
    def spp(self) -> int:
        """Samples per pixel taken so far."""
        return self._r.spp()

    def stats(self) -> dict:
        """seconds, spp, samples, rays, shadow_rays, bad_samples, threads, width, height, device, kernel."""
        return self._r.stats()

    # -- camera and size ---------------------------------------------------------------------
    @property
    def camera(self) -> dict:
        """This renderer's camera (eye, lookat, up, fov_y, lens_radius, focus_distance). Assigning
        a dict of the keys to change moves it and restarts the accumulation."""
        return self._r.get_camera()

    @camera.setter
    def camera(self, c: dict) -> None:
        self._r.set_camera(dict(c))

    def look_at(self, eye: Sequence[float], lookat: Optional[Sequence[float]] = None,
                up: Optional[Sequence[float]] = None, fov_y: Optional[float] = None) -> None:
        """Moves the camera (restarts the accumulation)."""
        c: dict = {"eye": tuple(eye)}
        if lookat is not None:
            c["lookat"] = tuple(lookat)
        if up is not None:
            c["up"] = tuple(up)
        if fov_y is not None:
            c["fov_y"] = float(fov_y)
        self._r.set_camera(c)

    def orbit(self, degrees: float) -> None:
        """Turns this renderer's camera about its up direction around the look-at point."""
        c = self._r.get_camera()
        eye, at, up = (np.array(c[k], dtype=np.float64) for k in ("eye", "lookat", "up"))
        k = up / np.linalg.norm(up)
        v = eye - at
        t = np.radians(degrees)
        v = v * np.cos(t) + np.cross(k, v) * np.sin(t) + k * np.dot(k, v) * (1 - np.cos(t))
        self._r.set_camera({"eye": tuple(at + v)})

    def resize(self, width: int, height: int) -> None:
        """A new image size (accumulation restarts)."""
        self._r.set_resolution(int(width), int(height))

    def pick_depth(self, x: int, y: int) -> Optional[float]:
        """Distance along the view axis to the surface seen through pixel (x, y), or None."""
        return self._r.pick_depth(int(x), int(y))

    # -- images ------------------------------------------------------------------------------
    def image(self) -> Image:
        """The current estimate: a copy, float32 (height, width, 3), linear RGB."""
        return _image(self._r.image())

    def aov(self, name: str) -> Image:
        """An AOV asked for at creation (aovs=...): albedo, normal (3 channels), depth, samples,
        variance (1 channel); a copy, float32 (height, width, channels)."""
        return _image(self._r.aov(name))

    def sample_counts(self) -> np.ndarray:
        """Samples taken per pixel: uint32 (height, width)."""
        buf, h, w = self._r.sample_counts()
        return np.frombuffer(buf, dtype=np.uint32).reshape(h, w)

    def rgb8(self, tonemap: str = "clamp", exposure: float = 0.0) -> np.ndarray:
        """The image as 8-bit sRGB through the look, uint8 (height, width, 3) (tone-mapped on the
        GPU when rendering there)."""
        buf, h, w = self._r.rgb8(tonemap, float(exposure))
        return np.frombuffer(buf, dtype=np.uint8).reshape(h, w, 3)

    def save(self, path: PathLike, tonemap: Optional[str] = None, exposure: float = 0.0,
             aovs: Union[None, str, Sequence[str]] = None) -> None:
        """Writes the image (.png through the look, .exr with the AOVs as layers, .pfm); aovs
        written beside a .png/.pfm as PATH.NAME.png."""
        if aovs is not None and not isinstance(aovs, str):
            aovs = ",".join(aovs)
        self._r.save(os.fspath(path), tonemap, float(exposure), aovs)

    def denoise(self, device: str = "auto") -> Image:
        """The current image through Open Image Denoise, with the albedo and normal guides when
        the renderer computes them."""
        al = nr = None
        want = self.options.get("aovs") or ""
        if "albedo" in want:
            al = self.aov("albedo")
            if "normal" in want:
                nr = self.aov("normal")
        return denoise(self.image(), albedo=al, normal=nr, device=device)

    def save_checkpoint(self, path: PathLike) -> None:
        self._r.save_checkpoint(os.fspath(path))

    def load_checkpoint(self, path: PathLike) -> None:
        self._r.load_checkpoint(os.fspath(path))

    def _repr_png_(self) -> bytes:
        return _png(self.rgb8())

    def __repr__(self) -> str:
        if not hasattr(self, "_r"):
            return "<caustic.Renderer (not created)>"
        st = self.stats()
        return f"<caustic.Renderer {st['width']}x{st['height']} {st['spp']} spp on {st['device']}>"


def render(scene: Union[Scene, PathLike] = "cornell", progress: Any = None, **options: Any) -> Image:
    """Renders a scene (a Scene, a file path or a built-in name) and returns the image: float32
    (height, width, 3), linear RGB, a copy.

        img = caustic.render("cornell", spp=16)
    """
    return Renderer(scene, **options).render(progress=progress)


Renderer.__doc__ = (Renderer.__doc__ or "") + "\n" + _OPTION_DOC
render.__doc__ = (render.__doc__ or "") + "\n" + _OPTION_DOC
