/* The command line's one option table: `caustic render`'s options and caustic's commands, from
 * which the parser (long options, --opt=value, did-you-mean), `--help` (grouped, wrapped at 80
 * columns), the man page (caustic.1) and the bash completion are all generated. */
#ifndef CAUSTIC_CLI_OPTIONS_H
#define CAUSTIC_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_option {
    const char *name;   /* "--spp", or "-D" for options with a short name only */
    const char *alias;  /* "-o", or NULL */
    const char *arg;    /* the value's name ("N", "FILE"), or NULL for a flag */
    const char *values; /* bash completion: the value's words ("sobol stratified random"), "@file"
                           for a file name, "@image" for an image name, NULL for none */
    int group;          /* index into cli_render_groups */
    const char *help;   /* one paragraph, wrapped when printed */
} cli_option;

typedef struct cli_command {
    const char *name, *args, *help;
} cli_command;

extern const cli_option cli_render_options[]; /* ends with a zeroed entry */
extern const char *const cli_render_groups[];
extern const cli_command cli_commands[]; /* ends with a zeroed entry */

/* The option named `a` ("--spp", "-o"; an "--opt=value" form is looked up by its name part), or
 * NULL. */
const cli_option *cli_find_option(const cli_option *table, const char *a);

/* One step of the parser over argv[*i]: an option (with its value: "--opt=value", "--opt value",
 * "-DPATH=V", "-D PATH=V") or a positional argument. Returns 1 for an option (*opt, *value set;
 * *value is NULL for flags), 0 for a positional argument (*value = argv[*i]), -1 with a message
 * in err (an unknown option, with a did-you-mean where one is close; a missing value; a value
 * given to a flag). *i is advanced past what was consumed. */
int cli_next(const cli_option *table, int argc, char **argv, int *i, const cli_option **opt, const char **value,
             char *err, size_t errlen);

/* s[0..len) into out (n bytes, NUL-terminated, cut to fit) with control characters as '?':
 * what a message may echo of a command line and still be one line. */
void cli_printable(char *out, size_t n, const char *s, size_t len);
/* "word" -> " (did you mean 'x'?)" when one of names is close, else "" (static storage). */
const char *cli_did_you_mean(const char *word, const char *const *names);

/* `caustic render --help` and `caustic --help`, wrapped at `columns` (80). */
void cli_print_render_help(FILE *f, int columns);
void cli_print_main_help(FILE *f, int columns);
/* The man page caustic.1 (roff) and the bash completion script, both from the tables above. */
void cli_print_man(FILE *f, const char *version);
void cli_print_bash_completion(FILE *f);

#endif
