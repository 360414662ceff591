/* libcaustic: a physically based renderer.
 *
 *   caustic_scene *scene;
 *   if (caustic_scene_load(&scene, "cornell", err, sizeof err)) { puts(err); ... }
 *   caustic_options opt; caustic_options_init(&opt); opt.spp = 64;
 *   caustic_renderer *r = caustic_renderer_create(scene, &opt, err, sizeof err);
 *   caustic_render(r, my_progress, NULL, err, sizeof err);
 *   caustic_save_image(r, "out.png", err, sizeof err);
 *   caustic_renderer_free(r); caustic_scene_free(scene);
 *
 * All functions returning int return 0 on success and nonzero on failure, with a one-line
 * message in `err` (err may be NULL with errlen 0). The library does not print: warnings go to
 * the log callback (caustic_set_log). It does not exit either, except caustic_dist_stop(failed) on
 * rank 0 of a distributed job, which ends the whole job (MPI_Abort) where MPI leaves no other way;
 * an MPI start-up that never returns is reported (caustic_dist_start returns -2) for the caller to
 * end the process. */
#ifndef CAUSTIC_H
#define CAUSTIC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct caustic_scene caustic_scene;
typedef struct caustic_renderer caustic_renderer;

typedef enum caustic_schedule {
    CAUSTIC_SCHEDULE_TILES = 0,       /* dynamic 32x32 tiles (default) */
    CAUSTIC_SCHEDULE_ROWS = 1,        /* dynamic rows */
    CAUSTIC_SCHEDULE_ROWS_STATIC = 2, /* one contiguous block of rows per thread */
    CAUSTIC_SCHEDULE_PIXELS = 3       /* dynamic single pixels */
} caustic_schedule;

typedef enum caustic_device {
    CAUSTIC_DEVICE_AUTO = 0, /* the GPU when one is present, else the CPU */
    CAUSTIC_DEVICE_CPU = 1,
    CAUSTIC_DEVICE_CUDA = 2
} caustic_device;

typedef enum caustic_gpu_mode {
    CAUSTIC_GPU_MEGA = 0,     /* one thread per pixel runs whole paths (default) */
    CAUSTIC_GPU_WAVEFRONT = 1 /* a pool of paths, one kernel per stage, queues between them */
} caustic_gpu_mode;

typedef enum caustic_gpu_bvh {
    CAUSTIC_GPU_BVH_SAH = 0,  /* the host's binned-SAH BVH, uploaded (default) */
    CAUSTIC_GPU_BVH_LBVH = 1, /* a linear BVH built on the GPU (Morton codes, Karras 2012) */
    CAUSTIC_GPU_BVH_CWBVH = 2 /* the host's SAH BVH as compressed 8-wide nodes (Ylitie et al. 2017) */
} caustic_gpu_bvh;

typedef enum caustic_sampler {
    CAUSTIC_SAMPLER_RANDOM = 0,
    CAUSTIC_SAMPLER_STRATIFIED = 1,
    CAUSTIC_SAMPLER_SOBOL = 2
} caustic_sampler;

typedef enum caustic_integrator {
    CAUSTIC_INTEGRATOR_PT = 0,   /* path tracing with NEE and MIS (CPU and GPU) */
    CAUSTIC_INTEGRATOR_LT = 1,   /* light tracing: particles connected to the camera */
    CAUSTIC_INTEGRATOR_BDPT = 2, /* bidirectional path tracing, MIS over all connections */
    CAUSTIC_INTEGRATOR_PPM = 3,  /* progressive photon mapping */
    CAUSTIC_INTEGRATOR_BPM = 4,  /* bidirectional photon mapping */
    CAUSTIC_INTEGRATOR_VCM = 5   /* vertex connection and merging */
} caustic_integrator;

/* The largest spp target: scene files (ITERATIONS), --spp and checkpoints share it. */
#define CAUSTIC_MAX_SPP (1 << 30)

#define CAUSTIC_MAX_GPUS 16

/* Zero/negative fields mean "take it from the scene file" (or the default). Always start from
 * caustic_options_init, which sets `size`: caustic_renderer_create refuses options whose size is
 * not this library's (a program built against another caustic.h, or options never initialised),
 * so fields can be added without a silent misreading. */
