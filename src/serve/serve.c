/* caustic serve: caustic view's viewer (src/cli/view.c: view_main, the same camera controls, keys,
 * readout and frame loop over the steerable API) with a web page in the window's place, for
 * machines without a display (a GPU server reached through a browser, or an SSH tunnel).
 *
 * The HTTP and WebSocket server is CivetWeb (Debian's libcivetweb-dev, MIT, embedded-server
 * library kept by the civetweb project): of Debian 12's three, libmicrohttpd 0.9.75 has HTTP
 * upgrade but no WebSocket framing (its libmicrohttpd_ws is experimental and not packaged), and
 * libwebsockets 4.1 asks for its own event loop and protocol tables around every connection;
 * CivetWeb gives a request handler and a WebSocket handler per URI over its own worker threads,
 * with limits on request size and time, and writes that other threads may call. It is built
 * here with no document root, so it serves no files: only the page compiled into the binary
 * (serve_page.html) at / and the render at /ws.
 *
 * Safe by default: it listens on 127.0.0.1 (--bind for another address) and every request, the
 * page and the socket, must carry ?token=T, a random 128-bit token printed on start in the
 * page's full URL (as Jupyter does). Anything else gets a refusal naming why (403 no token, 404
 * another path, 405 another method, 503 too many viewers); a socket that sends a bad message gets
 * an error back, and is closed after SERVE_BAD_MAX of them, a binary or oversized message, or
 * more than SERVE_MSGS_PER_S messages in a second. None of it touches the render.
 *
 * Frames: the viewer presents 8-bit frames (view.c's show); the latest is kept (one copy), and
 * an encoder thread turns it into a JPEG only when some viewer has sent everything before it.
 * Each viewer has a thread that sends the newest JPEG while fewer than SERVE_IN_FLIGHT (2) of
 * the frames it sent are unacknowledged (the page says "a" when it has drawn one): a slow link
 * gets fewer frames, the ones in between dropped, and never more than two wait in socket
 * buffers (without the acknowledgement the kernel's buffers held a second of frames on
 * loopback); several viewers watch one render, each at its own rate. A frame is 8 bytes (the last tag the
 * viewer had applied, and the frame's number, both little-endian uint32) and the JPEG: tools/
 * serve_client.py sends "t N" after a mouse move and times the first frame with tag N. Text
 * (the readout, the viewer's messages) goes as JSON text frames. */
#include <arpa/inet.h>
#include <civetweb.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

#include "args.h"
#include "cli.h"
#include "serve_page.h"
#include "serve_proto.h"
#include "view.h"

enum {
    SERVE_MAX_VIEWERS = 8,  /* sockets at once; more get 503 */
    SERVE_QUEUE = 256,      /* input events waiting for the viewer; more are dropped */
    SERVE_BAD_MAX = 16,     /* bad messages before a socket is closed */
    SERVE_MSGS_PER_S = 1000 /* a socket sending more in a second is closed */
};

static const char *usage_serve =
    "usage: caustic serve [SCENE] [--port N] [--bind ADDR] [options of caustic view]\n"
    "\n"
    "Renders SCENE (default cornell) on the GPU when there is one, else the CPU, and serves a web\n"
    "page that shows the image as it refines and steers it as 'caustic view' does: left drag\n"
    "orbit, right or middle drag pan, wheel zoom, left click focus, the keys of caustic view (the\n"
    "page lists them), the readout (device, integrator, spp, samples/s, look). Any number of\n"
    "browsers (up to 8) may watch one render; each gets frames as fast as its link takes them.\n"
    "\n"
    "  --port N       TCP port (default 8080; 0: any free port, printed)\n"
    "  --bind ADDR    IPv4 address to listen on (default 127.0.0.1: this machine only; reach it\n"
    "                 from elsewhere with ssh -L, or --bind 0.0.0.0 on a trusted network)\n"
    "  --jpeg-quality Q  frames' JPEG quality 1..100 (default 85)\n"
    "\n"
    "On start it prints the page's URL with an access token (?token=...): every request must carry\n"
    "it. The keys p (save) and c (camera) write files on the machine that renders, as caustic view's.\n"
    "Other options: as 'caustic view' (--res, --device, --integrator, --spp, --exposure, --tonemap,\n"
    "--camera, -o, ...); not its --bench* or --input-script. Ctrl-C (SIGINT) or SIGTERM stops it.\n";

