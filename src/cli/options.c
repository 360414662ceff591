/* The option table of `caustic render` and the list of commands (cli/options.h), and everything
 * generated from them: the parser's lookups, --help, the man page and the bash completion. */
#include "options.h"

#include <string.h>

#include "caustic.h"

enum { G_SCENE, G_SAMPLING, G_INTEGRATOR, G_DEVICE, G_LOOK, G_CHECKPOINT, G_FRAMES };
const char *const cli_render_groups[] = {"Scene and output",
                                         "Sampling",
                                         "Integrators",
                                         "Devices",
                                         "Look, AOVs and denoising",
                                         "Checkpoints, previews and interrupts",
                                         "Animation and distribution",
                                         NULL};

#define TONEMAPS "clamp aces agx"
const cli_option cli_render_options[] = {
    {"--output", "-o", "FILE", "@image", G_SCENE,
     "output image: .png (8-bit sRGB), .exr (linear half), .pfm (linear float) (default: the scene's FILE, or the "
     "scene name, + .png)"},
    {"-D", NULL, "PATH=VALUE", NULL, G_SCENE,
     "set a scene key before the scene is read, e.g. -D 'Camera.RES=[320,240]' -D Materials.light.EMITTANCE=8 -D "
     "'Objects[2].TRANS=[0,1,0]' (quoted: brackets are shell patterns); VALUE is JSON (a bare word is a string); "
     "paths and messages are the scene file's (JSON scenes, text scenes, models' quick looks and the JSON "
     "built-ins)"},
    {"--res", NULL, "WxH", NULL, G_SCENE, "resolution (default: the scene's RES)"},
    {"--crop", NULL, "X0,Y0,X1,Y1", NULL, G_SCENE,
     "render only the window [X0,X1) x [Y0,Y1) of the image and write that window alone, in pixels (0,0,320,240) "
     "or, with a decimal point, in fractions of the width and height (0.25,0.25,0.75,0.75): pbrt's --pixelbounds "
     "and --cropwindow (path tracing only)"},
    {"--camera", NULL, "FILE", "@file", G_SCENE,
     "the camera of FILE's \"Camera\" object instead of the scene's (a scene file, or what the c key of 'caustic "
     "view' writes)"},
    {"--dump-scene", NULL, "FILE", "@file", G_SCENE,
     "also write the scene as editable caustic JSON (the quick look's generated scene, a text scene converted, a "
     "JSON built-in, a pbrt, Mitsuba or glTF scene as caustic read it, image textures as PFM files beside it); "
     "refused with one message for what the JSON cannot say (rtow, smallvcm0-3, metallic-roughness or emission "
     "maps, media so far)"},
    {"--strict", NULL, NULL, NULL, G_SCENE, "dialect keys and types caustic maps or ignores are errors, not warnings"},
    {"--quiet", "-q", NULL, NULL, G_SCENE, "no progress bar, no notes"},
    {"--spp", NULL, "N", NULL, G_SAMPLING, "samples per pixel (default: the scene's ITERATIONS)"},
    {"--time-limit", NULL, "SEC", NULL, G_SAMPLING, "stop after about SEC seconds; with --spp, whichever comes first"},
    {"--threads", NULL, "N", NULL, G_SAMPLING, "worker threads (default: all cores)"},
    {"--seed", NULL, "N", NULL, G_SAMPLING, "random seed; the same seed gives the same image (default 1)"},
    {"--max-depth", NULL, "D", NULL, G_SAMPLING, "maximum bounces (default: the scene's DEPTH)"},
    {"--adaptive-depth", NULL, NULL, NULL, G_SAMPLING,
     "fast first passes: sample i of a pixel traces at most 4 + log2(i + 1) bounces (up to --max-depth), the longer "
     "paths weighted so that the image at --spp is unbiased; unfinished renders are darker (pt only)"},
    {"--schedule", NULL, "S", "tiles rows rows-static pixels", G_SAMPLING,
     "tiles (default) | rows | rows-static | pixels"},
    {"--sampler", NULL, "S", "sobol stratified random", G_SAMPLING, "sobol (default) | stratified | random"},
    {"--light-sampler", NULL, "L", "auto power tree", G_SAMPLING,
     "how next-event estimation picks a light: auto (default: a light tree from 64 lights) | power | tree (the "
     "environment variable CAUSTIC_LIGHT_SAMPLER, which the library reads)"},
    {"--clamp", NULL, "L", NULL, G_SAMPLING, "firefly clamp: scale samples down to luminance L (biased; default off)"},
    {"--adaptive", NULL, "E", NULL, G_SAMPLING,
     "adaptive sampling: a pixel stops once the relative standard error of its mean is below E (e.g. 0.01); --spp is "
     "then the maximum"},
    {"--adaptive-min", NULL, "N", NULL, G_SAMPLING, "... but not before N samples (default 16)"},
    {"--heatmap", NULL, "FILE", "@image", G_SAMPLING,
     "also write the samples taken per pixel as an image (white = most)"},
    {"--integrator", NULL, "I", "pt lt bdpt ppm bpm vcm", G_INTEGRATOR,
     "pt (default) | lt | bdpt | ppm | bpm | vcm (GPU or CPU); all but pt count --spp in iterations (one light + one "
     "camera path per pixel)"},
    {"--radius", NULL, "R", NULL, G_INTEGRATOR,
     "ppm/bpm/vcm: initial merging radius, fraction of the scene radius (0.003)"},
    {"--alpha", NULL, "A", NULL, G_INTEGRATOR, "ppm/bpm/vcm: radius reduction r_i = r_1 i^((A-1)/2) (default 0.75)"},
    {"--merge-everywhere", NULL, NULL, NULL, G_INTEGRATOR,
     "vcm: merge at every non-specular vertex (SmallVCM's strategies), not only between two glossy ones (the "
     "default: caustic paths)"},
    {"--device", NULL, "D", "auto cpu cuda", G_DEVICE, "auto (default: any GPUs) | cpu | cuda (all GPUs) | cuda:0,1"},
    {"--gpu-mode", NULL, "M", "mega wavefront", G_DEVICE,
     "CUDA: mega (default; one thread per pixel) | wavefront (path pool, one kernel per stage, material-sorted shade "
     "queues)"},
    {"--gpu-bvh", NULL, "B", "sah cwbvh lbvh", G_DEVICE,
     "CUDA: sah (default, 4-wide) | cwbvh (8-wide, compressed) | lbvh"},
    {"--exposure", NULL, "EV", NULL, G_LOOK,
     "8-bit outputs: scale the image by 2^EV before the tone map (default 0); .exr/.pfm stay linear"},
    {"--tonemap", NULL, "T", TONEMAPS, G_LOOK,
     "8-bit outputs: clamp (default; values above 1 clip) | aces (filmic) | agx (Blender's default view); .exr/.pfm "
     "stay linear"},
    {"--aov", NULL, "LIST", "albedo normal depth samples variance", G_LOOK,
     "also write AOVs, any of albedo,normal,depth,samples,variance: layers of an .exr OUTPUT, else files beside it "
     "(out.albedo.png, ...); albedo and normal of the first surface seen through mirrors and glass, depth = distance "
     "to the first hit"},
    {"--denoise", NULL, NULL, NULL, G_LOOK,
     "also write a denoised image, OUTPUT with .denoised before the extension (Open Image Denoise, guided by the "
     "albedo and normal AOVs; the noisy image is kept). On by default for .png outputs where Open Image Denoise is "
     "installed (but not with --checkpoint)"},
    {"--no-denoise", NULL, NULL, NULL, G_LOOK, "write the noisy image only"},
    {"--denoise-guides", NULL, "on|off", "on off", G_LOOK,
     "off: denoise the image alone, without AOV guides (default on)"},
    {"--checkpoint", NULL, "FILE", "@file", G_CHECKPOINT,
     "save the accumulated samples to FILE every 30 s and on Ctrl-C"},
    {"--resume", NULL, NULL, NULL, G_CHECKPOINT, "continue from --checkpoint FILE if it exists"},
    {"--force", NULL, NULL, NULL, G_CHECKPOINT,
     "replace an existing --checkpoint FILE (without it, and without --resume, an existing checkpoint is an error)"},
    {"--preview-every", NULL, "SEC", NULL, G_CHECKPOINT,
     "during the render, write the current image to the output file every SEC seconds (atomically: open it at any "
     "time)"},
    {"--frames", NULL, "N", NULL, G_FRAMES,
     "turntable of N frames (OUT.0000.png ...), turning the camera through --orbit degrees (default 360) in N "
     "steps; frames and several SCENEs are spread over mpirun's ranks"},
    {"--orbit", NULL, "DEG", NULL, G_FRAMES,
     "turn the camera DEG degrees about its up direction around the look-at point; with --frames, the whole "
     "turn"},
    {NULL, NULL, NULL, NULL, 0, NULL}};