#define CAUSTIC_OPTIONS_SIZE ((uint32_t)sizeof(caustic_options))
typedef struct caustic_options {
    uint32_t size;     /* sizeof(caustic_options) as the caller compiled it: set by caustic_options_init */
    int width, height; /* resolution */
    int spp;           /* samples per pixel */
    double time_limit; /* seconds; stops after the pass that crosses it (0 = none) */
    int threads;       /* worker threads (0 = all cores) */
    uint32_t seed;     /* results depend only on the seed */
    int max_depth;     /* maximum bounces (-1 = scene) */
    caustic_schedule schedule;
    caustic_sampler sampler;
    caustic_device device;
    float clamp;                   /* firefly clamp: max luminance of one sample (0 = off; biased) */
    float adaptive;                /* adaptive sampling: stop a pixel when the relative standard error
                                 of its mean luminance is below this (0 = off), */
    int adaptive_min_spp;          /* but not before this many samples (0 = 16) */
    caustic_integrator integrator; /* GPU or CPU (device); for all but PT spp counts iterations
                                 (one light and one camera sub-path per pixel each) */
    float merge_radius;            /* PPM/BPM/VCM initial radius as a fraction of the scene's
                                 bounding-sphere radius (0 = 0.003) */
    float merge_alpha;             /* radius reduction r_i = r_1 i^((alpha-1)/2) (0 = 0.75) */
    int merge_everywhere;          /* VCM: merge at every non-specular vertex, as SmallVCM does, not
                                 only between two glossy ones (docs/internals.md) */
    caustic_gpu_mode gpu_mode;     /* CUDA backend: megakernel or wavefront */
    caustic_gpu_bvh gpu_bvh;       /* CUDA backend: which BVH the GPU traces */
    int adaptive_depth;            /* nonzero: the first samples of a pixel trace shorter paths, the
                                 depth limit growing from 4 with each doubling of the sample count;
                                 contributions are weighted by path length so that the image at
                                 the spp target is unbiased (docs/internals.md). Path tracing
                                 only; not with adaptive sampling */
    int ngpus;                     /* CUDA devices by index, gpus[0..ngpus): --device cuda:0,2 (a device
                                 may repeat); 0 = every visible device (several: one host thread
                                 each, pulling work from one queue) */
    int gpus[CAUSTIC_MAX_GPUS];
    unsigned aovs; /* AOVs to compute: CAUSTIC_AOV_MASK(...) of caustic_aov, 0 = none */
    /* Render only the window [crop[0], crop[2]) x [crop[1], crop[3]) of the width x height image
     * (pixels; all 0 = the whole image): the renderer's image is that window alone, seen as in the
     * whole image (pbrt's --pixelbounds; its samples are not those of the whole image's pixels).
     * Path tracing only; a renderer with a crop window keeps its camera and resolution. */
    int crop[4];
} caustic_options;

/* AOVs (arbitrary output variables), per pixel next to the image: what denoisers take as guides
 * and compositing uses. Albedo, normal and depth are traced per sample along a camera ray
 * through the pixel (path tracing: the path's own camera ray; the bidirectional integrators: a
 * camera ray of its own per iteration, jittered in the pixel) and averaged over the pixel's
 * samples: first-hit albedo and shading normal, followed through perfect mirrors and glass (the
 * material's own sampling picks reflection or refraction) to the first surface that is not a
 * perfect specular, whose albedo is multiplied by the chain's tint. Where the ray leaves the
 * scene: the environment's radiance clamped to [0, 1] as albedo, a zero normal. Samples and
 * variance come from the film's own sums. Every backend computes them on CPU and GPU, except
 * distributed renders over several MPI ranks (refused). */
typedef enum caustic_aov {
    CAUSTIC_AOV_ALBEDO = 0,   /* 3 channels: linear RGB reflectance in [0, 1] */
    CAUSTIC_AOV_NORMAL = 1,   /* 3: world-space shading normal (facing the surface's outside) */
    CAUSTIC_AOV_DEPTH = 2,    /* 1: distance from the camera to the first hit, mean over the
                                 samples that hit something; +infinity where none did */
    CAUSTIC_AOV_SAMPLES = 3,  /* 1: samples taken */
    CAUSTIC_AOV_VARIANCE = 4, /* 1: variance of the pixel's mean luminance (sample variance over
                                 the sample count; 0 below 2 samples) */
    CAUSTIC_AOV_COUNT = 5
} caustic_aov;
#define CAUSTIC_AOV_MASK(a) (1u << (unsigned)(a))

