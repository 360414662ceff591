/* OpenEXR via tinyexr's C API. The file is read/written by us (tinyexr works on memory) so
 * that all file handling and error paths stay under our control. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tinyexr.h>

#include "image_internal.h"
#include "util/file.h"

/* ---- write --------------------------------------------------------------------------- */

/* One channel as the writer hands it to tinyexr. */
typedef struct exr_channel {
    char name[256];
    const float *src; /* interleaved: src[stride * i] */
    int stride, use_float;
} exr_channel;

static int channel_order(const void *a, const void *b) {
    return strcmp(((const exr_channel *)a)->name, ((const exr_channel *)b)->name);
}

int image__exr_write(FILE *f, const image *img, int use_float, const image_layer *layers, int nlayers, const char *path,
                     char *err, size_t errlen) {
    size_t n = (size_t)img->width * (size_t)img->height;
    int nch = 3;
    for (int l = 0; l < nlayers; l++) nch += (int)strlen(layers[l].channels);
    exr_channel *chs = calloc((size_t)nch, sizeof *chs);
    float *planes = malloc(n * (size_t)nch * sizeof(float));
    EXRChannelInfo *info = calloc((size_t)nch, sizeof *info);
    int *types = malloc((size_t)nch * sizeof(int)), *requested = malloc((size_t)nch * sizeof(int));
    unsigned char **ptrs = malloc((size_t)nch * sizeof *ptrs);
    int rc = -1;
    if (!chs || !planes || !info || !types || !requested || !ptrs) {
        image__set_err(err, errlen, "%s: out of memory (EXR writer)", path);
        goto done;
    }
    /* the colour as R, G, B; each layer's channels as LAYER.C */
    for (int c = 0; c < 3; c++) {
        snprintf(chs[c].name, sizeof chs[c].name, "%c", "RGB"[c]);
        chs[c].src = img->rgb + c;
        chs[c].stride = 3;
        chs[c].use_float = use_float;
    }
    int k = 3;
    for (int l = 0; l < nlayers; l++) {
        int lc = (int)strlen(layers[l].channels);
        for (int c = 0; c < lc; c++, k++) {
            snprintf(chs[k].name, sizeof chs[k].name, "%s.%c", layers[l].name, layers[l].channels[c]);
            chs[k].src = layers[l].data + c;
            chs[k].stride = lc;
            chs[k].use_float = 1;
        }
    }
    /* EXR readers expect channels sorted by name */
    qsort(chs, (size_t)nch, sizeof *chs, channel_order);
    for (int c = 0; c < nch; c++) {
        float *plane = planes + (size_t)c * n;
        for (size_t i = 0; i < n; i++) plane[i] = chs[c].src[(size_t)chs[c].stride * i];
        ptrs[c] = (unsigned char *)plane;
        snprintf(info[c].name, sizeof info[c].name, "%s", chs[c].name);
        info[c].pixel_type = chs[c].use_float ? TINYEXR_PIXELTYPE_FLOAT : TINYEXR_PIXELTYPE_HALF;
        info[c].x_sampling = info[c].y_sampling = 1;
        types[c] = TINYEXR_PIXELTYPE_FLOAT;                                                 /* what we hand over */
        requested[c] = chs[c].use_float ? TINYEXR_PIXELTYPE_FLOAT : TINYEXR_PIXELTYPE_HALF; /* stored */
    }

    EXRHeader hdr;
    InitEXRHeader(&hdr);
    hdr.num_channels = nch;
    hdr.channels = info;
    hdr.pixel_types = types;
    hdr.requested_pixel_types = requested;
    hdr.compression_type = TINYEXR_COMPRESSIONTYPE_ZIP;

    EXRImage ex;
    InitEXRImage(&ex);
    ex.num_channels = nch;
    ex.images = ptrs;
    ex.width = img->width;
    ex.height = img->height;

    unsigned char *mem = NULL;
    const char *xerr = NULL;
    size_t size = SaveEXRImageToMemory(&ex, &hdr, &mem, &xerr);
    /* hdr/ex point at our own arrays: never FreeEXRHeader/FreeEXRImage them */
    if (size == 0 || !mem) {
        image__set_err(err, errlen, "%s: EXR encode error: %s", path, xerr ? xerr : "unknown");
        if (xerr) FreeEXRErrorMessage(xerr);
        free(mem);
        goto done;
    }
    int ok = fwrite(mem, 1, size, f) == size;
    free(mem);
    if (!ok) {
        image__set_err(err, errlen, "%s: write error: %s", path, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    free(chs);
    free(planes);
    free(info);
    free(types);
    free(requested);
    free(ptrs);
    return rc;
}

/* ---- read ---------------------------------------------------------------------------- */

static int read_whole_file(const char *path, unsigned char **data, size_t *size, char *err, size_t errlen) {
    char why[256];
    /* the file itself counts against the cap of one decoded image */
    unsigned long long cap = image_memory_limit(why, sizeof why);
    if (!cap) {
        image__set_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    *data = (unsigned char *)file_read_all(path, cap > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)cap, size,
                                           why, sizeof why);
    if (!*data) {
        image__set_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

static int find_channel(const EXRHeader *h, const char *name) {
    for (int c = 0; c < h->num_channels; c++)
        if (strcmp(h->channels[c].name, name) == 0) return c;
    return -1;
}

/* value of channel plane `p` (type `type`) at element index i */
static float plane_value(const unsigned char *p, int type, size_t i) {
    if (type == TINYEXR_PIXELTYPE_UINT) {
        unsigned int u;
        memcpy(&u, p + 4 * i, 4);
        return (float)u;
    }
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

int image__exr_read(const char *path, image *img, char *err, size_t errlen) {
    img->width = img->height = 0;
    img->rgb = NULL;
    unsigned char *data = NULL;
    size_t size = 0;
    if (read_whole_file(path, &data, &size, err, errlen) != 0) return -1;

    EXRVersion ver;
    EXRHeader hdr;
    EXRImage ex;
    InitEXRHeader(&hdr);
    InitEXRImage(&ex);
    int have_hdr = 0, have_img = 0, rc = -1;
    const char *xerr = NULL;

    int r = ParseEXRVersionFromMemory(&ver, data, size);
    if (r != TINYEXR_SUCCESS) {
        image__set_err(err, errlen, "%s: invalid or truncated OpenEXR version header (code %d)", path, r);
        goto done;
    }
    if (ver.multipart || ver.non_image) {
        image__set_err(err, errlen, "%s: unsupported OpenEXR file (%s)", path,
                       ver.multipart ? "multi-part" : "deep data");
        goto done;
    }
    r = ParseEXRHeaderFromMemory(&hdr, &ver, data, size, &xerr);
    have_hdr = 1; /* tinyexr fills (allocates) the header even when parsing fails */
    if (r != TINYEXR_SUCCESS) {
        image__set_err(err, errlen, "%s: invalid OpenEXR header: %s", path, xerr ? xerr : "parse error");
        goto done;
    }

    long long w = (long long)hdr.data_window.max_x - hdr.data_window.min_x + 1;
    long long h = (long long)hdr.data_window.max_y - hdr.data_window.min_y + 1;
    /* the float image and tinyexr's planes (4 bytes a channel); PIZ's run-length Huffman code
   * has no useful bound on pixels per byte, the memory cap stands alone */
    if (image__claim_ok(path, "OpenEXR", w, h, 12.0 + 4.0 * (hdr.num_channels > 0 ? hdr.num_channels : 1), -1, 0.0, err,
                        errlen))
        goto done;

    int ci[3];
    ci[0] = find_channel(&hdr, "R");
    ci[1] = find_channel(&hdr, "G");
    ci[2] = find_channel(&hdr, "B");
    if (ci[0] < 0 || ci[1] < 0 || ci[2] < 0) {
        int y = find_channel(&hdr, "Y");
        if (y < 0 && hdr.num_channels == 1) y = 0; /* a lone channel of any name: gray */
        if (y < 0) {
            image__set_err(err, errlen, "%s: OpenEXR file has no R,G,B or Y channels", path);
            goto done;
        }
        ci[0] = ci[1] = ci[2] = y;
    }
    for (int k = 0; k < 3; k++) {
        const EXRChannelInfo *c = &hdr.channels[ci[k]];
        if (c->x_sampling != 1 || c->y_sampling != 1) {
            image__set_err(err, errlen, "%s: subsampled OpenEXR channel '%s' is not supported", path, c->name);
            goto done;
        }
    }
    for (int c = 0; c < hdr.num_channels; c++)
        if (hdr.pixel_types[c] == TINYEXR_PIXELTYPE_HALF) hdr.requested_pixel_types[c] = TINYEXR_PIXELTYPE_FLOAT;

    /* tinyexr 1.0.1 frees a partly decoded image itself on failure, but only the channel
   * planes that ex.num_channels announces, and it sets num_channels only on success: announce
   * them up front so a corrupt/truncated file does not leak. After a failure ex holds
   * dangling pointers and must not be freed again (have_img stays 0). */
    ex.num_channels = hdr.num_channels;
    r = LoadEXRImageFromMemory(&ex, &hdr, data, size, &xerr);
    if (r != TINYEXR_SUCCESS) {
        image__set_err(err, errlen, "%s: cannot decode OpenEXR pixels (truncated or corrupt?): %s", path,
                       xerr ? xerr : "decode error");
        goto done;
    }
    have_img = 1;
    if (ex.width != (int)w || ex.height != (int)h) {
        image__set_err(err, errlen, "%s: OpenEXR decoder returned an unexpected size", path);
        goto done;
    }
    if (image_init(img, (int)w, (int)h) != 0) {
        image__set_err(err, errlen, "%s: out of memory for %lldx%lld image", path, w, h);
        goto done;
    }

    int types[3];
    for (int k = 0; k < 3; k++) types[k] = hdr.requested_pixel_types[ci[k]];

    if (ex.tiles) {
        int tw = hdr.tile_size_x, th = hdr.tile_size_y;
        if (tw <= 0 || th <= 0) {
            image__set_err(err, errlen, "%s: invalid OpenEXR tile size", path);
            goto done;
        }
        for (int t = 0; t < ex.num_tiles; t++) {
            const EXRTile *tile = &ex.tiles[t];
            if (tile->level_x != 0 || tile->level_y != 0 || !tile->images) continue;
            for (int j = 0; j < tile->height && j < th; j++) {
                long long yy = (long long)tile->offset_y * th + j;
                if (yy < 0 || yy >= h) continue;
                for (int i = 0; i < tile->width && i < tw; i++) {
                    long long xx = (long long)tile->offset_x * tw + i;
                    if (xx < 0 || xx >= w) continue;
                    float *dst = img->rgb + 3 * ((size_t)yy * (size_t)w + (size_t)xx);
                    for (int k = 0; k < 3; k++)
                        dst[k] = plane_value(tile->images[ci[k]], types[k], (size_t)j * tw + (size_t)i);
                }
            }
        }
    } else if (ex.images) {
        size_t n = (size_t)w * (size_t)h;
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) img->rgb[3 * i + k] = plane_value(ex.images[ci[k]], types[k], i);
    } else {
        image__set_err(err, errlen, "%s: OpenEXR decoder returned no pixel data", path);
        goto done;
    }
    rc = 0;

done:
    if (xerr) FreeEXRErrorMessage(xerr);
    if (have_img) FreeEXRImage(&ex);
    if (have_hdr) FreeEXRHeader(&hdr);
    free(data);
    if (rc != 0) image_free(img);
    return rc;
}
