/* Denoising through Intel Open Image Denoise (OIDN), loaded at run time (dlopen) so that caustic
 * builds and runs without it: set-up (scripts/deps.sh) fetches the library from PyPI's pyoidn
 * wheel into third_party/oidn/lib. Where it is missing, denoise_load says why and callers go on
 * without denoising.
 *
 * Library search: $CAUSTIC_OIDN_LIB (a path to libOpenImageDenoise.so.2; "none" disables OIDN),
 * then the name through the caller's RUNPATH (an installed binary or libcaustic.so: the copy
 * under its prefix, LIBDIR/caustic/oidn/lib) and the system's library path, then the set-up's
 * directory compiled in (CAUSTIC_OIDN_DIR, the build tree's).
 *
 * A denoiser keeps its OIDN device, filter and buffers between calls of the same size, so an
 * interactive viewer can denoise every frame without re-allocating. Not thread-safe: one thread
 * uses a denoiser at a time, and denoise_load is called from one thread. */
#ifndef CAUSTIC_IMAGE_DENOISE_H
#define CAUSTIC_IMAGE_DENOISE_H

#include <stddef.h>

typedef enum denoise_device {
    DENOISE_DEVICE_AUTO = 0, /* OIDN's choice: a supported GPU when there is one, else the CPU */
    DENOISE_DEVICE_CPU = 1,
    DENOISE_DEVICE_CUDA = 2
} denoise_device;

/* Optional guides (NULL = none), each width*height*3 floats like the colour: the first-hit
 * albedo in [0, 1] and the first-hit shading normal in [-1, 1]^3, followed through perfect
 * mirrors and glass. A normal guide needs the albedo guide (OIDN's rule). */
typedef struct denoise_guides {
    const float *albedo;
    const float *normal;
} denoise_guides;

typedef struct denoiser denoiser;

/* Loads OIDN once; later calls return the first result. 0, or -1 with the reason in err. */
int denoise_load(char *err, size_t errlen);
/* The library file that was loaded (after a successful denoise_load), else NULL. */
const char *denoise_library_path(void);

denoiser *denoiser_create(denoise_device device, char *err, size_t errlen);
/* color: width*height scene-linear RGB floats (HDR); out (may equal color) receives the
 * denoised image. guides may be NULL. 0, or -1 with OIDN's message in err. */
int denoiser_run(denoiser *d, const float *color, const denoise_guides *guides, int width, int height, float *out,
                 char *err, size_t errlen);
/* "cpu", "cuda", ... : the device OIDN chose */
const char *denoiser_device_name(const denoiser *d);
void denoiser_free(denoiser *d);

#endif
