/* Image comparison metrics (see also docs/image-metrics.md).
 *
 * The seed thesis (section 4.3) compares renders with "absolute error count (AE), peak signal
 * to noise ratio (PSNR), root mean squared error (RMSE) and structure similarity index metric
 * (SSIM)" without formulas; its tables print RMSE as "2,762 (0,011)", i.e. ImageMagick
 * `compare` style on 8-bit PNGs (value in [0,255] units, normalised value in brackets), and
 * PSNR consistent with 20*log10(255/RMSE). We therefore define, for two W x H images A, B:
 *
 *   Both images are first converted to what a viewer of the PNG sees: every linear channel
 *   value v becomes the 8-bit code q(v) = round(255 * srgb_oetf(clamp(v, 0, 1))), NaN -> 0
 *   (image_quantize8, identical to the PNG writer). All metrics use these integer codes.
 *
 *   AE    = #{ pixels p : qA(p,c) != qB(p,c) for some channel c in {R,G,B} }
 *           (ImageMagick `compare -metric AE` with fuzz 0). A count, not normalised.
 *   RMSE  = sqrt( (1 / (3 W H)) * sum_{p,c} (qA(p,c) - qB(p,c))^2 )      in [0,255].
 *           The thesis' bracketed "(0-1)" value is RMSE / 255.
 *   PSNR  = 20 * log10(255 / RMSE) dB;  +INFINITY when RMSE == 0 (identical codes).
 *   SSIM  = Wang, Bovik, Sheikh, Simoncelli 2004, per channel c:
 *             SSIM(x,y) = ((2 mu_x mu_y + C1)(2 sigma_xy + C2)) /
 *                         ((mu_x^2 + mu_y^2 + C1)(sigma_x^2 + sigma_y^2 + C2))
 *           with C1 = (K1 L)^2, C2 = (K2 L)^2, K1 = 0.01, K2 = 0.03, L = 255; mu, sigma^2 and
 *           sigma_xy are weighted by a normalised 11x11 Gaussian window (sigma 1.5), taken
 *           at every position where the window lies fully inside the image ("valid" windows,
 *           like the reference MATLAB code, without its automatic downsampling). The
 *           variances are the biased (weighted) ones: E_w[x^2] - mu_x^2. The channel score
 *           is the mean over all windows; the reported SSIM is the mean over R, G and B.
 *           If a side is shorter than 11 pixels, the window is cut to that length (Gaussian
 *           weights about the window's centre, renormalised), i.e. one window on that axis.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

#define SSIM_WINDOW 11
#define SSIM_SIGMA  1.5
#define SSIM_K1     0.01
#define SSIM_K2     0.03
#define SSIM_L      255.0

static void gauss_weights(int n, double *w) {
    double c = 0.5 * (n - 1), sum = 0.0;
    for (int i = 0; i < n; i++) {
        double d = i - c;
        w[i] = exp(-d * d / (2.0 * SSIM_SIGMA * SSIM_SIGMA));
        sum += w[i];
    }
    for (int i = 0; i < n; i++) w[i] /= sum;
}

/* Mean SSIM of channel `ch` of two interleaved 8-bit RGB images. The separable Gaussian is
 * applied horizontally into a ring of `wy` rows, then vertically. Returns NaN on OOM. */
