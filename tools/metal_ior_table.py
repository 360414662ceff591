#!/usr/bin/env python3
"""Generates src/scene/metal_ior_table.h: RGB complex indices of refraction (eta, k) of named
conductors from measured spectra, the way Mitsuba 3's RGB variants turn a spectrum into RGB.

Input: the directory of Mitsuba 3's measured index spectra, `<name>.eta.spd` and `<name>.k.spd`
(wavelength in nm, value; from the luxpop.com database of Palik's "Handbook of Optical Constants
of Solids" and Weaver/Lynch data, as Mitsuba ships them in its PyPI wheel under
mitsuba/data/ior/). Get them with
    pip download mitsuba==3.9.1 --no-deps -d /tmp/mi && unzip -q /tmp/mi/mitsuba-*.whl 'mitsuba/data/ior/*' -d /tmp/mi
    python3 tools/metal_ior_table.py /tmp/mi/mitsuba/data/ior > src/scene/metal_ior_table.h

Spectrum -> RGB (Mitsuba 3, spectrum_list_to_srgb with d65 = false, which its conductor plugin
uses for eta and k): 1000 wavelengths evenly over [360, 830] nm, the spectrum linearly
interpolated (skipped outside its measured range), summed against the CIE 1931 2-degree colour
matching functions (tabulated every 5 nm, linearly interpolated), times 470 / 1000 and the CIE Y
normalisation 1 / int(ybar), then XYZ -> linear sRGB. (eta = 1 everywhere thus gives
(1.20, 0.95, 0.91), as in Mitsuba: its RGB conductors are reproduced, not re-derived.)

Also written per metal: the reference reflectance at normal incidence, computed from the spectra
(R(lambda) = ((n-1)^2 + k^2) / ((n+1)^2 + k^2)) and turned into sRGB under D65 (white = 1); the
test of named metals (tests/test_bsdf_conformance.c) compares the RGB Fresnel of (eta, k)
against it.

Also written per metal, for the pbrt-v4 reader (pbrt renders spectrally: its conductor's colour
is the Fresnel reflectance of n(lambda) + i k(lambda) integrated over wavelength, which projecting
eta and k separately onto RGB does not reproduce): a second RGB index (eta_spec, k_spec), fitted
per channel c so that the exact conductor Fresnel F(cos; eta_c, k_c) (the unpolarised closed form
of src/kernel/microfacet.h, fresnel_conductor1) matches the spectral reflectance
    R_c(cos) = int F(cos; n(lambda), k(lambda)) w_c(lambda) dlambda,
where w_c is the linear-sRGB channel c of the CIE 1931 functions times D65 (pbrt-v4 lights an RGB
scene with spectra of the colour space's illuminant, D65 for sRGB), normalised so that a flat
spectrum of 1 gives 1 in every channel (1 nm steps over [360, 830] nm; outside its measured range
a spectrum keeps its end value, as pbrt-v4 extends named spectra). The fit is least squares over
cos in [0, 1] weighted by cos: the weight a mirror sphere's pixels give each incidence angle
(image area is cos d(cos) on a sphere seen from afar) and the cosine of the hemispherical
albedo, so the image mean of a metal is what the fit preserves; a uniform weight would spend the
fit on grazing angles where every metal reflects nearly 1. A channel can see more than 1 (the sRGB
red of gold, 1.02 near the normal: a spectrum outside the sRGB gamut), which no Fresnel
reflectance reaches: there the fit is to min(R_c, 1). Also written: R_c at the cosines
SPEC_COS (r_spec), for the test that the fit reproduces the spectra
(tests/test_bsdf_conformance.c), and the worst relative error of the fit over cos in (0, 1]
(fit_err, the largest over the three channels, against R_c itself; printed per metal on stderr).
The Mitsuba set above is unchanged by this. Takes about a minute (plain Python).

The CIE 1931 tables and D65 below are the CIE standard data (CVRL, www.cvrl.org), at 5 nm.
"""
import glob
import math
import os
import sys

