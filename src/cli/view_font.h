/* Where the viewer's on-screen readout finds a monospace TrueType font. */
#ifndef CAUSTIC_CLI_VIEW_FONT_H
#define CAUSTIC_CLI_VIEW_FONT_H

#include <stddef.h>

/* The font file to use, in this order: $CAUSTIC_VIEW_FONT; fontconfig's match for "monospace"
 * (builds with fontconfig); the paths where Debian (fonts-dejavu-core), Fedora and Arch put
 * DejaVu Sans Mono and Liberation Mono. 0 with the path in out, or -1 with what was tried in why. */
int view_font_find(char *out, size_t n, char *why, size_t whylen);

#endif