const cli_command cli_commands[] = {
    {"render", "[SCENE...]",
     "render a scene file (.json, CIS 565 .txt), a model (.obj, .ply, .gltf, .glb) or a "
     "built-in scene to an image"},
    {"view", "SCENE", "watch it render in a window: move the camera, change the look (SDL2)"},
    {"serve", "SCENE", "the same in a web browser, from a machine without a display"},
    {"info", "SCENE", "primitive, material and light counts, bounds, BVH statistics, memory"},
    {"compare", "A B", "AE, PSNR, RMSE and SSIM between two images"},
    {"tonemap", "IN OUT", "a linear image to a PNG through an exposure and tone map (or several)"},
    {"bench", "", "throughput benchmark (Msamples/s, Mrays/s) per thread count and schedule"},
    {"devices", "", "list CUDA devices and the CPU kernels"},
    {"help", "", "this text"},
    {NULL, NULL, NULL}};

/* ---- parsing ---------------------------------------------------------------------------------- */
void cli_printable(char *out, size_t n, const char *s, size_t len) {
    size_t j = 0;
    for (size_t i = 0; i < len && s[i] && j + 1 < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = c >= 0x20 && c != 0x7f ? (char)c : '?';
    }
    if (n) out[j] = 0;
}

static size_t name_len(const char *a) {
    const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
    return eq ? (size_t)(eq - a) : strlen(a);
}