typedef struct caustic_scene_stats {
    size_t triangles, spheres, quads, primitives, materials, textures, lights, vertices;
    float bounds_lo[3], bounds_hi[3];
    size_t bvh_nodes, bvh_leaves;
    int bvh_width; /* 4 or 8: the CPU kernel's (caustic_cpu_isa) */
    int bvh_max_depth, bvh_max_leaf;
    double bvh_sah_cost, bvh_build_seconds;
    double bvh_wide_sah_cost;          /* the bvh_width-wide tree's (bvh_sah_cost: the binary tree's) */
    size_t memory_bytes;               /* kernel-side scene data incl. BVH */
    int width, height, spp, max_depth; /* the scene file's render settings */
    int integrator;            /* the integrator the scene file names (caustic_integrator; pbrt's Integrator), or -1 */
    size_t media;              /* participating media (the scene JSON's Media section) */
    const char *camera_medium; /* the medium around the camera (its name, valid while the scene
                                           is), or NULL: the vacuum */
    /* instancing (docs/scene-format.md, "Instancing"): placements (0: none, one BVH level), the
     * meshes they place, and the primitives they put in the world (each placement's mesh counted
     * again; `primitives` counts the ones held) */
    size_t instances, instanced_meshes, placed_primitives;
    size_t grid_media;  /* of media, the voxel grids (TYPE Grid) */
    size_t voxel_bytes; /* their voxels: density, albedo and majorant grids (in memory_bytes too) */
} caustic_scene_stats;

typedef struct caustic_progress {
    int spp_done, spp_target;
    double elapsed, time_limit; /* seconds */
    double fraction;            /* 0..1, whichever of spp/time is nearer to done */
    double samples_per_second;
} caustic_progress;

typedef struct caustic_render_stats {
    double seconds;
    int spp;
    uint64_t samples, rays, bad_samples; /* bad: NaN/Inf samples caught and dropped */
    /* Of rays, the path tracer's shadow rays (next-event estimation); rays - shadow_rays are path
     * segments (camera and bounce rays). 0 for the bidirectional integrators; after
     * caustic_checkpoint_load, counted from the resume on (checkpoints keep the total only). */
    uint64_t shadow_rays;
    int threads, width, height;
    const char *device; /* "cpu" or "cuda" */
    /* The GPU path tracer's megakernel variant, the smallest compiled for a set of scene features
     * that covers the scene's ("diffuse", "textured", "opaque", "all": docs/internals.md, CUDA
     * backend); NULL elsewhere (CPU, wavefront, bidirectional, several devices). */
    const char *kernel;
} caustic_render_stats;

/* Return nonzero to stop rendering after the current pass. */
typedef int (*caustic_progress_fn)(void *user, const caustic_progress *p);

const char *caustic_version(void);
/* What this build was compiled with, one "feature: yes|no (...)" line each (cuda, mpi, gltf) and
 * the CPU kernel levels compiled in, with the one in use; no trailing newline. */
void caustic_build_features(char *buf, size_t n);

/* Receives one line: a warning or note ("FILE: JSON.PATH: problem", "cuda: ...; rendering on
 * the CPU", ...). */
typedef void (*caustic_log_fn)(void *user, const char *message);
/* Where the library's warnings go, for the whole process (NULL, the default: dropped). Scene
 * loading sends its warnings here too unless caustic_load_options.warning names another sink.
 * Set it before using the library from several threads. */
void caustic_set_log(caustic_log_fn fn, void *user);

/* A scene file or a built-in scene name (see caustic_builtin_scenes). Scene files: caustic /
 * CIS 5650 JSON with the course projects' dialect keys, the older CIS 565 text format, a model
 * (.obj, .ply) that gets an automatic camera, environment, key light and ground plane, or a glTF
 * 2.0 file (.gltf, .glb: its own camera and lights; without lights, the models' rig)
 * (docs/scene-format.md). Dialect keys caustic maps or ignores are dropped silently here; use
 * caustic_scene_load_ex to see them. */
int caustic_scene_load(caustic_scene **out, const char *path_or_name, char *err, size_t errlen);