CIE_XYZ_5NM = [
    (360, 0.0001299, 3.917e-06, 0.0006061),
    (365, 0.0002321, 6.965e-06, 0.001086),
    (370, 0.0004149, 1.239e-05, 0.001946),
    (375, 0.0007416, 2.202e-05, 0.003486),
    (380, 0.001368, 3.9e-05, 0.006450001),
    (385, 0.002236, 6.4e-05, 0.01054999),
    (390, 0.004243, 0.00012, 0.02005001),
    (395, 0.00765, 0.000217, 0.03621),
    (400, 0.01431, 0.000396, 0.06785001),
    (405, 0.02319, 0.00064, 0.1102),
    (410, 0.04351, 0.00121, 0.2074),
    (415, 0.07763, 0.00218, 0.3713),
    (420, 0.13438, 0.004, 0.6456),
    (425, 0.21477, 0.0073, 1.03905),
    (430, 0.2839, 0.0116, 1.3856),
    (435, 0.3285, 0.01684, 1.62296),
    (440, 0.34828, 0.023, 1.74706),
    (445, 0.34806, 0.0298, 1.7826),
    (450, 0.3362, 0.038, 1.77211),
    (455, 0.3187, 0.048, 1.7441),
    (460, 0.2908, 0.06, 1.6692),
    (465, 0.2511, 0.0739, 1.5281),
    (470, 0.19536, 0.09098, 1.28764),
    (475, 0.1421, 0.1126, 1.0419),
    (480, 0.09564, 0.13902, 0.8129501),
    (485, 0.05795001, 0.1693, 0.6162),
    (490, 0.03201, 0.20802, 0.46518),
    (495, 0.0147, 0.2586, 0.3533),
    (500, 0.0049, 0.323, 0.272),
    (505, 0.0024, 0.4073, 0.2123),
    (510, 0.0093, 0.503, 0.1582),
    (515, 0.0291, 0.6082, 0.1117),
    (520, 0.06327, 0.71, 0.07824999),
    (525, 0.1096, 0.7932, 0.05725001),
    (530, 0.1655, 0.862, 0.04216),
    (535, 0.2257499, 0.9148501, 0.02984),
    (540, 0.2904, 0.954, 0.0203),
    (545, 0.3597, 0.9803, 0.0134),
    (550, 0.4334499, 0.9949501, 0.008749999),
    (555, 0.5120501, 1, 0.005749999),
    (560, 0.5945, 0.995, 0.0039),
    (565, 0.6784, 0.9786, 0.002749999),
    (570, 0.7621, 0.952, 0.0021),
    (575, 0.8425, 0.9154, 0.0018),
    (580, 0.9163, 0.87, 0.001650001),
    (585, 0.9786, 0.8163, 0.0014),
    (590, 1.0263, 0.757, 0.0011),
    (595, 1.0567, 0.6949, 0.001),
    (600, 1.0622, 0.631, 0.0008),
    (605, 1.0456, 0.5668, 0.0006),
    (610, 1.0026, 0.503, 0.00034),
    (615, 0.9384, 0.4412, 0.00024),
    (620, 0.8544499, 0.381, 0.00019),
    (625, 0.7514, 0.321, 0.0001),
    (630, 0.6424, 0.265, 4.999999e-05),
    (635, 0.5419, 0.217, 3e-05),
    (640, 0.4479, 0.175, 2e-05),
    (645, 0.3608, 0.1382, 1e-05),
    (650, 0.2835, 0.107, 0),
    (655, 0.2187, 0.0816, 0),
    (660, 0.1649, 0.061, 0),
    (665, 0.1212, 0.04458, 0),
    (670, 0.0874, 0.032, 0),
    (675, 0.0636, 0.0232, 0),
    (680, 0.04677, 0.017, 0),
    (685, 0.0329, 0.01192, 0),
    (690, 0.0227, 0.00821, 0),
    (695, 0.01584, 0.005723, 0),
    (700, 0.01135916, 0.004102, 0),
    (705, 0.008110916, 0.002929, 0),
    (710, 0.005790346, 0.002091, 0),
    (715, 0.004109457, 0.001484, 0),
    (720, 0.002899327, 0.001047, 0),
    (725, 0.00204919, 0.00074, 0),
    (730, 0.001439971, 0.00052, 0),
    (735, 0.0009999493, 0.0003611, 0),
    (740, 0.0006900786, 0.0002492, 0),
    (745, 0.0004760213, 0.0001719, 0),
    (750, 0.0003323011, 0.00012, 0),
    (755, 0.0002348261, 8.48e-05, 0),
    (760, 0.0001661505, 6e-05, 0),
    (765, 0.000117413, 4.24e-05, 0),
    (770, 8.307527e-05, 3e-05, 0),
    (775, 5.870652e-05, 2.12e-05, 0),
    (780, 4.150994e-05, 1.499e-05, 0),
    (785, 2.935326e-05, 1.06e-05, 0),
    (790, 2.067383e-05, 7.4657e-06, 0),
    (795, 1.455977e-05, 5.2578e-06, 0),
    (800, 1.025398e-05, 3.7029e-06, 0),
    (805, 7.221456e-06, 2.6078e-06, 0),
    (810, 5.085868e-06, 1.8366e-06, 0),
    (815, 3.581652e-06, 1.2934e-06, 0),
    (820, 2.522525e-06, 9.1093e-07, 0),
    (825, 1.776509e-06, 6.4153e-07, 0),
    (830, 1.251141e-06, 4.5181e-07, 0),
]

