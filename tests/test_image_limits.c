/* The image readers allocate only what the file can hold and what the memory cap allows
 * (CAUSTIC_IMAGE_MEMORY): headers that claim more are refused before any allocation, with a
 * message naming the file; image_sanitize counts and zeroes values no texture may hold. With
 * --write-seeds DIR it writes small images of every format (and the crafted ones) as the seed
 * corpus of fuzz/fuzz_image.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>
#include <png.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "image/image.h"
#include "testing.h"

static char dir[256];
static const char *seed_dir = NULL;

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static void write_bytes(const char *name, const void *data, size_t size) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, size, f) != size) abort();
    fclose(f);
}

static unsigned char *read_bytes(const char *name, size_t *size) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "rb");
    if (!f) abort();
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*size + 1);
    if (!b || fread(b, 1, *size, f) != *size) abort();
    fclose(f);
    return b;
}

static long max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Loads `name`: want NULL = success with a w x h image, else a fragment of the message. Copies
 * the file into the seed folder when asked. */
static void expect(const char *name, int w, int h, const char *want) {
    char p[512], err[512] = "";
    path_of(p, sizeof p, name);
    image img;
    long before = max_rss_kb();
    int rc = image_load(&img, p, err, sizeof err);
    long grew = max_rss_kb() - before;
    if (!want) {
        CHECK(rc == 0 && img.width == w && img.height == h, "%s: rc %d %dx%d: %s", name, rc, img.width, img.height,
              err);
    } else {
        CHECK(rc == -1 && strstr(err, want) && !strncmp(err, p, strlen(p)) && !img.rgb,
              "%s: rc %d, message '%s', expected '%s'", name, rc, err, want);
        CHECK(grew < 64 * 1024, "%s: a refused header grew the peak memory by %ld KiB", name, grew);
    }
    image_free(&img);
    if (seed_dir) {
        size_t n;
        unsigned char *b = read_bytes(name, &n);
        char s[4096];
        snprintf(s, sizeof s, "%s/%s", seed_dir, name);
        FILE *f = fopen(s, "wb");
        if (!f || fwrite(b, 1, n, f) != n) abort();
        fclose(f);
        free(b);
    }
}

static void save(const char *name, int w, int h, int exr_float) {
    image img;
    if (image_init(&img, w, h)) abort();
    for (size_t i = 0; i < (size_t)w * h * 3; ++i) img.rgb[i] = (float)(i % 7) / 6.0f;
    char p[512], err[512];
    path_of(p, sizeof p, name);
    CHECK(image_save(&img, p, exr_float, err, sizeof err) == 0, "save %s: %s", name, err);
    image_free(&img);
}

/* A PNG of w x h through libpng, row by row (bit depth, colour type), every row alike. */
static void write_png(const char *name, unsigned w, unsigned h, int depth, int ctype) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (!f || !png || !info || setjmp(png_jmpbuf(png))) abort();
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, depth, ctype, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (ctype == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[2] = {{0, 0, 0}, {255, 128, 0}};
        png_set_PLTE(png, info, pal, 2);
    }
    png_write_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    unsigned char *row = calloc(rowbytes, 1);
    for (size_t i = 0; i < rowbytes && w < 64; ++i) row[i] = (unsigned char)(i * 37);
    for (unsigned y = 0; y < h; ++y) png_write_row(png, row);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    fclose(f);
}

static void write_jpeg(const char *name, int w, int h, int gray) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = gray ? 1 : 3;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_start_compress(&c, TRUE);
    unsigned char row[3 * 64];
    for (int i = 0; i < 3 * 64; ++i) row[i] = (unsigned char)(i * 11);
    while (c.next_scanline < c.image_height) {
        JSAMPROW r[1] = {row};
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
}

/* Radiance RGBE: flat pixels (rle = 0) or new-style run-length scanlines (width 8..32767). */
static void write_hdr(const char *name, int w, int h, int rle) {
    char p[512];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    fprintf(f, "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %d +X %d\n", h, w);
    for (int y = 0; y < h; ++y) {
        if (!rle) {
            for (int x = 0; x < w; ++x) fputc(100 + x, f), fputc(50, f), fputc(20, f), fputc(129, f);
            continue;
        }
        fputc(2, f), fputc(2, f), fputc(w >> 8, f), fputc(w & 255, f);
        for (int c = 0; c < 4; ++c)
            for (int x = 0; x < w; x += 127) {
                int run = w - x < 127 ? w - x : 127;
                fputc(128 + run, f), fputc(c == 3 ? 129 : 60 + 40 * c, f);
            }
    }
    fclose(f);
}

