/* Radiance RGBE (.hdr) through Debian's stb_image (libstb): linear float RGB. */
#include <stb/stb_image.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

int image__hdr_read(FILE *f, image *img, const char *path, char *err, size_t errlen) {
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_file(f, &w, &h, &comp)) {
        image__set_err(err, errlen, "%s: not a readable Radiance HDR file (%s)", path, stbi_failure_reason());
        return -1;
    }
    if (!image__size_ok(w, h)) {
        image__set_err(err, errlen, "%s: unsupported size %dx%d", path, w, h);
        return -1;
    }
    float *data = stbi_loadf_from_file(f, &w, &h, &comp, 3);
    if (!data) {
        image__set_err(err, errlen, "%s: cannot decode Radiance HDR: %s", path, stbi_failure_reason());
        return -1;
    }
    if (image_init(img, w, h)) {
        stbi_image_free(data);
        image__set_err(err, errlen, "%s: out of memory for %dx%d", path, w, h);
        return -1;
    }
    memcpy(img->rgb, data, (size_t)w * (size_t)h * 3u * sizeof(float));
    stbi_image_free(data);
    return 0;
}
