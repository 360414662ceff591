/* Spectra to RGB for the pbrt-v4 reader. caustic renders in linear sRGB, so every spectrum a pbrt
 * file gives becomes three numbers here:
 *   - emission spectra (blackbody, .spd files, inline pairs): CIE 1931 XYZ through the analytic
 *     multi-lobe fit of the colour matching functions by Wyman, Sloan and Shirley ("Simple
 *     Analytic Approximations to the CIE XYZ Color Matching Functions", JCGT 2(2), 2013; within
 *     about 1 % of the tabulated functions), then XYZ -> linear sRGB (IEC 61966-2-1 matrix);
 *   - reflectance-like spectra (inline pairs for reflectances, eta, k): the mean over three bands
 *     (600-700, 500-600, 400-500 nm), a documented approximation;
 *   - pbrt-v4's named spectra: glass IORs at the d line (Schott catalogue values), metals as
 *     normal-incidence reflectance (linear sRGB, the table of Real-Time Rendering 4th ed. (table
 *     9.2, "F0" of metals), which derives them from the same measured n, k), standard illuminants
 *     as blackbodies of their correlated colour temperature (D65: sRGB white exactly). */
#include "import/pbrt_internal.h"

#include <math.h>
#include <string.h>

static double lobe(double l, double mu, double s1, double s2) {
    double t = (l - mu) / (l < mu ? s1 : s2);
    return exp(-0.5 * t * t);
}
static void cie_xyz(double l, double *x, double *y, double *z) {
    *x = 1.056 * lobe(l, 599.8, 37.9, 31.0) + 0.362 * lobe(l, 442.0, 16.0, 26.7) - 0.065 * lobe(l, 501.1, 20.4, 26.2);
    *y = 0.821 * lobe(l, 568.8, 46.9, 40.5) + 0.286 * lobe(l, 530.9, 16.3, 31.1);
    *z = 1.217 * lobe(l, 437.0, 11.8, 36.0) + 0.681 * lobe(l, 459.0, 26.0, 13.8);
}
static vec3 xyz_to_srgb(double X, double Y, double Z) {
    return v3((float)(3.2404542 * X - 1.5371385 * Y - 0.4985314 * Z),
              (float)(-0.9692660 * X + 1.8760108 * Y + 0.0415560 * Z),
              (float)(0.0556434 * X - 0.2040259 * Y + 1.0572252 * Z));
}

/* piecewise-linear value of the pairs at l (constant beyond the ends) */
static double spd_at(const double *lambda, const double *value, size_t n, double l) {
    if (n == 0) return 0.0;
    if (l <= lambda[0]) return value[0];
    for (size_t i = 1; i < n; ++i)
        if (l <= lambda[i]) {
            double d = lambda[i] - lambda[i - 1];
            double t = d > 0 ? (l - lambda[i - 1]) / d : 1.0;
            return value[i - 1] + t * (value[i] - value[i - 1]);
        }
    return value[n - 1];
}

vec3 pbrt_spd_to_rgb(const double *lambda, const double *value, size_t n) {
    double X = 0, Y = 0, Z = 0;
    for (double l = 360.0; l <= 830.0; l += 1.0) {
        double x, y, z, v = spd_at(lambda, value, n, l);
        cie_xyz(l, &x, &y, &z);
        X += v * x;
        Y += v * y;
        Z += v * z;
    }
    return xyz_to_srgb(X, Y, Z);
}

vec3 pbrt_reflectance_to_rgb(const double *lambda, const double *value, size_t n) {
    double band[3] = {0, 0, 0};
    for (int b = 0; b < 3; ++b) {
        double lo = 600.0 - 100.0 * b;
        for (int i = 0; i < 100; ++i) band[b] += spd_at(lambda, value, n, lo + i + 0.5);
        band[b] /= 100.0;
    }
    return v3((float)band[0], (float)band[1], (float)band[2]);
}

double pbrt_luminance(vec3 c) { return 0.2126729 * c.x + 0.7151522 * c.y + 0.0721750 * c.z; }