const cli_option *cli_find_option(const cli_option *table, const char *a) {
    size_t n = name_len(a);
    for (const cli_option *o = table; o->name; ++o) {
        if (strlen(o->name) == n && !strncmp(o->name, a, n)) return o;
        if (o->alias && strlen(o->alias) == n && !strncmp(o->alias, a, n)) return o;
    }
    return NULL;
}

const char *cli_did_you_mean(const char *word, const char *const *names) {
    static char buf[128];
    const char *s = caustic_suggest(word, names);
    if (!s) return "";
    snprintf(buf, sizeof buf, " (did you mean '%.100s'?)", s);
    return buf;
}

int cli_next(const cli_option *table, int argc, char **argv, int *i, const cli_option **opt, const char **value,
             char *err, size_t errlen) {
    const char *a = argv[*i];
    *opt = NULL;
    *value = NULL;
    if (a[0] != '-' || a[1] == 0) { /* "-" alone is a name, not an option */
        *value = a;
        ++*i;
        return 0;
    }
    /* short options with their value attached: -DPATH=V */
    if (a[1] != '-' && a[2] != 0) {
        char shortname[3] = {'-', a[1], 0};
        const cli_option *o = cli_find_option(table, shortname);
        if (o && o->arg) {
            *opt = o;
            *value = a + 2;
            ++*i;
            return 1;
        }
    }
    const cli_option *o = cli_find_option(table, a);
    if (!o) {
        /* the names for the suggestion: the long names without "--" would miss "-sp" -> "--spp" */
        const char *names[128];
        int n = 0;
        for (const cli_option *p = table; p->name && n < 126; ++p) names[n++] = p->name;
        names[n] = NULL;
        char word[64];
        size_t len = name_len(a);
        cli_printable(word, sizeof word, a, len);
        /* "-spp": a single dash before a long name */
        if (word[0] == '-' && word[1] != '-' && len > 2 && len < 62) {
            char two[72];
            snprintf(two, sizeof two, "-%s", word);
            if (cli_find_option(table, two)) {
                snprintf(err, errlen, "unknown option '%s' (did you mean '%s'?)", word, two);
                return -1;
            }
        }
        snprintf(err, errlen, "unknown option '%s'%s", word, cli_did_you_mean(word, names));
        return -1;
    }
    *opt = o;
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    if (!o->arg) {
        if (eq) {
            char val[128];
            cli_printable(val, sizeof val, eq + 1, strlen(eq + 1));
            snprintf(err, errlen, "option %s takes no value (got '%s')", o->name, val);
            return -1;
        }
        ++*i;
        return 1;
    }
    if (eq) {
        *value = eq + 1;
        ++*i;
        return 1;
    }
    if (*i + 1 >= argc) {
        snprintf(err, errlen, "option %s needs a value (%s)", o->name, o->arg);
        return -1;
    }
    *value = argv[*i + 1];
    *i += 2;
    return 1;
}

