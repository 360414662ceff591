/* Finds a monospace TrueType font for the viewer's readout (view_font.h). */
#include "view_font.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef CAUSTIC_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>

/* fontconfig's best match for "monospace" when it is a TrueType/OpenType file that exists (its
 * fallback for a system without one may be a bitmap font or nothing). */
static int fontconfig_match(char *out, size_t n) {
    int found = 0;
    FcPattern *pat = FcNameParse((const FcChar8 *)"monospace");
    if (!pat) return 0;
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *match = FcFontMatch(NULL, pat, &res);
    FcChar8 *file = NULL;
    if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch && file) {
        const char *f = (const char *)file, *dot = strrchr(f, '.');
        if (dot && (!strcasecmp(dot, ".ttf") || !strcasecmp(dot, ".otf")) && access(f, R_OK) == 0 && strlen(f) < n) {
            snprintf(out, n, "%s", f);
            found = 1;
        }
    }
    if (match) FcPatternDestroy(match);
    FcPatternDestroy(pat);
    return found;
}
#endif

int view_font_find(char *out, size_t n, char *why, size_t whylen) {
    const char *env = getenv("CAUSTIC_VIEW_FONT");
    if (env && *env) {
        if (access(env, R_OK) == 0 && strlen(env) < n) {
            snprintf(out, n, "%s", env);
            return 0;
        }
        snprintf(why, whylen, "CAUSTIC_VIEW_FONT=%s: cannot read that font file", env);
        return -1;
    }
#ifdef CAUSTIC_HAVE_FONTCONFIG
    if (fontconfig_match(out, n)) return 0;
#endif
    static const char *const known[] = {
        "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",            /* Debian, Ubuntu */
        "/usr/share/fonts/dejavu-sans-mono-fonts/DejaVuSansMono.ttf",     /* Fedora */
        "/usr/share/fonts/TTF/DejaVuSansMono.ttf",                        /* Arch */
        "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf" /* Debian, Ubuntu */
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
        if (access(known[i], R_OK) == 0) {
            snprintf(out, n, "%s", known[i]);
            return 0;
        }
    snprintf(why, whylen,
             "no monospace font found (Debian: fonts-dejavu-core; or set CAUSTIC_VIEW_FONT to a .ttf file)");
    return -1;
}
