/* Everything a backend needs from the shared kernel. */
#ifndef CAUSTIC_KERNEL_H
#define CAUSTIC_KERNEL_H
#include "compat.h"
#include "vec.h"
#include "rng.h"
#include "sampling.h"
#include "sampler.h"
#include "types.h"
#include "intersect.h"
#include "bvh_traverse.h"
#include "texture.h"
#include "environment.h"
#include "bsdf.h"
#include "lights.h"
#include "camera.h"
#include "path_state.h"
#include "integrator_pt.h"
#include "adaptive.h"
#include "adaptive_depth.h"
#include "pass.h"
#include "film.h"
#endif