/* Receives one warning line ("FILE: JSON.PATH: problem"): the log callback's type. */
typedef caustic_log_fn caustic_warning_fn;
typedef struct caustic_load_options {
    int strict;                 /* every warning is an error */
    caustic_warning_fn warning; /* NULL: warnings go to the log callback (caustic_set_log) */
    void *warning_user;
    const char *dump_scene; /* if set: write the scene read as caustic JSON to this file (the
                                   quick look's generated scene, a converted text scene, or the
                                   JSON file itself), replacing it atomically; where the
                                   scene has no JSON form (a glTF file with its own lights or
                                   camera, a built-in made in code) the load fails saying so */
    /* "PATH=VALUE" overrides of scene keys (caustic render -D), applied before the scene is
     * read: PATH as the loader's messages name keys (Camera.RES, Materials.light.EMITTANCE,
     * Objects[2].TRANS), VALUE JSON or else a string; an unknown key is an error. JSON and text
     * scenes, models' quick looks and the JSON built-ins; others refuse them. */
    const char *const *defines;
    int ndefines;
} caustic_load_options;
void caustic_load_options_init(caustic_load_options *o);
int caustic_scene_load_ex(caustic_scene **out, const char *path_or_name, const caustic_load_options *o, char *err,
                          size_t errlen);
const char *const *caustic_builtin_scenes(void); /* NULL-terminated */
/* Did you mean: the entry of the NULL-terminated `candidates` closest to `word` (case-insensitive
 * edit distance; one edit for words of up to 3 characters, two otherwise), or NULL if none is
 * that close. Used for scene keys and for the command line's flags, commands and scene names. */
const char *caustic_suggest(const char *word, const char *const *candidates);
/* Turns the scene's camera about its up direction around its look-at point by `degrees` (the
 * turntable path of `caustic render --frames`); renderers created afterwards see it. */
int caustic_scene_orbit(caustic_scene *s, double degrees, char *err, size_t errlen);
int caustic_scene_stats_get(const caustic_scene *s, caustic_scene_stats *st);
void caustic_scene_free(caustic_scene *s);

void caustic_options_init(caustic_options *opt);
int caustic_parse_schedule(const char *name, caustic_schedule *out);
int caustic_parse_sampler(const char *name, caustic_sampler *out);
int caustic_parse_device(const char *name, caustic_device *out);
/* --device's value into o: auto | cpu | cuda | cuda:I,J,... (CUDA devices by index); -1 if malformed. */
int caustic_options_set_device(caustic_options *o, const char *spec);
int caustic_parse_integrator(const char *name, caustic_integrator *out); /* pt lt bdpt ppm bpm vcm */
int caustic_parse_gpu_mode(const char *name, caustic_gpu_mode *out);     /* mega wavefront */
int caustic_parse_gpu_bvh(const char *name, caustic_gpu_bvh *out);       /* sah lbvh cwbvh */
const char *caustic_integrator_name(caustic_integrator i);
/* The CPU kernels' ISA level in use, e.g. "avx2 (AVX2+FMA, 8-wide BVH)": the best the CPU
 * supports, or the environment's CAUSTIC_ISA (sse | avx2). NULL with the reason in err when
 * CAUSTIC_ISA names a level this CPU or build lacks (caustic_scene_load and
 * caustic_renderer_create then refuse with that message). */
const char *caustic_cpu_isa(char *err, size_t errlen);
/* One line per CUDA device (or why there is none) into buf. */
void caustic_describe_devices(char *buf, size_t n);

caustic_renderer *caustic_renderer_create(caustic_scene *s, const caustic_options *opt, char *err, size_t errlen);
/* Renders until the spp target or time limit (whichever first), or until `progress` asks to
 * stop. May be called again after a stop to continue. Nonzero, with the reason in err, when a
 * pass fails (the image keeps the passes before it). */
int caustic_render(caustic_renderer *r, caustic_progress_fn progress, void *user, char *err, size_t errlen);
/* Asks a running caustic_render to stop at the next safe point: a finished tile of path tracing
 * (CPU), a finished iteration of the bidirectional integrators, a finished pass on the GPU. The
 * samples taken stay in the film (images and checkpoints of it are exact; a resumed render
 * continues each pixel from its count). Async-signal-safe (one lock-free atomic store): a
 * SIGINT handler may call it. caustic_render then returns 0 at once. */