/* ---- state shared by the viewer's thread, the encoder and the sockets' threads ----------------- */
typedef struct blob { /* an encoded frame, shared by the sockets sending it */
    int refs;
    uint32_t seq, tag;
    size_t size;
    unsigned char *data;
} blob;

struct server;
typedef struct client {
    struct server *srv;
    struct mg_connection *conn;
    pthread_t thread;
    int started, closing;
    uint32_t frame_seq;     /* the last frame this socket sent */
    int in_flight;          /* frames sent and not yet acknowledged ("a") */
    unsigned long text_seq; /* the last text state it sent */
    int bad, window_n;
    time_t window_t;
} client;

typedef struct queued {
    view_event ev;
    long tag; /* >= 0: a tag (no event) */
} queued;

typedef struct server {
    struct mg_context *ctx;
    char token[SERVE_TOKEN_HEX + 1];
    int quality;
    pthread_mutex_t m;
    pthread_cond_t c;
    int stopping, quit_sent;
    /* the newest frame presented */
    unsigned char *raw;
    size_t raw_cap;
    int rw, rh;
    uint32_t raw_seq, raw_tag;
    /* the newest encoded */
    pthread_t enc;
    int enc_started;
    blob *jpeg;
    /* text: the readout and the viewer's last message */
    char title[512], overlay[512], message[1024];
    unsigned long text_seq, message_seq;
    /* input */
    queued q[SERVE_QUEUE];
    int qhead, qn;
    uint32_t applied_tag;
    client *clients[SERVE_MAX_VIEWERS];
    int nclients;
    unsigned long long frames_encoded, frames_sent;
} server;

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
    (void)sig;
    stop_signal = 1;
}

static void blob_unref(blob *b) {
    if (b && --b->refs == 0) {
        free(b->data);
        free(b);
    }
}

/* The 8-bit RGB frame as a JPEG in memory (libjpeg's memory destination). 0, or -1. */
static int encode_jpeg(const unsigned char *rgb, int w, int h, int quality, unsigned char **out, size_t *size) {
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr jerr;
    unsigned long n = 0;
    *out = NULL;
    ci.err = jpeg_std_error(&jerr); /* (errors here are out of memory: libjpeg exits; none expected) */
    jpeg_create_compress(&ci);
    jpeg_mem_dest(&ci, out, &n);
    ci.image_width = (JDIMENSION)w;
    ci.image_height = (JDIMENSION)h;
    ci.input_components = 3;
    ci.in_color_space = JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, quality, TRUE);
    ci.dct_method = JDCT_IFAST;
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)ci.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    *size = n;
    return *out ? 0 : -1;
}

/* Some socket has sent the newest encoded frame and has room for another (so a newer one would go
 * out at once). */
static int some_client_idle(const server *s) {
    uint32_t newest = s->jpeg ? s->jpeg->seq : 0;
    for (int i = 0; i < s->nclients; ++i) {
        const client *c = s->clients[i];
        if (!c->closing && c->frame_seq == newest && c->in_flight < SERVE_IN_FLIGHT) return 1;
    }
    return 0;
}

