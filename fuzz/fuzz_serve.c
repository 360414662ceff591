/* Fuzz target for caustic serve's parsers (src/serve/serve_proto.c): the page's input messages
 * (serve_parse_message), the access token in a query string (serve_token_ok) and the JSON string
 * writer (serve_json_string), on arbitrary bytes.
 *
 * libFuzzer (clang 14), from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER -Isrc/serve -Isrc/cli -Iinclude \
 *     fuzz/fuzz_serve.c src/serve/serve_proto.c -o fuzz_serve
 *   mkdir -p /tmp/fzserve && ./fuzz_serve -max_total_time=300 /tmp/fzserve fuzz/corpus_serve
 * Without FUZZ_LIBFUZZER: the standalone driver (ctest: fuzz_smoke_serve).
 *
 * Properties: never reads past the input; a message that parses is at most SERVE_MSG_MAX bytes,
 * gives an event of a known type with fields in range, and printing that event back in the
 * protocol's form gives the same bytes (one spelling per event: no leading zeros, no '+', one
 * space); what is refused says why. A token is accepted only when the query holds exactly one
 * token= whose value equals it. JSON strings hold no raw control character and end in '"'. */
#include "serve_proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the message: exactly the bytes (no terminator: the parser must not look past them) */
    char *msg = malloc(size ? size : 1);
    memcpy(msg, data, size);
    view_event ev;
    char err[200] = "";
    int rc = serve_parse_message(msg, size, &ev, err, sizeof err);
    if (rc < 0 && !err[0]) abort();
    if (rc >= 0 && size > SERVE_MSG_MAX) abort();
    if (rc == 0 && (size != 4 || memcmp(msg, "ping", 4))) abort();
    if (rc == 3 && (size != 1 || msg[0] != 'a')) abort();
    if (rc > 0 && rc != 3) {
        char back[80];
        int n = 0;
        switch (ev.type) {
        case VIEW_EV_BUTTON_DOWN:
        case VIEW_EV_BUTTON_UP:
            if (ev.button < 1 || ev.button > 3) abort();
            n = snprintf(back, sizeof back, "%c %d %d %d", ev.type == VIEW_EV_BUTTON_DOWN ? 'd' : 'u', ev.button, ev.x,
                         ev.y);
            break;
        case VIEW_EV_MOTION: n = snprintf(back, sizeof back, "m %d %d", ev.x, ev.y); break;
        case VIEW_EV_WHEEL:
            if (ev.dy < -100 || ev.dy > 100) abort();
            n = snprintf(back, sizeof back, "w %d", ev.dy);
            break;
        case VIEW_EV_KEY_DOWN:
        case VIEW_EV_KEY_UP:
            if (ev.key <= ' ' || ev.key > '~' || (ev.key >= 'A' && ev.key <= 'Z')) abort();
            n = snprintf(back, sizeof back, "%c %c", ev.type == VIEW_EV_KEY_DOWN ? 'k' : 'K', ev.key);
            break;
        case VIEW_EV_NONE:
            if (rc != 2) abort();
            n = snprintf(back, sizeof back, "t %d", ev.x);
            break;
        default: abort();
        }
        if (ev.x < 0 || ev.x > 999999 || ev.y < 0 || ev.y > 65535) abort();
        /* upper-case key letters arrive lower-cased: compare ignoring that */
        if ((size_t)n != size) abort();
        for (size_t i = 0; i < size; ++i) {
            char a = msg[i], b = back[i];
            if (a >= 'A' && a <= 'Z' && i == 2 && (msg[0] == 'k' || msg[0] == 'K')) a = (char)(a + 32);
            if (a != b) abort();
        }
    }
    /* the query: a NUL-terminated copy */
    char *q = malloc(size + 1);
    memcpy(q, data, size);
    q[size] = 0;
    const char *tok = "0123456789abcdef0123456789abcdef";
    if (serve_token_ok(q, tok)) { /* exactly one parameter token=, and its value is tok */
        int found = 0;
        for (const char *p = q; p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL)
            if (!strncmp(p, "token=", 6)) {
                ++found;
                if (strncmp(p + 6, tok, 32) || (p[38] && p[38] != '&')) abort();
            }
        if (found != 1) abort();
    }
    /* JSON */
    char json[300];
    int jn = serve_json_string(q, json, sizeof json);
    if (jn >= 0) {
        if ((size_t)jn >= sizeof json || json[0] != '"' || json[jn - 1] != '"' || jn < 2) abort();
        for (int i = 0; i < jn; ++i)
            if ((unsigned char)json[i] < 0x20) abort();
    }
    free(q);
    free(msg);
    return 0;
}

#define FUZZ_DRIVER_NAME "fuzz_serve"
#include "driver.h"