void caustic_cancel(caustic_renderer *r);
/* The current estimate: width*height*3 linear RGB floats, row-major, top row first. (A film
 * that cannot be read back from the GPU leaves the last one read, with a log line.) */
const float *caustic_image(caustic_renderer *r, int *width, int *height);
/* Samples taken per pixel (differs between pixels with adaptive sampling). */
const uint32_t *caustic_sample_counts(caustic_renderer *r, int *width, int *height);
void caustic_render_stats_get(const caustic_renderer *r, caustic_render_stats *st);
/* .png (8-bit sRGB), .exr (linear half) or .pfm (linear float); written atomically. An .exr
 * also holds the AOVs the renderer computes as layers: albedo.R/G/B, normal.X/Y/Z, depth.Z,
 * samples.Y, variance.Y (32-bit float). */
int caustic_save_image(caustic_renderer *r, const char *path, char *err, size_t errlen);
/* Comma-separated AOV names (albedo, normal, depth, samples, variance) to a mask; -1 on an
 * unknown or empty name. */
int caustic_parse_aovs(const char *list, unsigned *mask);
const char *caustic_aov_name(caustic_aov a); /* "albedo", ...; "?" for others */
int caustic_aov_channels(caustic_aov a);     /* 3 or 1; 0 for others */
/* The current mean of an AOV the renderer computes (options.aovs): width*height*channels
 * floats, row-major, top row first, valid until the next call for the same AOV; NULL if it was
 * not asked for. */
const float *caustic_aov_image(caustic_renderer *r, caustic_aov a, int *channels);
/* Writes each AOV of `mask` that the renderer computes beside an output path that holds one
 * image (.png, .pfm): PATH with ".NAME" before the extension (out.png -> out.albedo.png, out.normal.png,
 * ...). PNG shows albedo as a colour (sRGB), the normal as (n + 1) / 2, depth, samples and
 * variance as grey scaled by their largest finite value (depth: nearer is darker; where
 * nothing was hit, white); PFM holds the values. An .exr path writes nothing (its layers hold
 * them, caustic_save_image). */
int caustic_save_aovs(caustic_renderer *r, const char *path, unsigned mask, char *err, size_t errlen);
/* Checkpoints hold the raw accumulation, so a resumed render equals an uninterrupted one. */
int caustic_checkpoint_save(caustic_renderer *r, const char *path, char *err, size_t errlen);
int caustic_checkpoint_load(caustic_renderer *r, const char *path, char *err, size_t errlen);
/* Before a long render: could path be written (replaced atomically) later? Its directory must
 * exist and be writable and path must not be a directory; 0, or -1 with "PATH: WHAT: reason". */
int caustic_check_writable(const char *path, const char *what, char *err, size_t errlen);
void caustic_renderer_free(caustic_renderer *r);

/* ---- steering: camera, resolution, accumulation, passes (an interactive viewer's loop) --------
 *
 *   caustic_camera c; caustic_renderer_get_camera(r, &c);
 *   c.eye[0] += 1; caustic_renderer_set_camera(r, &c, err, sizeof err);  // restarts accumulation
 *   caustic_render_passes(r, 1, 4, err, sizeof err);                      // 4 more spp, then back
 *   caustic_image_rgb8(r, &look, pixels, err, sizeof err);                // on the GPU when there */
typedef struct caustic_camera {
    double eye[3], lookat[3], up[3];
    double fov_y;          /* full vertical field of view, degrees, in (0, 180) */
    double lens_radius;    /* thin lens: aperture radius in scene units (0 = pinhole) */
    double focus_distance; /* thin lens: distance to the plane in focus (0 = |lookat - eye|) */
} caustic_camera;

/* The scene's camera: what renderers created afterwards start with. */
void caustic_scene_get_camera(const caustic_scene *s, caustic_camera *c);
int caustic_scene_set_camera(caustic_scene *s, const caustic_camera *c, char *err, size_t errlen);
/* Reads the "Camera" object of a scene file (any dialect; what caustic_camera_to_json writes) into
 * the scene's camera and resolution. */
int caustic_scene_load_camera(caustic_scene *s, const char *path, char *err, size_t errlen);
/* The camera as a scene file's {"Camera": {...}} for an image of width x height; returns the
 * length snprintf would (the text is cut to n - 1 characters). */
