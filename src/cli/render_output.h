/* What `caustic render` writes besides rendering: the output image through the chosen exposure
 * and tone map (8-bit files only), live previews during the render (--preview-every), and the
 * denoised image next to the noisy one (--denoise). Kept out of main.c's argument handling so
 * that the viewer can reuse the same pieces. */
#ifndef CAUSTIC_CLI_RENDER_OUTPUT_H
#define CAUSTIC_CLI_RENDER_OUTPUT_H

#include <stddef.h>

#include "caustic.h"

typedef struct render_output {
    const char *path;         /* the output image (-o) */
    caustic_look look;        /* --exposure, --tonemap */
    double preview_every;     /* seconds between previews (0 = none) */
    double last_preview;      /* timer_now() of the last preview (or of the start) */
    int previews;             /* previews written */
    int preview_failed;       /* a preview failed: said once, not again */
    unsigned aovs;            /* --aov: the AOVs written (caustic_aov mask) */
    int denoise;              /* --denoise */
    int denoise_guides;       /* --denoise-guides on (default): albedo and normal AOVs guide it */
    char denoised_path[1024]; /* out.png -> out.denoised.png (when denoise) */
    int denoised;             /* the denoised image was written */
    double denoise_seconds;
    char denoise_device[16];
} render_output;

void render_output_init(render_output *o, const char *path);
/* Names the denoised file: the output's name with ".denoised" before the extension, and loads
 * Open Image Denoise; where it is missing, says so (once, now) and leaves denoising off. -1 if
 * the name does not fit. With guides, the AOVs it needs are added to opt->aovs. */
int render_output_set_denoise(render_output *o, caustic_options *opt);
/* Called between passes: writes the current image to the output path (atomically: temp file +
 * rename) when preview_every seconds have passed since the last one (now: cli_now()). */
void render_output_preview(render_output *o, caustic_renderer *r, double now);
/* The final image, the AOVs asked for beside it (PNG, PFM; an EXR holds them as layers) (and,
 * with denoise, the denoised one, guided by the albedo and normal AOVs, on the GPU where the
 * render ran there and OIDN's CUDA device loads, else on the CPU; where Open Image Denoise is missing this
 * says so once and writes the noisy image only). 0, or -1 with the message in err. */
int render_output_save(render_output *o, caustic_renderer *r, char *err, size_t errlen);
/* Open Image Denoise for r's images: its CUDA device where r renders on the GPU (when that device
 * does not load, said on stderr), else its CPU device. NULL with why. */
caustic_denoiser *denoiser_for(caustic_renderer *r, char *why, size_t n);
/* r's current estimate denoised into out (width*height*3 floats); guided: by r's albedo and
 * normal AOVs where r computes them (CAUSTIC_AOV_ALBEDO, CAUSTIC_AOV_NORMAL in its options). */
int denoise_render(caustic_denoiser *d, caustic_renderer *r, int guided, float *out, char *err, size_t errlen);
/* Extra fields for the summary line: " previews=N denoised=PATH denoise_s=S", or "". */
void render_output_summary(const render_output *o, char *buf, size_t n);

#endif
