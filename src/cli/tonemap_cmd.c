/* caustic tonemap IN OUT: a linear image (a render's .exr/.pfm) to an 8-bit PNG through the
 * exposure and tone map, without rendering again; with several operators, side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "args.h"
#include "cli.h"

static const char *usage_tonemap =
    "usage: caustic tonemap IN OUT.png [--exposure EV] [--tonemap T[,T...]]\n"
    "\n"
    "Writes the linear image IN (.exr, .pfm, .hdr, ...) as an 8-bit sRGB PNG through the exposure\n"
    "(2^EV, default 0) and tone map (clamp | aces | agx, default clamp), as 'caustic render' does.\n"
    "With several tone maps (e.g. clamp,aces,agx) OUT shows them side by side, left to right.\n";

static int fail(const char *fmt, const char *arg) {
    fprintf(stderr, "caustic tonemap: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'caustic tonemap --help' for usage)\n");
    return EXIT_USAGE;
}

int cmd_tonemap(int argc, char **argv) {
    const char *in = NULL, *out = NULL, *ops = "clamp";
    double ev = 0.0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_tonemap, stdout);
            return 0;
        }
        if (!strcmp(a, "--exposure") || !strcmp(a, "--tonemap")) {
            if (!v) return fail("option %s needs a value", a);
            i++;
            if (a[2] == 'e') {
                if (parse_double(v, -64.0, 64.0, &ev))
                    return fail("--exposure: '%s' is not a number of stops in -64..64", v);
            } else
                ops = v;
        } else if (a[0] == '-' && a[1])
            return fail("unknown option '%s'", a);
        else if (!in)
            in = a;
        else if (!out)
            out = a;
        else
            return fail("unexpected argument '%s'", a);
    }
    if (!in || !out) return fail("%s", "needs IN and OUT");
    size_t olen = strlen(out);
    if (olen < 4 || strcasecmp(out + olen - 4, ".png")) return fail("output '%s' must end in .png", out);
    caustic_tonemap op[12];
    int nop = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", ops);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (nop == (int)(sizeof op / sizeof op[0])) return fail("--tonemap: too many operators in '%s'", ops);
        if (caustic_parse_tonemap(t, &op[nop++])) return fail("--tonemap: '%s' is not one of clamp, aces, agx", t);
    }
    if (nop == 0) return fail("--tonemap: '%s' names no operator", ops);

    char err[1024];
    /* the output is checked before the input is decoded and the strip allocated */
    if (caustic_check_writable(out, "cannot write image", err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    caustic_rgb_image src;
    if (caustic_image_load(&src, in, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        return EXIT_USAGE;
    }
    int w = src.width, h = src.height;
    if ((long long)w * nop > 65536) {
        caustic_image_free(&src);
        return fail("%s: too wide for that many panels", in);
    }
    unsigned char *strip = malloc((size_t)w * nop * h * 3), *panel = malloc((size_t)w * h * 3);
    int rc = 0;
    if (!strip || !panel) {
        fprintf(stderr, "caustic: out of memory\n");
        rc = EXIT_RUNTIME;
    }
    for (int k = 0; !rc && k < nop; ++k) {
        caustic_look look;
        look.tonemap = op[k];
        look.exposure = (float)ev;
        caustic_tonemap_rgb8(&look, src.rgb, (size_t)w * h, panel);
        for (int y = 0; y < h; ++y)
            memcpy(strip + ((size_t)y * w * nop + (size_t)k * w) * 3, panel + (size_t)y * w * 3, (size_t)w * 3);
    }
    if (!rc && caustic_image_save_rgb8(strip, w * nop, h, out, err, sizeof err)) {
        fprintf(stderr, "caustic: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    free(strip);
    free(panel);
    caustic_image_free(&src);
    return rc;
}