int caustic_camera_to_json(const caustic_camera *c, int width, int height, char *buf, size_t n);
void caustic_renderer_get_camera(const caustic_renderer *r, caustic_camera *c);
/* Moves this renderer's camera (other renderers over the scene keep theirs) and restarts the
 * accumulation. Refused, keeping the old camera, when the camera is degenerate (eye == lookat, up
 * along the view) or the backend cannot render it (a lens with a bidirectional integrator). */
int caustic_renderer_set_camera(caustic_renderer *r, const caustic_camera *c, char *err, size_t errlen);
/* A new image size (the backend is restarted; accumulation starts again). */
int caustic_renderer_set_resolution(caustic_renderer *r, int width, int height, char *err, size_t errlen);
/* Drops the samples taken: the next pass starts a new image (statistics restart too). */
int caustic_renderer_reset(caustic_renderer *r, char *err, size_t errlen);
/* Runs `passes` passes of `spp` samples per pixel each (never beyond the spp target) and returns:
 * the samples per pixel added (0 once the target is reached), or -1 with err. Distributed
 * renderers render with caustic_render only. */
int caustic_render_passes(caustic_renderer *r, int passes, int spp, char *err, size_t errlen);
/* Samples per pixel taken so far (the same as caustic_render_stats's spp). */
int caustic_renderer_spp(const caustic_renderer *r);
/* Distance along the camera's forward axis to the first surface seen through pixel (x, y) (the
 * pixel's centre): click-to-focus. 0 with *depth set, or -1 when the pixel sees no surface. */
int caustic_renderer_pick_depth(caustic_renderer *r, int x, int y, double *depth);

/* ---- display images: exposure and tone map (kernel/tonemap.h, the same on CPU and GPU) ------- */
typedef enum caustic_tonemap {
    CAUSTIC_TONEMAP_CLAMP = 0, /* identity, values above 1 clip (the default) */
    CAUSTIC_TONEMAP_ACES = 1,  /* Hill's fit of ACES (filmic) */
    CAUSTIC_TONEMAP_AGX = 2    /* AgX, Blender's default view */
} caustic_tonemap;
typedef struct caustic_look {
    caustic_tonemap tonemap;
    float exposure; /* EV: the linear image is scaled by 2^exposure first */
} caustic_look;
void caustic_look_init(caustic_look *l);                           /* clamp, 0 EV */
int caustic_parse_tonemap(const char *name, caustic_tonemap *out); /* clamp aces agx */
const char *caustic_tonemap_name(caustic_tonemap t);
/* The current estimate as width*height*3 bytes of sRGB through `look` (NULL: clamp, 0 EV).
 * Rendering on the GPU, the tone map runs there and only the bytes come back. */
int caustic_image_rgb8(caustic_renderer *r, const caustic_look *look, unsigned char *rgb8, char *err, size_t errlen);
/* caustic_save_image through `look` (8-bit formats only; .exr/.pfm stay linear). */
int caustic_save_image_look(caustic_renderer *r, const char *path, const caustic_look *look, char *err, size_t errlen);

/* ---- images on their own (files, comparison, tone mapping, denoising) ------------------------ */
typedef struct caustic_rgb_image {
    int width, height;
    float *rgb; /* linear RGB, 3 floats per pixel, row-major, top row first */
} caustic_rgb_image;
int caustic_image_init(caustic_rgb_image *img, int width, int height, char *err, size_t errlen); /* zeroed */
void caustic_image_free(caustic_rgb_image *img);
/* .png, .exr, .pfm (and what stb_image reads), the format from the content; PNGs are decoded to linear. */
int caustic_image_load(caustic_rgb_image *img, const char *path, char *err, size_t errlen);
/* By extension: .png through `look` (NULL: clamp, 0 EV), .exr (half; exr_float: 32-bit) or .pfm
 * linear. Atomic (temp file + rename). */
int caustic_image_save(const caustic_rgb_image *img, const char *path, const caustic_look *look, int exr_float,
                       char *err, size_t errlen);
/* width*height*3 bytes as a PNG, atomically. */
int caustic_image_save_rgb8(const unsigned char *rgb8, int width, int height, const char *path, char *err,
                            size_t errlen);
/* npixels linear RGB pixels -> 8-bit sRGB through look (NULL: clamp, 0 EV). */
void caustic_tonemap_rgb8(const caustic_look *look, const float *rgb, size_t npixels, unsigned char *out);
/* On the 8-bit sRGB values a viewer sees (docs/image-metrics.md): pixels that differ, RMSE in
 * 8-bit units, PSNR (dB; infinite for equal images), mean SSIM. */