static void *encoder_main(void *arg) {
    server *s = arg;
    unsigned char *buf = NULL;
    size_t cap = 0;
    uint32_t failed = 0; /* a frame that could not be encoded (out of memory): the next one is tried */
    pthread_mutex_lock(&s->m);
    while (!s->stopping) {
        uint32_t have = s->jpeg ? s->jpeg->seq : 0;
        if (s->raw_seq == have || s->raw_seq == failed || !some_client_idle(s)) {
            pthread_cond_wait(&s->c, &s->m);
            continue;
        }
        int w = s->rw, h = s->rh;
        uint32_t seq = s->raw_seq, tag = s->raw_tag;
        size_t n = (size_t)w * (size_t)h * 3;
        if (n > cap) {
            unsigned char *grown = realloc(buf, n);
            if (!grown) break;
            buf = grown;
            cap = n;
        }
        memcpy(buf, s->raw, n);
        pthread_mutex_unlock(&s->m);
        blob *b = calloc(1, sizeof *b);
        unsigned char *jpg = NULL;
        size_t size = 0;
        int ok = b && !encode_jpeg(buf, w, h, s->quality, &jpg, &size);
        unsigned char *data = ok ? malloc(size + 8) : NULL;
        pthread_mutex_lock(&s->m);
        if (!data) {
            free(b);
            free(jpg);
            failed = seq;
            continue;
        }
        for (int i = 0; i < 4; ++i) {
            data[i] = (unsigned char)(tag >> (8 * i));
            data[4 + i] = (unsigned char)(seq >> (8 * i));
        }
        memcpy(data + 8, jpg, size);
        free(jpg);
        b->refs = 1;
        b->seq = seq;
        b->tag = tag;
        b->size = size + 8;
        b->data = data;
        blob_unref(s->jpeg);
        s->jpeg = b;
        s->frames_encoded++;
        pthread_cond_broadcast(&s->c);
    }
    pthread_mutex_unlock(&s->m);
    free(buf);
    return NULL;
}

/* The text state as JSON (under the lock). */
static void text_json(const server *s, char *out, size_t n) {
    char t[1100], o[1100], msg[2200];
    if (serve_json_string(s->title, t, sizeof t) < 0) snprintf(t, sizeof t, "\"\"");
    if (serve_json_string(s->overlay, o, sizeof o) < 0) snprintf(o, sizeof o, "\"\"");
    if (serve_json_string(s->message, msg, sizeof msg) < 0) snprintf(msg, sizeof msg, "\"\"");
    snprintf(out, n, "{\"title\":%s,\"overlay\":%s,\"message\":%s,\"message_seq\":%lu,\"viewers\":%d}", t, o, msg,
             s->message_seq, s->nclients);
}

static int send_text(struct mg_connection *conn, const char *text) {
    return mg_websocket_write(conn, MG_WEBSOCKET_OPCODE_TEXT, text, strlen(text)) > 0 ? 0 : -1;
}

/* A socket's sender: the newest text state and the newest frame whenever they change. */
static void *client_main(void *arg) {
    client *c = arg;
    server *s = c->srv;
    char *text = malloc(8192);
    pthread_mutex_lock(&s->m);
    while (text && !c->closing && !s->stopping) {
        if (s->text_seq != c->text_seq) {
            text_json(s, text, 8192);
            c->text_seq = s->text_seq;
            pthread_mutex_unlock(&s->m);
            int rc = send_text(c->conn, text);
            pthread_mutex_lock(&s->m);
            if (rc) break;
        } else if (s->jpeg && s->jpeg->seq != c->frame_seq && c->in_flight < SERVE_IN_FLIGHT) {
            blob *b = s->jpeg;
            b->refs++;
            pthread_mutex_unlock(&s->m);
            int rc = mg_websocket_write(c->conn, MG_WEBSOCKET_OPCODE_BINARY, (const char *)b->data, b->size) > 0;
            pthread_mutex_lock(&s->m);
            c->frame_seq = b->seq;
            c->in_flight++;
            blob_unref(b);
            if (!rc) break;
            s->frames_sent++;
            pthread_cond_broadcast(&s->c); /* the encoder waits for an idle socket */
        } else
            pthread_cond_wait(&s->c, &s->m);
    }
    c->closing = 1;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    free(text);
    return NULL;
}

/* An input event for the viewer (under the lock); a move right after a move replaces it, and a
 * full queue drops the event. */