D65_5NM = [
    0.471106, 0.498636, 0.526166, 0.515491, 0.504816, 0.528416, 0.552016, 0.693973, 0.83593, 0.880027,
    0.924125, 0.933953, 0.94378, 0.90969, 0.875602, 0.967435, 1.05927, 1.12059, 1.18193, 1.18599,
    1.19005, 1.17514, 1.16024, 1.16561, 1.17097, 1.13505, 1.09913, 1.10187, 1.10461, 1.09678,
    1.08894, 1.07372, 1.05851, 1.07315, 1.0878, 1.07121, 1.05462, 1.05281, 1.051, 1.03056,
    1.01013, 0.991613, 0.973098, 0.970339, 0.967581, 0.931709, 0.895838, 0.902507, 0.909177, 0.907121,
    0.905065, 0.895467, 0.885869, 0.863594, 0.841321, 0.843395, 0.845469, 0.826921, 0.808373, 0.809321,
    0.81027, 0.82069, 0.831111, 0.81094, 0.79077, 0.747522, 0.704274, 0.713809, 0.723343, 0.737181,
    0.75102, 0.686649, 0.622279, 0.664106, 0.705934, 0.732204, 0.758474, 0.70042, 0.642367, 0.555625,
    0.468883, 0.571851, 0.67482, 0.657533, 0.640247, 0.6449, 0.649552, 0.625046, 0.60054, 0.562696,
    0.524852, 0.552538, 0.580223, 0.594728, 0.609233,
]

XYZ_TO_SRGB = [(3.240479, -1.537150, -0.498535), (-0.969256, 1.875991, 0.041556), (0.055648, -0.204043, 1.057311)]
CIE_MIN, CIE_MAX = 360.0, 830.0


def table_at(x, rows, col):
    """Linear interpolation in a 5 nm table; 0 outside."""
    if x < CIE_MIN or x > CIE_MAX:
        return 0.0
    f = (x - CIE_MIN) / 5.0
    i = min(int(f), len(rows) - 2)
    t = f - i
    a, b = rows[i], rows[i + 1]
    return (a[col] if col is not None else a) * (1 - t) + (b[col] if col is not None else b) * t


def cie(x):
    return (table_at(x, CIE_XYZ_5NM, 1), table_at(x, CIE_XYZ_5NM, 2), table_at(x, CIE_XYZ_5NM, 3))


