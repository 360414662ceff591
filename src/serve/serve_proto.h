/* caustic serve's parsers, kept apart from the server so that a fuzz target (fuzz/fuzz_serve.c)
 * can drive them alone: the page's input messages and the access token in a query string.
 *
 * Messages (WebSocket text frames from the page, ASCII, at most SERVE_MSG_MAX bytes):
 *   d B X Y   button B (1 left, 2 middle, 3 right) down at image pixel X, Y
 *   u B X Y   button B up at X, Y
 *   m X Y     the pointer moved to X, Y
 *   w N       wheel, N notches (positive: zoom in), -100..100
 *   k C       key C down (one printable ASCII character but space, as view's keys: w a s d ...)
 *   K C       key C up
 *   t N       a tag, 0..999999: frames presented after the viewer took the events before it
 *             carry N (tools/serve_client.py times a mouse move to its first frame with it)
 *   a         a frame drawn: the server sends a socket at most SERVE_IN_FLIGHT frames it
 *             has not acknowledged, so frames never pile up in buffers on a slow link
 *   ping      nothing (a keep-alive)
 * X and Y are in 0..65535. Single spaces between fields; no other bytes. */
#ifndef CAUSTIC_SERVE_PROTO_H
#define CAUSTIC_SERVE_PROTO_H

#include <stddef.h>

#include "view.h"

enum { SERVE_MSG_MAX = 64, SERVE_TOKEN_HEX = 32, SERVE_IN_FLIGHT = 2 };

/* 1 with the event in *ev, 2 for a tag (N in ev->x), 3 for an acknowledgement, 0 for a ping, -1
 * with why in err. */
int serve_parse_message(const char *data, size_t len, view_event *ev, char *err, size_t errlen);

/* 1 when the query string (NULL: none) has exactly one token=VALUE and VALUE equals token, else 0.
 * The comparison takes the same time wherever the first difference is. */
int serve_token_ok(const char *query, const char *token);

/* The text as a JSON string literal (quotes and escapes added) into out; its length, or -1 when
 * it does not fit in n bytes. */
int serve_json_string(const char *text, char *out, size_t n);

#endif