static void enqueue(server *s, const view_event *ev, long tag) {
    if (s->qn > 0 && tag < 0 && ev->type == VIEW_EV_MOTION) {
        queued *last = &s->q[(s->qhead + s->qn - 1) % SERVE_QUEUE];
        if (last->tag < 0 && last->ev.type == VIEW_EV_MOTION) {
            last->ev = *ev;
            return;
        }
    }
    if (s->qn == SERVE_QUEUE) return;
    queued *q = &s->q[(s->qhead + s->qn++) % SERVE_QUEUE];
    q->ev = *ev;
    q->tag = tag;
}

/* ---- HTTP: the page, and refusals --------------------------------------------------------------- */
/* The whole response written here (CivetWeb's mg_send_http_error leaves out the status line when
 * it answers a WebSocket upgrade). */
static int refuse(struct mg_connection *conn, int status, const char *why) {
    const char *reason = status == 403   ? "Forbidden"
                         : status == 404 ? "Not Found"
                         : status == 405 ? "Method Not Allowed"
                                         : "Service Unavailable";
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %lu\r\n"
              "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
              "caustic serve: %s\n",
              status, reason, (unsigned long)(strlen("caustic serve: \n") + strlen(why)), why);
    return status;
}

static int on_request(struct mg_connection *conn, void *cbdata) {
    server *s = cbdata;
    const struct mg_request_info *ri = mg_get_request_info(conn);
    if (strcmp(ri->request_method, "GET") && strcmp(ri->request_method, "HEAD"))
        return refuse(conn, 405, "only GET is served");
    if (!ri->local_uri || strcmp(ri->local_uri, "/"))
        return refuse(conn, 404, "nothing here: caustic serve serves its page (/) and its socket (/ws) only");
    if (!serve_token_ok(ri->query_string, s->token))
        return refuse(conn, 403, "this needs the access token printed when caustic serve started (/?token=...)");
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %lu\r\n"
              "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
              "X-Frame-Options: DENY\r\nContent-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; "
              "style-src 'unsafe-inline'; img-src blob: data:; connect-src 'self'\r\nConnection: close\r\n\r\n",
              (unsigned long)serve_page_len);
    if (strcmp(ri->request_method, "HEAD")) mg_write(conn, serve_page, serve_page_len);
    return 200;
}

/* ---- WebSocket: /ws?token=T ------------------------------------------------------------------ */
static int on_ws_connect(const struct mg_connection *cconn, void *cbdata) {
    server *s = cbdata;
    struct mg_connection *conn = (struct mg_connection *)cconn; /* (CivetWeb lets the handler answer) */
    const struct mg_request_info *ri = mg_get_request_info(conn);
    if (!ri->local_uri || strcmp(ri->local_uri, "/ws")) {
        refuse(conn, 404, "nothing here: caustic serve's socket is /ws");
        return 1;
    }
    if (!serve_token_ok(ri->query_string, s->token)) {
        refuse(conn, 403, "this needs the access token printed when caustic serve started (/ws?token=...)");
        return 1;
    }
    pthread_mutex_lock(&s->m);
    int full = s->nclients >= SERVE_MAX_VIEWERS;
    pthread_mutex_unlock(&s->m);
    if (full) {
        refuse(conn, 503, "too many viewers (8 at once)");
        return 1;
    }
    return 0;
}

static void on_ws_ready(struct mg_connection *conn, void *cbdata) {
    server *s = cbdata;
    client *c = calloc(1, sizeof *c);
    if (!c) return;
    c->srv = s;
    c->conn = conn;
    pthread_mutex_lock(&s->m);
    if (s->nclients >= SERVE_MAX_VIEWERS || s->stopping) {
        pthread_mutex_unlock(&s->m);
        free(c);
        mg_websocket_write(conn, MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, "\x03\xf7too many viewers", 18);
        return;
    }
    s->clients[s->nclients++] = c;
    s->text_seq++; /* the viewer count changed: everyone's page shows it */
    c->started = !pthread_create(&c->thread, NULL, client_main, c);
    if (!c->started) c->closing = 1;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    mg_set_user_connection_data(conn, c);
}