vec3 pbrt_blackbody_rgb(double T) {
    if (!(T > 0)) return v3s(0.0f);
    double X = 0, Y = 0, Z = 0;
    const double c = 299792458.0, h = 6.62606957e-34, kb = 1.3806488e-23;
    for (double l = 360.0; l <= 830.0; l += 1.0) {
        double m = l * 1e-9;
        double le = (2 * h * c * c) / (pow(m, 5) * (exp((h * c) / (m * kb * T)) - 1));
        double x, y, z;
        cie_xyz(l, &x, &y, &z);
        X += le * x;
        Y += le * y;
        Z += le * z;
    }
    if (!(Y > 0)) return v3s(0.0f);
    return xyz_to_srgb(X / Y, 1.0, Z / Y);
}

typedef struct named_ior {
    const char *name;
    double ior;
    double abbe; /* V_d of the Schott glass of that name (its data sheet); 0: not known here */
} named_ior;
/* pbrt-v4's glass-* spectra at the helium d line (587.6 nm) */
static const named_ior glasses[] = {{"glass-BK7", 1.5168, 64.17},   {"glass-BAF10", 1.6700, 47.11},
                                    {"glass-FK51A", 1.4866, 84.47}, {"glass-LASF9", 1.8503, 32.17},
                                    {"glass-F5", 1.6034, 38.03},    {"glass-F10", 1.6200, 0.0},
                                    {"glass-F11", 1.6209, 0.0},     {NULL, 0, 0}};

int pbrt_glass_abbe(const char *name, double *abbe) {
    for (const named_ior *g = glasses; g->name; ++g)
        if (!strcmp(name, g->name) && g->abbe > 0.0) {
            *abbe = g->abbe;
            return 0;
        }
    return -1;
}

typedef struct named_temp {
    const char *name;
    double kelvin;
} named_temp;
/* standard illuminants as blackbodies of their correlated colour temperature (D65 is exact white) */
static const named_temp illuminants[] = {
    {"stdillum-A", 2856},   {"stdillum-D50", 5003}, {"illum-acesD60", 6000}, {"stdillum-F1", 6430},
    {"stdillum-F2", 4230},  {"stdillum-F3", 3450},  {"stdillum-F4", 2940},   {"stdillum-F5", 6350},
    {"stdillum-F6", 4150},  {"stdillum-F7", 6500},  {"stdillum-F8", 5000},   {"stdillum-F9", 4150},
    {"stdillum-F10", 5000}, {"stdillum-F11", 4000}, {"stdillum-F12", 3000},  {NULL, 0}};

int pbrt_named_spectrum(const char *name, vec3 *rgb) {
    if (!strcmp(name, "stdillum-D65")) {
        *rgb = v3s(1.0f);
        return 0;
    }
    for (const named_temp *t = illuminants; t->name; ++t)
        if (!strcmp(name, t->name)) {
            *rgb = pbrt_blackbody_rgb(t->kelvin);
            return 0;
        }
    for (const named_ior *g = glasses; g->name; ++g)
        if (!strcmp(name, g->name)) {
            *rgb = v3s((float)g->ior);
            return 0;
        }
    return -1;
}

typedef struct metal_f0 {
    const char *name;
    float r, g, b;
} metal_f0;
/* normal-incidence reflectance, linear sRGB (RTR 4th ed. table 9.2; MgO and TiO2, which are
 * dielectrics in pbrt's list, from their IORs 1.74 and 2.6 (TiO2 k small)) */
static const metal_f0 metals[] = {{"Ag", 0.972f, 0.960f, 0.915f},   {"Al", 0.913f, 0.922f, 0.924f},
                                  {"Au", 1.000f, 0.766f, 0.336f},   {"Cu", 0.955f, 0.638f, 0.538f},
                                  {"CuZn", 0.910f, 0.778f, 0.423f}, {"MgO", 0.073f, 0.073f, 0.073f},
                                  {"TiO2", 0.197f, 0.197f, 0.197f}, {NULL, 0, 0, 0}};

int pbrt_metal_f0(const char *metal, vec3 *f0) {
    for (const metal_f0 *m = metals; m->name; ++m)
        if (!strcmp(metal, m->name)) {
            *f0 = v3(m->r, m->g, m->b);
            return 0;
        }
    return -1;
}