def y_integral():
    return sum(r[2] for r in CIE_XYZ_5NM[:-1]) * 5.0 + 0.0  # trapezoid-free sum, as Mitsuba's normalisation


def xyz_to_srgb(c):
    return tuple(sum(m * v for m, v in zip(row, c)) for row in XYZ_TO_SRGB)


def read_spd(path):
    wl, val = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            a, b = line.split()[:2]
            wl.append(float(a))
            val.append(float(b))
    return wl, val


def interp(wl, val, x):
    lo, hi = 0, len(wl) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wl[mid] <= x:
            lo = mid
        else:
            hi = mid
    t = (x - wl[lo]) / (wl[hi] - wl[lo])
    return val[lo] * (1 - t) + val[hi] * t


def mitsuba_rgb(wl, val):
    """spectrum_list_to_srgb(wl, val, bounded=False, d65=False) of Mitsuba 3."""
    steps = 1000
    xyz = [0.0, 0.0, 0.0]
    for i in range(steps):
        x = CIE_MIN + (i / (steps - 1)) * (CIE_MAX - CIE_MIN)
        if x < wl[0] or x > wl[-1]:
            continue
        y = interp(wl, val, x)
        c = cie(x)
        for j in range(3):
            xyz[j] += c[j] * y
    norm = (CIE_MAX - CIE_MIN) / steps / Y_INT
    return xyz_to_srgb([v * norm for v in xyz])


def reflectance_rgb(func):
    """A reflectance spectrum seen under D65 as linear sRGB (D65 white -> 1)."""
    xyz = [0.0, 0.0, 0.0]
    wsum = 0.0
    x = CIE_MIN
    while x <= CIE_MAX + 1e-9:
        c = cie(x)
        d = table_at(x, D65_5NM, None)
        r = func(x)
        for j in range(3):
            xyz[j] += c[j] * d * r
        wsum += c[1] * d
        x += 1.0
    return xyz_to_srgb([v / wsum for v in xyz])


def fresnel_conductor(c, eta, k):
    """Unpolarised Fresnel reflectance of eta + i k at incidence cosine c: the closed form of
    caustic's kernel (src/kernel/microfacet.h, fresnel_conductor1), in double precision."""
    c2 = min(max(c * c, 0.0), 1.0)
    s2 = 1.0 - c2
    e2, k2 = eta * eta, k * k
    t0 = e2 - k2 - s2
    a2b2 = math.sqrt(max(t0 * t0 + 4.0 * e2 * k2, 0.0))
    a = math.sqrt(max(0.5 * (a2b2 + t0), 0.0))
    ci = math.sqrt(c2)
    t1, t2 = a2b2 + c2, 2.0 * a * ci
    rs = (t1 - t2) / max(t1 + t2, 1e-20)
    t3, t4 = c2 * a2b2 + s2 * s2, t2 * s2
    rp = rs * (t3 - t4) / max(t3 + t4, 1e-20)
    return min(max(0.5 * (rs + rp), 0.0), 1.0)


def channel_weights():
    """w_c(lambda) at 1 nm over [360, 830]: linear sRGB of the CIE functions times D65, each
    channel normalised to sum to 1 (a flat spectrum of 1 is white)."""
    lams, ws = [], [[], [], []]
    x = CIE_MIN
    while x <= CIE_MAX + 1e-9:
        d = table_at(x, D65_5NM, None)
        rgb = xyz_to_srgb(cie(x))
        lams.append(x)
        for c in range(3):
            ws[c].append(rgb[c] * d)
        x += 1.0
    for c in range(3):
        t = sum(ws[c])
        ws[c] = [v / t for v in ws[c]]
    return lams, ws


FIT_COS = [(i + 0.5) / 64 for i in range(64)]  # midpoints over (0, 1); weight cos (see above)
SPEC_COS = [1.0, 0.8, 0.6, 0.4, 0.2, 0.1]      # where r_spec is written for the test