/* ---- help ------------------------------------------------------------------------------------- */
/* Writes text wrapped to `width` columns, every line (the first after `first` columns already
 * used) indented by `indent`. */
static void wrap(FILE *f, const char *text, int indent, int first, int width) {
    int col = first;
    const char *p = text;
    while (*p) {
        while (*p == ' ') ++p;
        const char *w = p;
        while (*p && *p != ' ') ++p;
        int len = (int)(p - w);
        if (!len) break;
        if (col > indent && col + 1 + len > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            ++col;
        } else if (col < indent) {
            fprintf(f, "%*s", indent - col, "");
            col = indent;
        }
        fwrite(w, 1, (size_t)len, f);
        col += len;
    }
    fputc('\n', f);
}

static int option_label(const cli_option *o, char *buf, size_t n) {
    if (o->alias) return snprintf(buf, n, "  %s, %s%s%s", o->alias, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    return snprintf(buf, n, "  %s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

enum { HELP_COLUMN = 24 };

void cli_print_render_help(FILE *f, int columns) {
    fputs("usage: caustic render [SCENE...] [options]\n\n", f);
    wrap(f,
         "SCENE is a JSON scene file (caustic / CIS 5650 and the course projects' dialects), a CIS 565 text scene, a "
         "model (.obj, .ply, .gltf, .glb: a quick look with an automatic camera and, where the model has no lights, "
         "an environment, a key light and a ground plane) or a built-in scene name (default: cornell). Options given "
         "on the command line override the scene file; --opt=value works as --opt value.",
         0, 0, columns);
    for (int g = 0; cli_render_groups[g]; ++g) {
        fprintf(f, "\n%s:\n", cli_render_groups[g]);
        for (const cli_option *o = cli_render_options; o->name; ++o) {
            if (o->group != g) continue;
            char label[96];
            int len = option_label(o, label, sizeof label);
            fputs(label, f);
            if (len + 2 > HELP_COLUMN) {
                fputc('\n', f);
                len = 0;
            }
            wrap(f, o->help, HELP_COLUMN, len, columns);
        }
    }
    fputc('\n', f);
    wrap(f,
         "Ctrl-C once: finish the current pass, then write the image (and checkpoint); twice: stop at the next tile "
         "or iteration and write them. mpirun -np N caustic render ...: N ranks, one image (README: Distributed).",
         0, 0, columns);
    wrap(f,
         "The last line on stdout is a parseable summary: time=... spp=... Msamples/s=... Mrays/s=... "
         "Msegments/s=... Mshadow/s=... (of the rays, path segments and shadow rays) ... load_s=... bvh_s=... (scene "
         "reading and BVH building); on the GPU kernel=diffuse|textured|opaque|all: the megakernel variant chosen "
         "for the scene's features.",
         0, 0, columns);
}

static void builtin_list(char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    const char *const *names = caustic_builtin_scenes();
    for (int i = 0; names[i] && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", names[i]);
}

void cli_print_main_help(FILE *f, int columns) {
    fputs("caustic - a physically based renderer\n\nusage: caustic <command> [options]\n\ncommands:\n", f);
    for (const cli_command *c = cli_commands; c->name; ++c) {
        char label[64];
        int len = snprintf(label, sizeof label, "  %s %s", c->name, c->args);
        fputs(label, f);
        if (len + 2 > 22) {
            fputc('\n', f);
            len = 0;
        }
        wrap(f, c->help, 22, len, columns);
    }
    char names[512], line[600];
    builtin_list(names, sizeof names);
    snprintf(line, sizeof line, "Built-in scenes: %s (cornell is the default).", names);
    fputc('\n', f);
    wrap(f, line, 0, 0, columns);
    wrap(f,
         "Run 'caustic <command> --help' for the options of a command; 'caustic --version' for the build's features.",
         0, 0, columns);
}

/* ---- man page --------------------------------------------------------------------------------- */
static void roff(FILE *f, const char *s) {
    if (*s == '.' || *s == '\'') fputs("\\&", f);
    for (; *s; ++s) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

void cli_print_man(FILE *f, const char *version) {
    fprintf(f, ".TH CAUSTIC 1 \"\" \"caustic %s\" \"User Commands\"\n", version);
    fputs(".SH NAME\ncaustic \\- a physically based renderer\n.SH SYNOPSIS\n.B caustic\n.I command\n[options]\n", f);
    fputs(".br\n.B caustic render\n[\\fISCENE\\fR...] [options]\n.SH COMMANDS\n", f);
    for (const cli_command *c = cli_commands; c->name; ++c) {
        fprintf(f, ".TP\n.B %s", c->name);
        if (*c->args) fprintf(f, " \\fI%s\\fR", c->args);
        fputc('\n', f);
        roff(f, c->help);
        fputc('\n', f);
    }
    fputs(".SH RENDER OPTIONS\n", f);
    for (int g = 0; cli_render_groups[g]; ++g) {
        fputs(".SS ", f);
        roff(f, cli_render_groups[g]);
        fputc('\n', f);
        for (const cli_option *o = cli_render_options; o->name; ++o) {
            if (o->group != g) continue;
            fputs(".TP\n", f);
            if (o->alias) {
                fputs("\\fB", f);
                roff(f, o->alias);
                fputs("\\fR, ", f);
            }
            fputs("\\fB", f);
            roff(f, o->name);
            fputs("\\fR", f);
            if (o->arg) {
                fputs(" \\fI", f);
                roff(f, o->arg);
                fputs("\\fR", f);
            }
            fputc('\n', f);
            roff(f, o->help);
            fputc('\n', f);
        }
    }
    char names[512];
    builtin_list(names, sizeof names);
    fputs(".SH BUILT-IN SCENES\n", f);
    roff(f, names);
    fputs("\n.SH EXIT STATUS\n0 success, 1 a runtime failure (I/O, out of memory), 2 bad input or usage, 130 "
          "interrupted (the image and checkpoint were written).\n.SH SEE ALSO\nThe README and docs/ of the source "
          "tree; \\fBcaustic \\fIcommand\\fB \\-\\-help\\fR.\n",
          f);
}

/* ---- bash completion -------------------------------------------------------------------------- */
void cli_print_bash_completion(FILE *f) {
    fputs("# bash completion for caustic (generated by 'caustic help --bash-completion')\n"
          "_caustic() {\n"
          "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "    COMPREPLY=($(compgen -W \"",
          f);
    for (const cli_command *c = cli_commands; c->name; ++c) fprintf(f, "%s%s", c == cli_commands ? "" : " ", c->name);
    fputs(" --help --version\" -- \"$cur\"))\n    return\n  fi\n  case \"$prev\" in\n", f);
    for (const cli_option *o = cli_render_options; o->name; ++o) {
        if (!o->arg) continue;
        fprintf(f, "    %s%s%s)", o->name, o->alias ? "|" : "", o->alias ? o->alias : "");
        if (!o->values)
            fputs(" COMPREPLY=(); return ;;\n", f);
        else if (!strcmp(o->values, "@file"))
            fputs(" COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f);
        else if (!strcmp(o->values, "@image"))
            fputs(" COMPREPLY=($(compgen -f -X '!*.@(png|exr|pfm|PNG|EXR|PFM)' -- \"$cur\") $(compgen -d -- "
                  "\"$cur\")); return ;;\n",
                  f);
        else
            fprintf(f, " COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n", o->values);
    }
    fputs("  esac\n  if [ \"${COMP_WORDS[1]}\" = render ]; then\n    if [[ $cur == -* ]]; then\n"
          "      COMPREPLY=($(compgen -W \"",
          f);
    for (const cli_option *o = cli_render_options; o->name; ++o)
        fprintf(f, "%s%s%s%s", o == cli_render_options ? "" : " ", o->name, o->alias ? " " : "",
                o->alias ? o->alias : "");
    fputs(" --help\" -- \"$cur\"))\n    else\n      COMPREPLY=($(compgen -W \"", f);
    const char *const *names = caustic_builtin_scenes();
    for (int i = 0; names[i]; ++i) fprintf(f, "%s%s", i ? " " : "", names[i]);
    fputs("\" -- \"$cur\") $(compgen -f -X '!*.@(json|txt|obj|ply|gltf|glb|JSON|TXT|OBJ|PLY|GLTF|GLB)' -- \"$cur\") "
          "$(compgen -d -- \"$cur\"))\n    fi\n  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\n"
          "complete -o filenames -o bashdefault -F _caustic caustic\n",
          f);
}
