/* Argument parsing shared by the CLI's commands (render, bench, tonemap, ...). */
#ifndef CAUSTIC_CLI_ARGS_H
#define CAUSTIC_CLI_ARGS_H

/* Strict number parsing for flags: the whole string must be a number in [lo, hi]; 0, or -1
 * (nothing written to *out). */
int parse_int(const char *s, long lo, long hi, long *out);
int parse_double(const char *s, double lo, double hi, double *out);
/* 1 when path ends in .png, .exr or .pfm (any case): a name caustic can write an image to. */
int has_image_extension(const char *path);
/* Monotonic wall-clock seconds. */
double cli_now(void);

#endif