def spectral_reflectance(ew, ev, kw, kv, lams, ws, cosines):
    """R_c(cos) for each cos: the spectral Fresnel reflectance seen through channel c."""
    lo, hi = max(ew[0], kw[0]), min(ew[-1], kw[-1])
    nk = []
    for x in lams:
        x = min(max(x, lo), hi)
        nk.append((interp(ew, ev, x), interp(kw, kv, x)))
    out = []
    for cs in cosines:
        f = [fresnel_conductor(cs, n, k) for n, k in nk]
        out.append([sum(w * v for w, v in zip(ws[c], f)) for c in range(3)])
    return out


def fit_channel(target, eta0, k0):
    """(eta, k) >= 0 minimising sum cos (F(cos; eta, k) - R(cos))^2 over FIT_COS: Nelder-Mead on
    (log eta, log k) from the Mitsuba value (or a neutral start where that is not positive),
    restarted until it stops improving."""
    def cost(p):
        eta, k = math.exp(p[0]), math.exp(p[1])
        return sum(c * (fresnel_conductor(c, eta, k) - t) ** 2 for c, t in zip(FIT_COS, target))

    best = None
    for start in ((eta0, k0), (1.5, 0.5), (0.5, 3.0), (3.0, 3.0)):
        if start[0] <= 0 or start[1] <= 0:
            continue
        p = nelder_mead(cost, [math.log(start[0]), math.log(start[1])])
        for _ in range(4):
            q = nelder_mead(cost, p)
            if cost(q) >= cost(p) * (1 - 1e-12):
                break
            p = q
        if best is None or cost(p) < cost(best):
            best = p
    if math.exp(best[0]) < 1e-4:
        # a channel that reflects 1 at every angle: the fit runs to eta -> 0, where F = 1 for any
        # k; written as the table's mirror, 0 + 1 i
        return 0.0, 1.0
    return math.exp(best[0]), math.exp(best[1])


def nelder_mead(f, x0, step=0.3, iters=400):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0.0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) <= 1e-16 + 1e-13 * abs(vals[0]):
            break
        cen = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        refl = [cen[j] + (cen[j] - pts[-1][j]) for j in range(n)]
        fr = f(refl)
        if fr < vals[0]:
            exp_ = [cen[j] + 2.0 * (cen[j] - pts[-1][j]) for j in range(n)]
            fe = f(exp_)
            pts[-1], vals[-1] = (exp_, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = [cen[j] + 0.5 * (pts[-1][j] - cen[j]) for j in range(n)]
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i]


def spectral_fit(ew, ev, kw, kv, eta_mi, k_mi, lams, ws):
    """(eta_spec, k_spec, r_spec, fit_err) of one metal (see the module's docstring)."""
    target = spectral_reflectance(ew, ev, kw, kv, lams, ws, FIT_COS)
    eta, k, err = [0.0] * 3, [0.0] * 3, 0.0
    for c in range(3):
        # a Fresnel reflectance is at most 1, and a channel can see more: the sRGB red of gold is
        # 1.02 near the normal (its spectrum lies outside the sRGB gamut). Fitted to min(R, 1), the
        # channel keeps the fall-off towards grazing that R has below 1 (fitting R itself drives
        # it to the constant mirror); fit_err is still against R.
        eta[c], k[c] = fit_channel([min(t[c], 1.0) for t in target], eta_mi[c], k_mi[c])
        for cs, t in zip(FIT_COS + [1.0], target + spectral_reflectance(ew, ev, kw, kv, lams, ws, [1.0])):
            err = max(err, abs(fresnel_conductor(cs, eta[c], k[c]) - t[c]) / t[c])
    return eta, k, spectral_reflectance(ew, ev, kw, kv, lams, ws, SPEC_COS), err


