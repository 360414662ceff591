/* fedtrain report RUN_DIR: the paper's figures as PNG, drawn by gnuplot from the run's CSV
 * logs and summary.json. Writes RUN_DIR/figures/{*.png, *.dat, report.gp}. */
#include "report.h"

#include "dataset.h"
#include "fileio.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *eval_names[4] = {"central_test", "central_transformed", "federated_test", "federated_transformed"};

/* The central baseline may come from another run directory (--central): its summary. */
static cJSON *central_root;

static cJSON *find_eval(cJSON *root, const char *name) {
    int central = strncmp(name, "central", 7) == 0;
    cJSON *sec = cJSON_GetObjectItem(central ? central_root : root, central ? "central" : "federated");
    cJSON *ev = sec ? cJSON_GetObjectItem(sec, "evaluations") : NULL;
    return ev ? cJSON_GetObjectItem(ev, name) : NULL;
}

static double num(cJSON *o, const char *k) {
    cJSON *v = o ? cJSON_GetObjectItem(o, k) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static int write_text(const char *dir, const char *name, textbuf *t, char *err, size_t errlen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = write_file_atomic(path, t->s ? t->s : "", t->len, err, errlen);
    tb_free(t);
    return rc;
}

/* federated_clients.csv has one row per (round, client); gnuplot connects points only within
 * a block, so write one block per client: "round loss acc" (rejected rounds left out). */
static int write_client_blocks(const char *csv, const char *figs, int nclients, char *err, size_t errlen) {
    char *text = read_file(csv, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read", csv);
        return -1;
    }
    textbuf t = {0};
    for (int c = 0; c < nclients; c++) {
        tb_printf(&t, "# client %d\n", c);
        const char *line = strchr(text, '\n');
        while (line && *++line) {
            int round, client;
            double loss, acc;
            char status[16];
            if (sscanf(line, "%d,%d,%*[^,],%*d,%lf,%lf,%*f,%15s", &round, &client, &loss, &acc, status) == 5 &&
                client == c && strcmp(status, "accepted") == 0)
                tb_printf(&t, "%d %.6f %.6f\n", round, loss, acc);
            line = strchr(line, '\n');
        }
        tb_printf(&t, "\n\n");
    }
    free(text);
    return write_text(figs, "clients.dat", &t, err, errlen);
}

/* Data rows of a CSV (lines after the header): the x range of its curves. */
static int csv_rows(const char *path) {
    char *text = read_file(path, NULL);
    if (!text) return 0;
    int n = 0;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) n++;
    free(text);
    return n;
}

/* gnuplot tics for epochs / rounds 1..n: whole numbers, about ten at most */
static void integer_tics(textbuf *g, char axis, int n) {
    int step = n <= 12 ? 1 : (n + 9) / 10;
    tb_printf(g, "set %ctics 1,%d\nset m%ctics 1\nset format %c '%%.0f'\n", axis, step, axis, axis);
}

/* Fashion-MNIST's class names (its README's order), else digits (MNIST and the test sets) */
static const char *fashion_names[NUM_CLASSES] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
/* the run's data directory (config.data.dir of the summary or of a mode's section) names it */
static int is_fashion(cJSON *root) {
    const char *where[3] = {NULL, "federated", "central"};
    for (int i = 0; i < 3; i++) {
        cJSON *sec = where[i] ? cJSON_GetObjectItem(root, where[i]) : root;
        cJSON *cfg = sec ? cJSON_GetObjectItem(sec, "config") : NULL;
        cJSON *d = cfg ? cJSON_GetObjectItem(cfg, "data") : NULL;
        cJSON *dir = d ? cJSON_GetObjectItem(d, "dir") : NULL;
        if (!cJSON_IsString(dir)) continue;
        for (const char *p = dir->valuestring; *p; p++)
            if (strncasecmp(p, "fashion", 7) == 0) return 1;
        return 0;
    }
    return 0;
}
/* "set xtics (...)" naming the classes on an axis of a matrix plot */
static void class_tics(textbuf *g, char axis, int fashion, const char *extra) {
    tb_printf(g, "set %ctics (", axis);
    for (int k = 0; k < NUM_CLASSES; k++) {
        if (fashion)
            tb_printf(g, "%s'%s' %d", k ? ", " : "", fashion_names[k], k);
        else
            tb_printf(g, "%s'%d' %d", k ? ", " : "", k, k);
    }
    tb_printf(g, ") %s\n", extra);
}

