/* Library-internal entry points (tests, tools): wrap a scene built with src/scene's builder; the
 * conversions between public and internal types that the API's files share. */
#ifndef CAUSTIC_API_INTERNAL_H
#define CAUSTIC_API_INTERNAL_H

#include "caustic.h"
#include "image/tonemap.h"
#include "scene/scene.h"

/* Takes ownership of s (freed with the caustic_scene, or on failure). */
int api_scene_wrap(caustic_scene **out, scene *s, char *err, size_t errlen);
/* The same without preparing it (a scene built in code: its first renderer prepares it). */
int api_scene_wrap_unprepared(caustic_scene **out, scene *s, char *err, size_t errlen);
/* The scene inside (tests adjust materials before rendering). */
scene *api_scene_internal(caustic_scene *cs);

void api_camera_public(const camera_desc *d, caustic_camera *c);
/* Sets the members caustic_camera has (the resolution stays). */
void api_camera_internal(const caustic_camera *c, camera_desc *d);
/* look NULL: clamp at 0 EV. */
void api_look_internal(const caustic_look *look, tonemap_settings *ts);

#endif