/* PNG chunk CRCs cover type and data: patch IHDR's size and make its CRC right again. */
static void patch_png_size(const char *from, const char *to, uint32_t w, uint32_t h) {
    size_t n;
    unsigned char *b = read_bytes(from, &n);
    unsigned char *ihdr = b + 8; /* length(4) "IHDR" w(4) h(4) ... crc */
    for (int i = 0; i < 4; ++i)
        ihdr[8 + i] = (unsigned char)(w >> (24 - 8 * i)), ihdr[12 + i] = (unsigned char)(h >> (24 - 8 * i));
    uint32_t crc = (uint32_t)crc32(0, ihdr + 4, 17);
    for (int i = 0; i < 4; ++i) ihdr[21 + i] = (unsigned char)(crc >> (24 - 8 * i));
    write_bytes(to, b, n);
    free(b);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--write-seeds")) seed_dir = argv[2];
    snprintf(dir, sizeof dir, "/tmp/test_image_limits.%ld", (long)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd)) return 1;
    unsetenv("CAUSTIC_IMAGE_MEMORY");

    /* every format loads at its size */
    save("rgb8.png", 5, 3, 0);
    expect("rgb8.png", 5, 3, NULL);
    save("half.exr", 4, 3, 0);
    expect("half.exr", 4, 3, NULL);
    save("float.exr", 3, 2, 1);
    expect("float.exr", 3, 2, NULL);
    save("rgb.pfm", 4, 2, 0);
    expect("rgb.pfm", 4, 2, NULL);
    write_bytes("gray.pfm", "Pf\n2 1\n-1\n\0\0\200?\0\0\0?", 19);
    expect("gray.pfm", 2, 1, NULL);
    write_png("gray1.png", 9, 3, 1, PNG_COLOR_TYPE_GRAY);
    expect("gray1.png", 9, 3, NULL);
    write_png("rgb16.png", 3, 2, 16, PNG_COLOR_TYPE_RGB);
    expect("rgb16.png", 3, 2, NULL);
    write_png("rgba8.png", 3, 2, 8, PNG_COLOR_TYPE_RGB_ALPHA);
    expect("rgba8.png", 3, 2, NULL);
    write_png("palette.png", 4, 4, 1, PNG_COLOR_TYPE_PALETTE);
    expect("palette.png", 4, 4, NULL);
    write_jpeg("rgb.jpg", 9, 7, 0);
    expect("rgb.jpg", 9, 7, NULL);
    write_jpeg("gray.jpg", 16, 8, 1);
    expect("gray.jpg", 16, 8, NULL);
    write_hdr("flat.hdr", 3, 2, 0);
    expect("flat.hdr", 3, 2, NULL);
    write_hdr("rle.hdr", 130, 2, 1);
    expect("rle.hdr", 130, 2, NULL);

    /* headers that claim more than the file holds: refused before the pixels are allocated */
    write_bytes("claim.pfm", "PF\n20000 13421\n-1\n", 18); /* 3.2 GB of floats in an 18-byte file */
    expect("claim.pfm", 0, 0, "more than a file of 0 bytes can hold");
    patch_png_size("rgb8.png", "claim.png", 16000, 16000);
    expect("claim.png", 0, 0, "PNG header claims 16000x16000 pixels, more than a file of");
    write_bytes("claim.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 16000 +X 16000\n\2\2\76\200", 56);
    expect("claim.hdr", 0, 0, "Radiance HDR header claims 16000x16000 pixels");
    /* a run-length scanline that ends early: stb_image 2022 looped forever on it (fuzz_image) */
    write_bytes("rle-hang.hdr",
                "\043\077\122\101\104\111\101\116\103\105\012\106\117\122\115\101\124\075\063\062\055\142\151\164\137"
                "\162\154\145\137\162\147\142\145\012\012\055\131\040\062\040\053\130\040\061\063\060\012\002\002\000"
                "\202\043\377\074\203\074\377\144\203\144\377\214\203\214\377\201\203\201\002\002\000\202\013\303\174"
                "\074\005\233\174\233\377\214\203\267\377\201\203\201",
                88);
    expect("rle-hang.hdr", 0, 0, "corrupt or truncated run-length data in Radiance HDR");
    /* the same behind a header line of NUL bytes, which stb takes for the empty line that ends the
     * header (the scanline walk looked for two newlines and let it through: fuzz_image, again) */
    write_bytes("rle-hang-nul.hdr",
                "\043\077\122\101\104\111\101\116\103\105\012\106\117\122\115\101\124\075\063\062\055\142\151\164\137"
                "\162\154\145\137\162\147\142\145\012\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
                "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
                "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
                "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
                "\000\000\000\000\000\000\000\000\000\000\000\000\000\000\012\055\131\040\062\040\053\130\040\061\063"
                "\060\012\002\002\000\202\377\074\203\060\153\012\014",
                163);
    expect("rle-hang-nul.hdr", 0, 0, "corrupt or truncated run-length data in Radiance HDR");
    { /* JPEG: SOF0's height and width fields (after FF C0, length, precision) */
        size_t n;
        unsigned char *b = read_bytes("gray.jpg", &n);
        for (size_t i = 0; i + 9 < n; ++i)
            if (b[i] == 0xFF && b[i + 1] == 0xC0) {
                b[i + 5] = b[i + 7] = 0x3E;
                b[i + 6] = b[i + 8] = 0x80;
                break;
            }
        write_bytes("claim.jpg", b, n);
        free(b);
        expect("claim.jpg", 0, 0, "JPEG header claims 16000x16000 pixels");
    }
    /* a small file that truly holds a large image (deflate packs a blank 1-bit image ~1000:1):
     * the memory cap decides, and a user can raise it */
    write_png("big1bit.png", 4096, 4096, 1, PNG_COLOR_TYPE_GRAY);
    setenv("CAUSTIC_IMAGE_MEMORY", "64M", 1);
    /* the float image only (12 bytes a pixel: the reader decodes row by row into it) */
    expect("big1bit.png", 0, 0, "needs 192 MiB to decode, over the limit of 64 MiB (raise CAUSTIC_IMAGE_MEMORY");
    setenv("CAUSTIC_IMAGE_MEMORY", "256M", 1);
    expect("big1bit.png", 4096, 4096, NULL);
    setenv("CAUSTIC_IMAGE_MEMORY", "lots", 1);
    expect("rgb8.png", 0, 0, "CAUSTIC_IMAGE_MEMORY='lots' is not a size");
    setenv("CAUSTIC_IMAGE_MEMORY", "1M", 1);
    expect("float.exr", 3, 2, NULL);
    unsetenv("CAUSTIC_IMAGE_MEMORY");
    if (seed_dir) { /* the big image is no seed: a fuzzer wants small inputs */
        snprintf(cmd, sizeof cmd, "rm -f %s/big1bit.png", seed_dir);
        if (system(cmd)) return 1;
    }

    /* texel values: counted, NaN/Inf/negative zeroed, huge only counted */
    image img;
    if (image_init(&img, 2, 2)) abort();
    float v[12] = {0.5f, NAN, INFINITY, -1.0f, 2e6f, 3e38f, 0, 0, 0, 1, 1, -INFINITY};
    memcpy(img.rgb, v, sizeof v);
    image_value_report r;
    image_sanitize(&img, &r);
    CHECK(r.nonfinite == 3 && r.negative == 1 && r.huge == 2 && r.largest == 3e38f, "report %zu %zu %zu %g",
          r.nonfinite, r.negative, r.huge, (double)r.largest);
    CHECK(img.rgb[1] == 0 && img.rgb[2] == 0 && img.rgb[3] == 0 && img.rgb[11] == 0 && img.rgb[4] == 2e6f,
          "zeroed values");
    image_free(&img);

    /* inputs that are not regular files: refused at once by both loaders (a FIFO's open would
     * block without a writer, /dev/zero never ends) */
    {
        char fifo[300], err[512] = "";
        int w = 0, h = 0;
        path_of(fifo, sizeof fifo, "fifo.png");
        CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
        CHECK(image_load(&img, fifo, err, sizeof err) == -1 && strstr(err, "not a regular file"), "FIFO: %s", err);
        CHECK(image_load_srgb8(fifo, NULL, NULL, &w, &h, err, sizeof err) == -1 && strstr(err, "not a regular file"),
              "FIFO (8-bit): %s", err);
        CHECK(image_load(&img, "/dev/zero", err, sizeof err) == -1 && strstr(err, "/dev/zero: not a regular file"),
              "/dev/zero: %s", err);
    }

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) return 1;
    return test_result("test_image_limits");
}