typedef struct caustic_image_metrics {
    double ae, rmse, psnr, ssim;
} caustic_image_metrics;
int caustic_image_compare(const caustic_rgb_image *a, const caustic_rgb_image *b, caustic_image_metrics *m, char *err,
                          size_t errlen);

/* Intel Open Image Denoise, loaded at run time: caustic_denoise_load says why it is missing. */
typedef struct caustic_denoiser caustic_denoiser;
int caustic_denoise_load(char *err, size_t errlen);
caustic_denoiser *caustic_denoiser_create(char *err, size_t errlen); /* OIDN's device: GPU if any, else CPU */
typedef enum caustic_denoise_device {
    CAUSTIC_DENOISE_AUTO = 0, /* OIDN's choice: a supported GPU if any, else the CPU */
    CAUSTIC_DENOISE_CPU = 1,
    CAUSTIC_DENOISE_CUDA = 2 /* OIDN's CUDA device; NULL with err where it does not load */
} caustic_denoise_device;
caustic_denoiser *caustic_denoiser_create_on(caustic_denoise_device device, char *err, size_t errlen);
/* color (and the optional guides albedo and normal, NULL = none; a normal needs an albedo):
 * width*height*3 floats; out (may equal color) gets the denoised image. */
int caustic_denoise(caustic_denoiser *d, const float *color, const float *albedo, const float *normal, int width,
                    int height, float *out, char *err, size_t errlen);
const char *caustic_denoiser_device(const caustic_denoiser *d); /* "cpu", "cuda", ... */
void caustic_denoiser_free(caustic_denoiser *d);

/* ---- scenes built in code ---------------------------------------------------------------------
 * An empty scene (camera at (0,0,5) looking at the origin, 45 degrees, 800x800, no environment);
 * add materials, then shapes and lights, then create renderers. Area lights are shapes with an
 * emitting material. Shapes and lights cannot be added once a renderer was created on it. */
typedef enum caustic_material_kind {
    CAUSTIC_MATERIAL_DIFFUSE = 0,               /* Lambertian: color */
    CAUSTIC_MATERIAL_MIRROR = 1,                /* perfect mirror: color as reflectance */
    CAUSTIC_MATERIAL_CONDUCTOR = 2,             /* rough metal (GGX): color as F0, roughness */
    CAUSTIC_MATERIAL_GLASS = 3,                 /* smooth dielectric: ior, color as tint */
    CAUSTIC_MATERIAL_EMITTER = 4,               /* emits `emission`, reflects nothing */
    CAUSTIC_MATERIAL_PHONG = 5,                 /* Lambertian color + Phong lobe (specular, exponent) */
    CAUSTIC_MATERIAL_PBR = 6,                   /* glTF metallic-roughness: color, metallic, roughness */
    CAUSTIC_MATERIAL_ROUGH_GLASS = 7,           /* rough dielectric (GGX): ior, roughness, color as tint */
    CAUSTIC_MATERIAL_COATED = 8,                /* dielectric coat (ior, coat_roughness, coat_tint) over coat_base:
                                         diffuse (color), conductor (color or metal/eta/k, roughness) or
                                         pbr (color, metallic, roughness) */
    CAUSTIC_MATERIAL_THIN_DIELECTRIC = 9,       /* a thin glass sheet (pbrt thindielectric): ior, color as tint */
    CAUSTIC_MATERIAL_DIFFUSE_TRANSMISSION = 10, /* Lambertian both sides: color reflects, specular transmits */
    CAUSTIC_MATERIAL_INTERFACE = 11,            /* no surface: the boundary of a participating medium */
    CAUSTIC_MATERIAL_KIND_COUNT                 /* the number of kinds (not a kind) */
} caustic_material_kind;
typedef struct caustic_material {
    caustic_material_kind kind;
    float color[3];
    float emission[3]; /* radiance; nonzero on any kind makes its shapes area lights */
    float roughness;   /* conductor, pbr, rough glass: in [0, 1] */
    float ior;         /* glass */
    float metallic;    /* pbr */
    float specular[3]; /* phong; diffuse transmission: the transmittance */
    float exponent;    /* phong */
    int two_sided;     /* emission from both sides of a surface */
    /* conductor, coated over a conductor: a complex index of refraction instead of color as F0:
     * a named metal (Mitsuba 3's names: "Au", "Ag", "Cu", "Al", "Cr", "W", ...; NULL: none) or,
     * with use_eta_k, eta + i k per channel */
    const char *metal;
    int use_eta_k;
    float eta[3], k[3];
    /* coated: the base (CAUSTIC_COAT_BASE_*), the coat's roughness and its transmittance at normal
     * incidence there and back (1, 1, 1: clear) */
    int coat_base;
    float coat_roughness;
    float coat_tint[3];
} caustic_material;
enum { CAUSTIC_COAT_BASE_DIFFUSE = 0, CAUSTIC_COAT_BASE_CONDUCTOR = 1, CAUSTIC_COAT_BASE_PBR = 2 };
void caustic_material_init(caustic_material *m); /* diffuse grey 0.8, ior 1.5, roughness 0.5 */
int caustic_scene_create(caustic_scene **out, char *err, size_t errlen);
/* Each add returns the new item's index (>= 0), or -1 with err. */
int caustic_scene_add_material(caustic_scene *s, const caustic_material *m, char *err, size_t errlen);
int caustic_scene_add_sphere(caustic_scene *s, const double center[3], double radius, int material, char *err,
                             size_t errlen);