/* A close frame with a status (1008 policy, 1009 too big) and a reason; 0 (closes the socket). */
static int close_with(struct mg_connection *conn, int code, const char *why) {
    char frame[128];
    size_t n = strlen(why);
    if (n > sizeof frame - 2) n = sizeof frame - 2;
    frame[0] = (char)(code >> 8);
    frame[1] = (char)(code & 255);
    memcpy(frame + 2, why, n);
    mg_websocket_write(conn, MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, frame, n + 2);
    return 0;
}

static int on_ws_data(struct mg_connection *conn, int bits, char *data, size_t len, void *cbdata) {
    server *s = cbdata;
    client *c = mg_get_user_connection_data(conn);
    int op = bits & 0xf;
    if (op == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE) return 0;
    if (op == MG_WEBSOCKET_OPCODE_PING || op == MG_WEBSOCKET_OPCODE_PONG) return 1;
    if (!c) return 0;
    if (op != MG_WEBSOCKET_OPCODE_TEXT) return close_with(conn, 1003, "caustic serve takes text messages only");
    if (len > SERVE_MSG_MAX) return close_with(conn, 1009, "message too big (at most 64 bytes)");
    time_t now = time(NULL);
    if (now != c->window_t) {
        c->window_t = now;
        c->window_n = 0;
    }
    if (++c->window_n > SERVE_MSGS_PER_S) return close_with(conn, 1008, "too many messages (flood)");
    view_event ev;
    char err[160];
    int rc = serve_parse_message(data, len, &ev, err, sizeof err);
    if (rc < 0) {
        char reply[400], quoted[200];
        if (serve_json_string(err, quoted, sizeof quoted) < 0) snprintf(quoted, sizeof quoted, "\"bad message\"");
        snprintf(reply, sizeof reply, "{\"error\":%s}", quoted);
        send_text(conn, reply);
        return ++c->bad >= SERVE_BAD_MAX ? close_with(conn, 1008, "too many bad messages") : 1;
    }
    if (rc == 0) return 1; /* ping */
    if (rc == 3) {         /* a frame drawn: room for the next */
        pthread_mutex_lock(&s->m);
        if (c->in_flight > 0) c->in_flight--;
        pthread_cond_broadcast(&s->c);
        pthread_mutex_unlock(&s->m);
        return 1;
    }
    pthread_mutex_lock(&s->m);
    enqueue(s, &ev, rc == 2 ? ev.x : -1);
    pthread_mutex_unlock(&s->m);
    return 1;
}

static void on_ws_close(const struct mg_connection *conn, void *cbdata) {
    server *s = cbdata;
    client *c = mg_get_user_connection_data(conn);
    if (!c) return;
    pthread_mutex_lock(&s->m);
    c->closing = 1;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    if (c->started) pthread_join(c->thread, NULL);
    pthread_mutex_lock(&s->m);
    for (int i = 0; i < s->nclients; ++i)
        if (s->clients[i] == c) {
            s->clients[i] = s->clients[--s->nclients];
            break;
        }
    /* keys this page held (w a s d q e fly while held) let go */
    const char *held = "wasdqe";
    for (const char *k = held; *k; ++k) {
        view_event ev = {VIEW_EV_KEY_UP, *k, 0, 0, 0, 0};
        enqueue(s, &ev, -1);
    }
    s->text_seq++;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    mg_set_user_connection_data(conn, NULL);
    free(c);
}

static int on_log(const struct mg_connection *conn, const char *message) {
    (void)conn;
    fprintf(stderr, "caustic serve: %s\n", message);
    return 1;
}

/* ---- the viewer's front end (view_window_ops) ----------------------------------------------- */
typedef struct serve_config {
    const char *bind;
    int port;
    int quality;
    int quiet;
} serve_config;

