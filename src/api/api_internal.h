/* Library-internal entry points (tests, tools): wrap a scene built with src/scene's builder. */
#ifndef CAUSTIC_API_INTERNAL_H
#define CAUSTIC_API_INTERNAL_H

#include "caustic.h"
#include "scene/scene.h"

/* Takes ownership of s (freed with the caustic_scene, or on failure). */
int caustic_scene_wrap(caustic_scene **out, scene *s, char *err, size_t errlen);
/* The scene inside (tests adjust materials before rendering). */
scene *caustic_scene_internal(caustic_scene *cs);

#endif