/* The parallelogram corner, corner + u, corner + u + v, corner + v; it faces u x v. */
int caustic_scene_add_quad(caustic_scene *s, const double corner[3], const double u[3], const double v[3], int material,
                           char *err, size_t errlen);
/* A triangle mesh from arrays: nvertices xyz positions (normals: nvertices xyz or NULL for flat
 * shading, uvs: nvertices uv or NULL), 3 indices per triangle. */
int caustic_scene_add_mesh(caustic_scene *s, const float *positions, const float *normals, const float *uvs,
                           size_t nvertices, const uint32_t *indices, size_t ntriangles, int material, char *err,
                           size_t errlen);
/* A point light of radiant intensity rgb (W/sr). */
int caustic_scene_add_point_light(caustic_scene *s, const double position[3], const double intensity[3], char *err,
                                  size_t errlen);
/* A constant sky of radiance rgb (0 0 0: none). */
int caustic_scene_set_environment(caustic_scene *s, const double radiance[3], char *err, size_t errlen);
/* The defaults renderers take where caustic_options leaves them 0: resolution, spp, depth. */
int caustic_scene_set_render_defaults(caustic_scene *s, int width, int height, int spp, int max_depth, char *err,
                                      size_t errlen);

/* Distributed rendering over MPI (libcaustic built with Open MPI; docs/internals.md). Call
 * once before loading scenes: when the process was started by mpirun (OMPI_COMM_WORLD_SIZE or
 * PMIX_RANK in the environment) it joins the job and returns its rank and the number of ranks,
 * else rank 0 of 1. If MPI_Init does not return within CAUSTIC_MPI_INIT_TIMEOUT seconds (default
 * 300; a process of the job was lost at start-up) it prints one line and ends the process with
 * status 1. Renderers created afterwards with more than one rank split their work:
 * rank 0's caustic_render coordinates (progress, time limit, its film gets every sample, images
 * and checkpoints are written there), the other ranks' caustic_render renders the work units
 * rank 0 hands out until rank 0 frees its renderer, and they write nothing. `interrupt`
 * (may be NULL) is polled while rank 0 waits for results: a signal handler that sets it stops the
 * render promptly. -1 with err: started by mpirun with several ranks but built without MPI, a
 * bad CAUSTIC_MPI_INIT_TIMEOUT, or MPI_Init failed. -2 with err: MPI_Init has not returned within
 * CAUSTIC_MPI_INIT_TIMEOUT seconds (default 300; a process of the job was lost while it started):
 * MPI's start-up still runs on another thread, so end the process with _exit, not exit. */
int caustic_dist_start(int *rank, int *size, volatile sig_atomic_t *interrupt, char *err, size_t errlen);
/* Leaves the job: after a failure (failed != 0) rank 0 ends the remaining ranks and itself
 * (MPI_Abort); another rank just returns. */
void caustic_dist_stop(int failed);

#ifdef __cplusplus
}
#endif
#endif