static int random_token(char *out, char *err, size_t errlen) {
    unsigned char b[SERVE_TOKEN_HEX / 2];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0) close(fd);
    if (got != (ssize_t)sizeof b) {
        snprintf(err, errlen, "cannot read /dev/urandom for the access token");
        return -1;
    }
    for (size_t i = 0; i < sizeof b; ++i) snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static void *serve_open(void *ctx, int width, int height, const char *title, char *err, size_t errlen) {
    const serve_config *cfg = ctx;
    (void)width;
    (void)height;
    (void)title;
    server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->c, NULL);
    s->quality = cfg->quality;
    if (random_token(s->token, err, errlen)) goto fail;
    char ports[64];
    snprintf(ports, sizeof ports, "%s:%d", cfg->bind, cfg->port);
    const char *options[] = {"listening_ports",
                             ports,
                             "num_threads",
                             "16",
                             "request_timeout_ms",
                             "10000",
                             "max_request_size",
                             "8192",
                             "enable_keep_alive",
                             "no",
                             "websocket_timeout_ms",
                             "30000",
                             "enable_websocket_ping_pong",
                             "yes",
                             "enable_directory_listing",
                             "no",
                             "tcp_nodelay", /* small messages (the readout, a frame's tail) go at once */
                             "1",
                             NULL};
    struct mg_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.log_message = on_log;
    struct mg_init_data init;
    memset(&init, 0, sizeof init);
    init.callbacks = &cb;
    init.user_data = s;
    init.configuration_options = options;
    char mgerr[256] = "";
    unsigned code = 0;
    struct mg_error_data ed = {&code, mgerr, sizeof mgerr};
    mg_init_library(0);
    s->ctx = mg_start2(&init, &ed);
    if (!s->ctx) {
        snprintf(err, errlen, "cannot listen on %s: %s", ports, mgerr[0] ? mgerr : "CivetWeb did not start");
        goto fail;
    }
    mg_set_request_handler(s->ctx, "/", on_request, s);
    mg_set_websocket_handler(s->ctx, "/ws", on_ws_connect, on_ws_ready, on_ws_data, on_ws_close, s);
    if (pthread_create(&s->enc, NULL, encoder_main, s)) {
        snprintf(err, errlen, "cannot start the encoder thread");
        goto fail;
    }
    s->enc_started = 1;
    struct mg_server_port sp[4];
    int np = mg_get_server_ports(s->ctx, 4, sp), port = np > 0 ? sp[0].port : cfg->port;
    const char *host = strcmp(cfg->bind, "0.0.0.0") ? cfg->bind : "HOST";
    printf("caustic serve: open http://%s:%d/?token=%s\n", host, port, s->token);
    if (!strcmp(cfg->bind, "127.0.0.1"))
        printf("caustic serve: (this machine only; from another: ssh -L %d:127.0.0.1:%d THIS_HOST, then the URL)\n",
               port, port);
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C ends it at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return s;
fail:
    if (s->ctx) mg_stop(s->ctx);
    pthread_mutex_destroy(&s->m);
    pthread_cond_destroy(&s->c);
    free(s);
    return NULL;
}

static int serve_poll(void *w, view_event *ev) {
    server *s = w;
    if (stop_signal && !s->quit_sent) { /* once: the viewer polls until nothing is left */
        s->quit_sent = 1;
        memset(ev, 0, sizeof *ev);
        ev->type = VIEW_EV_QUIT;
        return 1;
    }
    int got = 0;
    pthread_mutex_lock(&s->m);
    while (s->qn > 0 && !got) {
        queued q = s->q[s->qhead];
        s->qhead = (s->qhead + 1) % SERVE_QUEUE;
        s->qn--;
        if (q.tag >= 0)
            s->applied_tag = (uint32_t)q.tag;
        else {
            *ev = q.ev;
            got = 1;
        }
    }
    pthread_mutex_unlock(&s->m);
    return got;
}

static int serve_present(void *w, const unsigned char *rgb8, int width, int height, char *err, size_t errlen) {
    server *s = w;
    size_t n = (size_t)width * (size_t)height * 3;
    pthread_mutex_lock(&s->m);
    if (n > s->raw_cap) {
        unsigned char *grown = realloc(s->raw, n);
        if (!grown) {
            pthread_mutex_unlock(&s->m);
            snprintf(err, errlen, "out of memory for a %dx%d frame", width, height);
            return -1;
        }
        s->raw = grown;
        s->raw_cap = n;
    }
    memcpy(s->raw, rgb8, n);
    s->rw = width;
    s->rh = height;
    s->raw_seq++;
    s->raw_tag = s->applied_tag;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    return 0;
}