Y_INT = 106.7502593994140625  # Mitsuba's MI_CIE_Y_NORMALIZATION = 1 / this (int ybar, 360-830 nm)


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: metal_ior_table.py DIR_OF_SPD_FILES > src/scene/metal_ior_table.h')
    d = sys.argv[1]
    names = sorted({os.path.basename(p)[:-len('.eta.spd')] for p in glob.glob(os.path.join(d, '*.eta.spd'))})
    if not names:
        sys.exit('metal_ior_table.py: no *.eta.spd files in %s' % d)
    out = []
    lams, ws = channel_weights()
    for n in names:
        kpath = os.path.join(d, n + '.k.spd')
        if not os.path.exists(kpath):
            sys.exit('metal_ior_table.py: %s has no %s' % (n, kpath))
        ew, ev = read_spd(os.path.join(d, n + '.eta.spd'))
        kw, kv = read_spd(kpath)
        eta, k = mitsuba_rgb(ew, ev), mitsuba_rgb(kw, kv)
        lo, hi = max(ew[0], kw[0]), min(ew[-1], kw[-1])

        def r0(x):
            x = min(max(x, lo), hi)
            nn, kk = interp(ew, ev, x), interp(kw, kv, x)
            return ((nn - 1) ** 2 + kk * kk) / ((nn + 1) ** 2 + kk * kk)

        out.append((n, eta, k, reflectance_rgb(r0)) + tuple(spectral_fit(ew, ev, kw, kv, eta, k, lams, ws)))
        sys.stderr.write('%-12s fit: worst relative error %.2f %%\n' % (n, 100.0 * out[-1][-1]))
    w = sys.stdout.write
    w('/* Generated by tools/metal_ior_table.py from Mitsuba 3\'s measured index spectra (data/ior/NAME.{eta,k}.spd:\n')
    w(' * luxpop.com, after Palik, "Handbook of Optical Constants of Solids"): do not edit. Per named\n')
    w(' * conductor, its RGB complex index eta + i k (Mitsuba 3\'s RGB conversion) and the reference\n')
    w(' * reflectance at normal incidence computed from the spectra (sRGB under D65). "none" is Mitsuba\'s\n')
    w(' * perfect mirror (eta 0, k 1). Read by material_metal_lookup (src/scene/material.c).\n')
    w(' * eta_spec, k_spec: the index fitted per channel to the spectrally integrated Fresnel reflectance\n')
    w(' * (pbrt-v4\'s meaning of a metal, read by material_metal_lookup_spectral for the pbrt reader);\n')
    w(' * r_spec: that reflectance at the incidence cosines METAL_SPEC_COS; fit_err: the fit\'s worst\n')
    w(' * relative error over the channels and cos in (0, 1]. */\n')
    w('#ifndef CAUSTIC_SCENE_METAL_IOR_TABLE_H\n#define CAUSTIC_SCENE_METAL_IOR_TABLE_H\n\n')
    w('#define METAL_SPEC_NCOS %d\n' % len(SPEC_COS))
    w('#define METAL_SPEC_COS {%s}\n\n' % ', '.join('%.1ff' % c for c in SPEC_COS))
    w('typedef struct metal_ior_row {\n    const char *name;\n    float eta[3], k[3];\n    float f0_ref[3];\n')
    w('    float eta_spec[3], k_spec[3];\n    float r_spec[METAL_SPEC_NCOS][3];\n    float fit_err;\n} metal_ior_row;\n\n')
    w('static const metal_ior_row metal_ior_table[] = {\n')
    f = lambda v: '{%.6ff, %.6ff, %.6ff}' % tuple(v)
    z, o = '{0.0f, 0.0f, 0.0f}', '{1.0f, 1.0f, 1.0f}'
    w('    {"none", %s, %s, %s, %s, %s, {%s}, 0.0f},\n' % (z, o, o, z, o, ', '.join([o] * len(SPEC_COS))))
    for n, eta, k, r, es, ks, rs, err in out:
        w('    {"%s", %s, %s, %s, %s, %s, {%s}, %.6ff},\n' % (n, f(eta), f(k), f(r), f(es), f(ks),
                                                         ', '.join(f(x) for x in rs), err))
    w('};\n\n#endif\n')


if __name__ == '__main__':
    main()