static double ssim_channel(const unsigned char *qa, const unsigned char *qb, int W, int H, int ch) {
    int wx = W < SSIM_WINDOW ? W : SSIM_WINDOW;
    int wy = H < SSIM_WINDOW ? H : SSIM_WINDOW;
    double gx[SSIM_WINDOW], gy[SSIM_WINDOW];
    gauss_weights(wx, gx);
    gauss_weights(wy, gy);
    size_t ox = (size_t)(W - wx + 1);
    size_t plane = (size_t)wy * ox;
    double *ring = malloc(5 * plane * sizeof(double)); /* mu_a, mu_b, E[a^2], E[b^2], E[ab] */
    if (!ring) return NAN;
    const double C1 = (SSIM_K1 * SSIM_L) * (SSIM_K1 * SSIM_L);
    const double C2 = (SSIM_K2 * SSIM_L) * (SSIM_K2 * SSIM_L);
    double total = 0.0;
    size_t count = 0;

    for (int y = 0; y < H; y++) {
        size_t slot = (size_t)(y % wy) * ox;
        const unsigned char *ra = qa + (size_t)y * (size_t)W * 3u + ch;
        const unsigned char *rb = qb + (size_t)y * (size_t)W * 3u + ch;
        for (size_t x = 0; x < ox; x++) {
            double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
            for (int i = 0; i < wx; i++) {
                double a = ra[3 * (x + (size_t)i)], b = rb[3 * (x + (size_t)i)], g = gx[i];
                sa += g * a;
                sb += g * b;
                saa += g * a * a;
                sbb += g * b * b;
                sab += g * a * b;
            }
            ring[0 * plane + slot + x] = sa;
            ring[1 * plane + slot + x] = sb;
            ring[2 * plane + slot + x] = saa;
            ring[3 * plane + slot + x] = sbb;
            ring[4 * plane + slot + x] = sab;
        }
        if (y < wy - 1) continue;
        int top = y - wy + 1; /* first image row of the window */
        for (size_t x = 0; x < ox; x++) {
            double m[5] = {0, 0, 0, 0, 0};
            for (int j = 0; j < wy; j++) {
                size_t s = (size_t)((top + j) % wy) * ox + x;
                for (int q = 0; q < 5; q++) m[q] += gy[j] * ring[(size_t)q * plane + s];
            }
            double mua = m[0], mub = m[1];
            double va = m[2] - mua * mua, vb = m[3] - mub * mub, cov = m[4] - mua * mub;
            double num = (2.0 * mua * mub + C1) * (2.0 * cov + C2);
            double den = (mua * mua + mub * mub + C1) * (va + vb + C2);
            total += num / den;
            count++;
        }
    }
    free(ring);
    return total / (double)count;
}

int image_compare(const image *a, const image *b, image_metrics *m, char *err, size_t errlen) {
    if (!a || !b || !m || !a->rgb || !b->rgb || a->width <= 0 || a->height <= 0 || b->width <= 0 || b->height <= 0) {
        image__set_err(err, errlen, "image_compare: empty image or NULL argument");
        return -1;
    }
    if (a->width != b->width || a->height != b->height) {
        image__set_err(err, errlen, "image_compare: image sizes differ: %dx%d vs %dx%d", a->width, a->height, b->width,
                       b->height);
        return -1;
    }
    int W = a->width, H = a->height;
    size_t npix = (size_t)W * (size_t)H, n = npix * 3u;
    unsigned char *qa = malloc(n), *qb = malloc(n);
    if (!qa || !qb) {
        free(qa);
        free(qb);
        image__set_err(err, errlen, "image_compare: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        qa[i] = image_quantize8(a->rgb[i]);
        qb[i] = image_quantize8(b->rgb[i]);
    }

    uint64_t ae = 0, sq = 0;
    for (size_t p = 0; p < npix; p++) {
        int diff = 0;
        for (int c = 0; c < 3; c++) {
            int d = (int)qa[3 * p + c] - (int)qb[3 * p + c];
            sq += (uint64_t)(d * d);
            diff |= d != 0;
        }
        ae += (uint64_t)diff;
    }
    double rmse = sqrt((double)sq / (double)n);

    double ssim = 0.0;
    for (int c = 0; c < 3; c++) ssim += ssim_channel(qa, qb, W, H, c);
    ssim /= 3.0;
    free(qa);
    free(qb);
    if (isnan(ssim)) {
        image__set_err(err, errlen, "image_compare: out of memory (SSIM)");
        return -1;
    }

    m->ae = (double)ae;
    m->rmse = rmse;
    m->psnr = sq == 0 ? INFINITY : 20.0 * log10(SSIM_L / rmse);
    m->ssim = ssim;
    return 0;
}