static void set_text(server *s, char *field, size_t n, const char *text, int is_message) {
    pthread_mutex_lock(&s->m);
    if (strcmp(field, text ? text : "") || is_message) {
        snprintf(field, n, "%s", text ? text : "");
        s->text_seq++;
        if (is_message) s->message_seq++;
        pthread_cond_broadcast(&s->c);
    }
    pthread_mutex_unlock(&s->m);
}

static void serve_set_title(void *w, const char *title) {
    server *s = w;
    set_text(s, s->title, sizeof s->title, title, 0);
}

static int serve_set_overlay(void *w, const char *text, char *err, size_t errlen) {
    server *s = w;
    (void)err;
    (void)errlen;
    set_text(s, s->overlay, sizeof s->overlay, text, 0);
    return 0;
}

static void serve_message(void *w, const char *text) {
    server *s = w;
    set_text(s, s->message, sizeof s->message, text, 1);
}

static const char *serve_renderer(const void *w) {
    (void)w;
    return "web page (JPEG over WebSocket)";
}

static const char *serve_text_missing(const void *w) {
    (void)w;
    return NULL;
}

static void serve_resize(void *w, int width, int height) {
    (void)w;
    (void)width;
    (void)height;
}

static void serve_close(void *w) {
    server *s = w;
    if (!s) return;
    /* stop the server first: its close handlers end the sockets' threads */
    pthread_mutex_lock(&s->m);
    s->stopping = 1;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    mg_stop(s->ctx);
    if (s->enc_started) pthread_join(s->enc, NULL);
    printf("caustic serve: stopped (%llu frames encoded, %llu sent)\n", s->frames_encoded, s->frames_sent);
    blob_unref(s->jpeg);
    free(s->raw);
    pthread_mutex_destroy(&s->m);
    pthread_cond_destroy(&s->c);
    free(s);
    mg_exit_library();
}

static const view_window_ops serve_ops = {serve_open,     serve_poll,         serve_present,     serve_set_title,
                                          serve_renderer, serve_text_missing, serve_set_overlay, serve_resize,
                                          serve_close,    serve_message};

static int serve_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "caustic serve: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'caustic serve --help' for usage)\n");
    return EXIT_USAGE;
}

int cmd_serve(int argc, char **argv) {
    serve_config cfg = {"127.0.0.1", 8080, 85, 0};
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return EXIT_RUNTIME;
    int nrest = 0, rc;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_serve, stdout);
            free(rest);
            return 0;
        }
        if (!strcmp(a, "--port") || !strcmp(a, "--bind") || !strcmp(a, "--jpeg-quality")) {
            if (!val) {
                free(rest);
                return serve_usage("option %s needs a value", a);
            }
            ++i;
            struct in_addr addr;
            if (!strcmp(a, "--port") && parse_int(val, 0, 65535, &n))
                rc = serve_usage("--port: '%s' is not a port in 0..65535", val);
            else if (!strcmp(a, "--bind") && inet_pton(AF_INET, val, &addr) != 1)
                rc = serve_usage("--bind: '%s' is not an IPv4 address (e.g. 127.0.0.1, 0.0.0.0)", val);
            else if (!strcmp(a, "--jpeg-quality") && parse_int(val, 1, 100, &n))
                rc = serve_usage("--jpeg-quality: '%s' is not an integer in 1..100", val);
            else
                rc = 0;
            if (rc) {
                free(rest);
                return rc;
            }
            if (!strcmp(a, "--port"))
                cfg.port = (int)n;
            else if (!strcmp(a, "--bind"))
                cfg.bind = val;
            else
                cfg.quality = (int)n;
            continue;
        }
        if (!strncmp(a, "--bench", 7) || !strcmp(a, "--input-script")) {
            free(rest);
            return serve_usage("%s is caustic view's (run it there)", a);
        }
        rest[nrest++] = argv[i];
    }
    rc = view_main("caustic serve", nrest, rest, &serve_ops, &cfg);
    free(rest);
    return rc;
}
