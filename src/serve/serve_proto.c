/* caustic serve's parsers: the page's input messages and the access token (serve_proto.h). */
#include "serve_proto.h"

#include <stdio.h>
#include <string.h>

/* A decimal integer (optional '-', no leading zeros) of at most 6 digits in lo..hi, ending at a space or the end;
 * advances *p. 0, or -1. */
static int field_int(const char **p, const char *end, long lo, long hi, long *out) {
    const char *s = *p;
    int neg = 0, digits = 0;
    long v = 0;
    if (s < end && *s == '-') {
        neg = 1;
        ++s;
    }
    while (s < end && *s >= '0' && *s <= '9') {
        if (++digits > 6) return -1;
        v = v * 10 + (*s - '0');
        ++s;
    }
    if (!digits || (s < end && *s != ' ')) return -1;
    if (digits > 1 && s[-digits] == '0') return -1; /* one spelling per number: no leading zeros, */
    if (neg && v == 0) return -1;                   /* nor -0 */
    if (neg) v = -v;
    if (v < lo || v > hi) return -1;
    *out = v;
    *p = s;
    return 0;
}

/* One space, then an integer. */
static int next_int(const char **p, const char *end, long lo, long hi, long *out) {
    if (*p >= end || **p != ' ') return -1;
    ++*p;
    return field_int(p, end, lo, hi, out);
}

int serve_parse_message(const char *data, size_t len, view_event *ev, char *err, size_t errlen) {
    memset(ev, 0, sizeof *ev);
    if (len > SERVE_MSG_MAX) {
        snprintf(err, errlen, "message of %zu bytes (at most %d)", len, SERVE_MSG_MAX);
        return -1;
    }
    if (len == 4 && !memcmp(data, "ping", 4)) return 0;
    if (len == 1 && data[0] == 'a') return 3;
    const char *p = data + 1, *end = data + len;
    long b = 0, x = 0, y = 0, n = 0;
    if (len < 3 || data[1] != ' ') goto bad;
    switch (data[0]) {
    case 'd':
    case 'u':
        if (next_int(&p, end, 1, 3, &b) || next_int(&p, end, 0, 65535, &x) || next_int(&p, end, 0, 65535, &y)) goto bad;
        ev->type = data[0] == 'd' ? VIEW_EV_BUTTON_DOWN : VIEW_EV_BUTTON_UP;
        ev->button = (int)b;
        break;
    case 'm':
        if (next_int(&p, end, 0, 65535, &x) || next_int(&p, end, 0, 65535, &y)) goto bad;
        ev->type = VIEW_EV_MOTION;
        break;
    case 't':
        if (next_int(&p, end, 0, 999999, &n) || p != end) goto bad;
        ev->x = (int)n;
        return 2;
    case 'w':
        if (next_int(&p, end, -100, 100, &n)) goto bad;
        ev->type = VIEW_EV_WHEEL;
        ev->dy = (int)n;
        break;
    case 'k':
    case 'K':
        if (len != 3 || data[2] <= ' ' || data[2] > '~') goto bad;
        ev->type = data[0] == 'k' ? VIEW_EV_KEY_DOWN : VIEW_EV_KEY_UP;
        ev->key = data[2] >= 'A' && data[2] <= 'Z' ? data[2] + 32 : data[2];
        p = end;
        break;
    default: goto bad;
    }
    if (p != end) goto bad;
    ev->x = (int)x;
    ev->y = (int)y;
    return 1;
bad:
    memset(ev, 0, sizeof *ev);
    snprintf(err, errlen, "not a message (d|u B X Y, m X Y, w N, k|K C, t N, a, ping)");
    return -1;
}

int serve_token_ok(const char *query, const char *token) {
    if (!query || !token) return 0;
    size_t tn = strlen(token);
    int found = 0, ok = 0;
    const char *p = query;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n >= 6 && !memcmp(p, "token=", 6)) {
            const char *v = p + 6;
            size_t vn = n - 6;
            unsigned diff = (unsigned)(vn != tn);
            for (size_t i = 0; i < tn; ++i)
                diff |= (unsigned)((i < vn ? (unsigned char)v[i] : 0) ^ (unsigned char)token[i]);
            ok = diff == 0;
            ++found;
        }
        if (!amp) break;
        p = amp + 1;
    }
    return found == 1 && ok;
}

int serve_json_string(const char *text, char *out, size_t n) {
    size_t o = 0;
    if (n < 3) return -1;
    out[o++] = '"';
    for (const unsigned char *s = (const unsigned char *)text; *s; ++s) {
        char esc[8];
        size_t k;
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*s;
            k = 2;
        } else if (*s < 0x20) {
            k = (size_t)snprintf(esc, sizeof esc, "\\u%04x", *s);
        } else {
            esc[0] = (char)*s;
            k = 1;
        }
        if (o + k + 2 > n) return -1;
        memcpy(out + o, esc, k);
        o += k;
    }
    out[o++] = '"';
    out[o] = 0;
    return (int)o;
}