static cJSON *load_summary(const char *dir) {
    char path[1200];
    if (strchr(dir, '\'') || strchr(dir, '"')) {
        fprintf(stderr, "fedtrain: report %s: quotes in RUN_DIR are not supported\n", dir);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "fedtrain: report: %s: cannot read (is %s a fedtrain RUN_DIR?)\n", path, dir);
        return NULL;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) fprintf(stderr, "fedtrain: report: %s: not valid JSON\n", path);
    return root;
}

int run_report(fed_config *cfg) {
    const char *run = cfg->out_dir;
    const char *cdir = cfg->central_dir[0] ? cfg->central_dir : run;
    char err[1400], figs[1100];
    cJSON *root = load_summary(run);
    if (!root) return 2;
    cJSON *croot_own = cfg->central_dir[0] ? load_summary(cdir) : NULL;
    if (cfg->central_dir[0] && !croot_own) {
        cJSON_Delete(root);
        return 2;
    }
    central_root = croot_own ? croot_own : root;
    if (cfg->central_dir[0] && !cJSON_GetObjectItem(central_root, "central")) {
        fprintf(stderr, "fedtrain: report: --central %s: its summary.json has no central run\n", cdir);
        cJSON_Delete(root);
        cJSON_Delete(croot_own);
        return 2;
    }
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "fedtrain: report: gnuplot not found (install the Debian package gnuplot-nox)\n");
        cJSON_Delete(root);
        cJSON_Delete(croot_own);
        return 2;
    }
    snprintf(figs, sizeof figs, "%s/figures", run);
    if (mkdir_p(figs, err, sizeof err) != 0) {
        fprintf(stderr, "fedtrain: report: %s\n", err);
        cJSON_Delete(root);
        cJSON_Delete(croot_own);
        return 2;
    }
    char central_csv[1200], rounds_csv[1200], clients_csv[1200];
    snprintf(central_csv, sizeof central_csv, "%s/central_epochs.csv", cdir);
    snprintf(rounds_csv, sizeof rounds_csv, "%s/federated_rounds.csv", run);
    snprintf(clients_csv, sizeof clients_csv, "%s/federated_clients.csv", run);
    int has_c = file_exists(central_csv), has_f = file_exists(rounds_csv);
    /* which modes have evaluations: only those get bars (an all-NaN column stops gnuplot) */
    int sec_c = cJSON_GetObjectItem(central_root, "central") != NULL;
    int sec_f = cJSON_GetObjectItem(root, "federated") != NULL;
    cJSON *fsec = cJSON_GetObjectItem(root, "federated");
    cJSON *fcfg = fsec ? cJSON_GetObjectItem(fsec, "config") : NULL;
    int nclients = (int)num(fcfg, "clients");

    /* data files: client-wise bars, per-class heatmaps, confusion matrices */
    textbuf t = {0};
    tb_printf(&t, "# transform central_acc federated_acc central_micro_f1 federated_micro_f1\n");
    for (int k = 0; k < TF_COUNT; k++) {
        double v[4];
        for (int m = 0; m < 2; m++) {
            cJSON *sec = cJSON_GetObjectItem(m ? root : central_root, m ? "federated" : "central");
            cJSON *ptm = sec ? cJSON_GetObjectItem(sec, "per_transform_metrics") : NULL;
            cJSON *e = ptm ? cJSON_GetObjectItem(ptm, transform_name(k)) : NULL;
            v[m] = e ? num(e, "accuracy") : 0.0 / 0.0;
            v[2 + m] = e ? num(e, "micro_f1") : 0.0 / 0.0;
        }
        tb_printf(&t, "\"client %d\\n%s\" %.6f %.6f %.6f %.6f\n", k, transform_name(k), v[0], v[1], v[2], v[3]);
    }
    if (write_text(figs, "clientwise.dat", &t, err, sizeof err)) goto fail;
    const char *metrics[3] = {"f1", "precision", "recall"};
    int present[4], npresent = 0;
    for (int e = 0; e < 4; e++) npresent += present[e] = find_eval(root, eval_names[e]) != NULL;
    for (int mi = 0; mi < 3; mi++) {
        for (int e = 0; e < 4; e++) {
            if (!present[e]) continue;
            cJSON *pc = cJSON_GetObjectItem(find_eval(root, eval_names[e]), "per_class");
            for (int k = 0; k < NUM_CLASSES; k++)
                tb_printf(&t, "%s%.4f", k ? " " : "", num(cJSON_GetArrayItem(pc, k), metrics[mi]));
            tb_printf(&t, "\n");
        }
        char name[64];
        snprintf(name, sizeof name, "per_class_%s.dat", metrics[mi]);
        if (write_text(figs, name, &t, err, sizeof err)) goto fail;
    }
    for (int e = 0; e < 4; e++) {
        if (!present[e]) continue;
        cJSON *cm = cJSON_GetObjectItem(find_eval(root, eval_names[e]), "confusion_normalized");
        for (int r = 0; r < NUM_CLASSES; r++) {
            cJSON *row = cJSON_GetArrayItem(cm, r);
            for (int c = 0; c < NUM_CLASSES; c++)
                tb_printf(&t, "%s%.4f", c ? " " : "",
                          cJSON_IsNumber(cJSON_GetArrayItem(row, c)) ? cJSON_GetArrayItem(row, c)->valuedouble : 0.0);
            tb_printf(&t, "\n");
        }
        char name[96];
        snprintf(name, sizeof name, "confusion_%s.dat", eval_names[e]);
        if (write_text(figs, name, &t, err, sizeof err)) goto fail;
    }

    /* the gnuplot script */
    textbuf g = {0};
    tb_printf(&g, "# generated by fedtrain report; rerun with: gnuplot report.gp (inside figures/)\n"
                  "set terminal pngcairo noenhanced size 900,600 font ',11'\nset datafile separator ','\n"
                  "set grid\nset key bottom right\n");
    int fashion = is_fashion(has_c && !has_f ? central_root : root);
    int nx_c = has_c ? csv_rows(central_csv) : 0, nx_f = has_f ? csv_rows(rounds_csv) : 0;
    integer_tics(&g, 'x', nx_c > nx_f ? nx_c : nx_f);
    tb_printf(&g,
              "set output '%s/learning_curves.png'\nset title 'Test accuracy per epoch (central) / round (federated)'\n"
              "set xlabel 'epoch / round'\nset ylabel 'accuracy'\nset yrange [0:1]\nplot ",
              figs);
    int first = 1;
    if (has_c) {
        tb_printf(&g,
                  "'%s' using 1:8 with linespoints title 'central: clean test', '' using 1:9 with linespoints title "
                  "'central: transformed test'",
                  central_csv);
        first = 0;
    }
    if (has_f)
        tb_printf(&g,
                  "%s'%s' using 1:4 with linespoints title 'federated: clean test', '' using 1:5 with linespoints "
                  "title 'federated: transformed test'",
                  first ? "" : ", ", rounds_csv);
    if (!has_c && !has_f) tb_printf(&g, "NaN notitle");
    tb_printf(&g, "\n");
    if (has_c)
        tb_printf(
            &g,
            "set output '%s/central_loss.png'\nset terminal pngcairo noenhanced size 1200,500\nset multiplot layout "
            "1,2\n"
            "set title 'Central: accuracy'\nset xlabel 'epoch'\nset ylabel 'accuracy'\nset yrange [*:*]\n"
            "plot '%s' using 1:4 with linespoints title 'train', '' using 1:6 with linespoints title 'validation'\n"
            "set title 'Central: loss'\nset ylabel 'loss'\nset key top right\n"
            "plot '%s' using 1:3 with linespoints title 'train', '' using 1:5 with linespoints title 'validation'\n"
            "unset multiplot\nset terminal pngcairo noenhanced size 900,600\nset key bottom right\n",
            figs, central_csv, central_csv);
    if (has_f && nclients > 0 && write_client_blocks(clients_csv, figs, nclients, err, sizeof err) == 0) {
        tb_printf(&g,
                  "set datafile separator whitespace\nset xlabel 'round'\nset yrange [*:*]\nset key outside right\n");
        integer_tics(&g, 'x', nx_f);
        const char *what[2][3] = {{"client_accuracy", "3", "local training accuracy"},
                                  {"client_loss", "2", "local training loss"}};
        for (int i = 0; i < 2; i++)
            tb_printf(&g,
                      "set output '%s/%s.png'\nset title 'Clients: %s per round'\nset ylabel '%s'\n"
                      "plot for [c=0:%d] '%s/clients.dat' index c using 1:%s with linespoints title sprintf('client "
                      "%%d', c)\n",
                      figs, what[i][0], what[i][2], what[i][2], nclients - 1, figs, what[i][1]);
    }
    /* bars: client-wise accuracy and micro-F1 on each client's (transform's) test set */
    tb_printf(&g, "set datafile separator whitespace\nset style data histograms\nset style histogram clustered gap 1\n"
                  "set style fill solid 0.8 border -1\nset yrange [0:1]\nset xlabel ''\nset key top right\nset xtics "
                  "autofreq nomirror\nset format x '%%g'\nset mxtics default\nset bmargin 5\n");
    const char *bars[2][3] = {{"clientwise_accuracy", "accuracy", "2:3"}, {"clientwise_micro_f1", "micro-F1", "4:5"}};
    for (int i = 0; i < 2 && (sec_c || sec_f); i++) {
        int c1 = bars[i][2][0] - '0', c2 = bars[i][2][2] - '0';
        tb_printf(&g,
                  "set output '%s/%s.png'\nset title 'Client-wise %s (test set under each client transform)'\nset "
                  "ylabel '%s'\n"
                  "plot '%s/clientwise.dat' ",
                  figs, bars[i][0], bars[i][1], bars[i][1], figs);
        if (sec_c) tb_printf(&g, "using %d:xtic(1) title 'central'%s", c1, sec_f ? ", '' " : "\n");
        if (sec_f) tb_printf(&g, "using %d%s title 'federated'\n", c2, sec_c ? "" : ":xtic(1)");
    }
    /* heatmaps */
    if (npresent > 0) {
        /* rows named in words ("federated, transformed test"), with a left margin wide enough
         * for the longest (in characters), and class names under the columns */
        tb_printf(&g,
                  "set bmargin 6\nset lmargin 27\nunset style\nset style data lines\nset format x '%%g'\n"
                  "set mxtics default\nset xrange [-0.5:9.5]\nset yrange [%d-0.5:-0.5]\n"
                  "set cbrange [0:1]\nset palette defined (0 'white', 0.5 '#6baed6', 1 '#08306b')\nset xlabel "
                  "'class'\nset ylabel ''\nset grid noxtics noytics\n",
                  npresent);
        class_tics(&g, 'x', fashion, "rotate by 30 right");
        tb_printf(&g, "set ytics (");
        int row = 0;
        for (int e = 0; e < 4; e++)
            if (present[e]) {
                int central = strncmp(eval_names[e], "central", 7) == 0;
                int transformed = strstr(eval_names[e], "transformed") != NULL;
                tb_printf(&g, "%s'%s, %s test' %d", row ? ", " : "", central ? "central" : "federated",
                          transformed ? "transformed" : "clean", row);
                row++;
            }
        tb_printf(&g, ")\n");
        for (int mi = 0; mi < 3; mi++)
            tb_printf(&g,
                      "set terminal pngcairo noenhanced size 1000,%d\nset output '%s/per_class_%s.png'\nset title "
                      "'Per-class %s'\n"
                      "plot '%s/per_class_%s.dat' matrix with image notitle, '' matrix using 1:2:(sprintf('%%.2f',$3)) "
                      "with labels notitle\n",
                      160 + 70 * npresent, figs, metrics[mi], metrics[mi], figs, metrics[mi]);
        tb_printf(&g,
                  "set terminal pngcairo noenhanced size 760,680\nset lmargin %d\nset yrange [9.5:-0.5]\nset "
                  "xlabel 'predicted'\nset ylabel 'true'\n",
                  fashion ? 14 : 6);
        class_tics(&g, 'y', fashion, "");
        for (int e = 0; e < 4; e++)
            if (present[e])
                tb_printf(&g,
                          "set output '%s/confusion_%s.png'\nset title 'Row-normalised confusion: %s'\n"
                          "plot '%s/confusion_%s.dat' matrix with image notitle, '' matrix using 1:2:($3 >= 0.01 ? "
                          "sprintf('%%.2f',$3) : '') with labels font ',8' notitle\n",
                          figs, eval_names[e], eval_names[e], figs, eval_names[e]);
    }
    tb_printf(&g, "set output\n");
    if (write_text(figs, "report.gp", &g, err, sizeof err)) goto fail;
    /* gnuplot's own output (warnings, notes) goes to figures/gnuplot.log, not the console */
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "gnuplot '%s/report.gp' > '%s/gnuplot.log' 2>&1", figs, figs);
    if (system(cmd) != 0) {
        fprintf(stderr, "fedtrain: report: gnuplot failed on %s/report.gp (its output: %s/gnuplot.log)\n", figs, figs);
        cJSON_Delete(root);
        cJSON_Delete(croot_own);
        return 2;
    }
    cJSON_Delete(root);
    cJSON_Delete(croot_own);
    fprintf(stderr, "fedtrain: figures written to %s/\n", figs);
    return 0;
fail:
    fprintf(stderr, "fedtrain: report: %s\n", err);
    cJSON_Delete(root);
    cJSON_Delete(croot_own);
    return 2;
}
