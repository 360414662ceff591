/* JSON scene reader: -D PATH=VALUE, the command line's edits of the document before it is walked
 * (scene_load_opts.defines; json_scene.c). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "import/json_internal.h"
#include "caustic.h"
#include "util/array.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- -D PATH=VALUE ------------------------------------------------------------------------------ */
/* The keys of object o, for a did-you-mean (at most 63). */
static void object_keys_of(const cJSON *o, const char **names) {
    int n = 0;
    for (const cJSON *c = o ? o->child : NULL; c && n < 63; c = c->next)
        if (c->string) names[n++] = c->string;
    names[n] = NULL;
}

/* Sets PATH of root to VALUE (scene_load_opts.defines). Every step but the last must exist (a
 * did-you-mean where it does not); the last is replaced or added. */
int json_apply_define(loader *L, cJSON *root, const char *def) {
    const char *eq = strchr(def, '=');
    char path[256];
    if (!eq || eq == def || (size_t)(eq - def) >= sizeof path)
        return prm_fail(&L->P, NULL, "-D '%.200s': expected PATH=VALUE (e.g. -D Camera.RES=[320,240])", def);
    memcpy(path, def, (size_t)(eq - def));
    path[eq - def] = '\0';
    const char *value = eq + 1;
    cJSON *cur = root;
    char done[256] = "";
    char *p = path;
    for (;;) {
        /* one step: NAME, NAME[i], or [i] */
        size_t nlen = strcspn(p, ".[");
        char name[128];
        if (nlen >= sizeof name) return prm_fail(&L->P, path, "-D: key too long");
        memcpy(name, p, nlen);
        name[nlen] = '\0';
        p += nlen;
        long index = -1;
        if (*p == '[') {
            char *end;
            index = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || index < 0)
                return prm_fail(&L->P, path, "-D: malformed index in '%.200s'", def);
            p = end + 1;
        }
        if ((*p && *p != '.' && *p != '[') || (nlen == 0 && index < 0))
            return prm_fail(&L->P, NULL, "-D '%.200s': malformed path (keys separated by '.', list entries as [i])",
                            def);
        int last = *p == '\0';
        if (*p == '.') ++p;
        cJSON *next = NULL;
        if (nlen) {
            if (!cJSON_IsObject(cur))
                return prm_fail(&L->P, done, "-D %s: %s is not an object", path, *done ? done : "the scene");
            next = cJSON_GetObjectItem(cur, name); /* the loader's keys are case-insensitive */
            if (!next && (!last || index >= 0)) {
                const char *names[64];
                object_keys_of(cur, names);
                const char *sug = prm_suggest(name, names);
                if (sug)
                    return prm_fail(&L->P, path, "-D: no key \"%s\" in %s (did you mean \"%s\"?)", name,
                                    *done ? done : "the scene", sug);
                return prm_fail(&L->P, path, "-D: no key \"%s\" in %s", name, *done ? done : "the scene");
            }
            size_t dl = strlen(done);
            snprintf(done + dl, sizeof done - dl, "%s%s", dl ? "." : "", name);
        }
        if (index >= 0) {
            cJSON *arr = nlen ? next : cur;
            if (!cJSON_IsArray(arr))
                return prm_fail(&L->P, done, "-D %s: %s is not a list", path, *done ? done : "the scene");
            int size = cJSON_GetArraySize(arr);
            if (index >= size)
                return prm_fail(&L->P, path, "-D: index %ld is out of range (%s has %d entries)", index, done, size);
            size_t dl = strlen(done);
            snprintf(done + dl, sizeof done - dl, "[%ld]", index);
            if (last) {
                cJSON *v = cJSON_Parse(value);
                if (!v) v = cJSON_CreateString(value);
                if (!v || !cJSON_ReplaceItemInArray(arr, (int)index, v)) {
                    cJSON_Delete(v);
                    return prm_fail(&L->P, NULL, "out of memory");
                }
                return 0;
            }
            cur = cJSON_GetArrayItem(arr, (int)index);
            continue;
        }
        if (last) {
            cJSON *v = cJSON_Parse(value);
            if (!v) v = cJSON_CreateString(value);
            if (!v) return prm_fail(&L->P, NULL, "out of memory");
            if (next) {
                /* under the file's spelling of the key (the new item has no name of its own) */
                char key[128];
                snprintf(key, sizeof key, "%s", next->string);
                if (!cJSON_ReplaceItemInObject(cur, key, v)) {
                    cJSON_Delete(v);
                    return prm_fail(&L->P, NULL, "out of memory");
                }
            } else if (!cJSON_AddItemToObject(cur, name, v)) {
                cJSON_Delete(v);
                return prm_fail(&L->P, NULL, "out of memory");
            }
            return 0;
        }
        cur = next;
    }
}
