/* caustic view's display: the frame shown (the estimate through the look, the heat map, or the
 * denoised image) and the readout drawn over it and put in the title. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "render_output.h"
#include "view_internal.h"
#include "view_window.h"

/* The frame shown: the heat map, the denoised image (refreshed when still and the spp doubled),
 * or the estimate through the look (on the GPU when rendering there). */
int view_refresh_display(viewer *v, int rendered, int moving, char *err, size_t errlen) {
    size_t n = (size_t)v->width * (size_t)v->height;
    if (v->heatmap) {
        v->shown = VIEW_SHOWN_HEATMAP;
        const uint32_t *count = caustic_sample_counts(v->r, NULL, NULL);
        uint32_t mx = 1;
        for (size_t i = 0; i < n; ++i) mx = count[i] > mx ? count[i] : mx;
        for (size_t i = 0; i < n; ++i)
            v->rgb8[3 * i] = v->rgb8[3 * i + 1] = v->rgb8[3 * i + 2] = (unsigned char)(255.0 * count[i] / mx + 0.5);
        return 0;
    }
    if (v->denoise && v->dn && !moving) {
        int spp = caustic_renderer_spp(v->r);
        if (v->denoised_spp == 0 || spp >= 2 * v->denoised_spp) {
            double t0 = cli_now();
            if (denoise_render(v->dn, v->r, 1, v->den, err, errlen)) return -1;
            v->denoise_seconds = cli_now() - t0;
            v->denoised_spp = spp;
            v->display_dirty = 1;
        }
        if (v->display_dirty) {
            caustic_tonemap_rgb8(&v->look, v->den, n, v->rgb8);
            v->shown = VIEW_SHOWN_DENOISED;
        }
        return 0;
    }
    if (!rendered && !v->display_dirty) return 0;
    v->shown = VIEW_SHOWN_ESTIMATE;
    if (!v->gpu_tonemap) {
        caustic_tonemap_rgb8(&v->look, caustic_image(v->r, NULL, NULL), n, v->rgb8);
        return 0;
    }
    return caustic_image_rgb8(v->r, &v->look, v->rgb8, err, errlen);
}

/* The figures in two parts joined by sep: "\n" for the overlay's two lines, " | " for the title
 * and the summary. */
void view_readout(viewer *v, const char *sep, char *buf, size_t n) {
    caustic_render_stats_get(v->r, &v->st);
    /* the denoiser's state as the frame shown is: a moving view shows the raw estimate */
    char dn[96] = "";
    if (v->denoise && v->shown == VIEW_SHOWN_DENOISED)
        snprintf(dn, sizeof dn, " | denoised at %d spp (%.0f ms)", v->denoised_spp, v->denoise_seconds * 1e3);
    else if (v->denoise && !v->heatmap)
        snprintf(dn, sizeof dn, " | raw, denoiser waits for a still view");
    snprintf(buf, n, "%s %s | %d spp | %.1f Msamples/s | %.1f ms%sEV %+.1f %s%s%s", v->st.device,
             caustic_integrator_name(v->opt.integrator), v->st.spp, v->rate * 1e-6, v->frame_seconds * 1e3, sep,
             v->look.exposure, caustic_tonemap_name(v->look.tonemap), v->heatmap ? " | heat map" : "", dn);
}

/* The keys, as the help over the frame lists them (? or F1). */
static const char *const key_help[][2] = {
    {"left drag", "orbit"},
    {"right/middle drag", "pan"},
    {"wheel", "zoom"},
    {"left click", "focus there (thin lens)"},
    {"w a s d / q e", "fly / down, up"},
    {"[ ]", "field of view"},
    {", .", "aperture (0: pinhole)"},
    {"; '", "focus distance"},
    {"- =", "exposure -/+ 1/2 EV"},
    {"t", "tone map: clamp, aces, agx"},
    {"h", "heat map of samples (--adaptive)"},
    {"n", "denoiser (when still)"},
    {"i", "next integrator"},
    {"o", "readout on/off"},
    {"p", "save the image"},
    {"c", "save the camera"},
    {"r", "camera back to the start"},
    {"? F1", "this help on/off"},
    {"Esc", "quit"},
};

/* The help's text, one key per line. */
static void help_text(char *buf, size_t n) {
    size_t at = (size_t)snprintf(buf, n, "keys");
    for (size_t i = 0; i < sizeof key_help / sizeof key_help[0] && at < n; ++i)
        at += (size_t)snprintf(buf + at, n - at, "\n%-18s %s", key_help[i][0], key_help[i][1]);
}

/* The frame in the window, and every 0.25 s the readout in the title and (when on) over the
 * frame, with the key help (when asked for) and a notice (while it lasts). 0, or -1 with err. */
int view_show(viewer *v, char *err, size_t errlen) {
    double now = cli_now();
    /* (also at the target spp: the last frame rendered shows its final figures) */
    if (now - v->last_title > 0.25 || caustic_renderer_spp(v->r) >= v->opt.spp) {
        char text[2048], title[1024];
        const char *notice = v->notice[0] && now < v->notice_until ? v->notice : NULL;
        size_t at = 0;
        text[0] = 0;
        if (v->help)
            help_text(text, sizeof text);
        else if (v->readout_on) {
            view_readout(v, "\n", text, sizeof text);
            at = strlen(text);
            snprintf(text + at, sizeof text - at, " | ? keys");
        }
        at = strlen(text);
        if (notice) snprintf(text + at, sizeof text - at, "%s%s", at ? "\n" : "", notice);
        if (v->wo->set_overlay(v->win, text[0] ? text : NULL, err, errlen)) return -1;
        view_readout(v, " | ", text, sizeof text);
        snprintf(title, sizeof title, "%.200s | %.700s%s%.100s", v->prog, text, notice ? " | " : "",
                 notice ? notice : "");
        v->wo->set_title(v->win, title);
        v->last_title = now;
    }
    return v->wo->present(v->win, v->rgb8, v->width, v->height, err, errlen);
}
