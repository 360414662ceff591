/* The JSON reader's dialect tables: the course projects' spellings of caustic's keys, section by
 * section, and what each material TYPE spelling means. The spellings come from the survey of
 * course projects (docs/scene-format.md, "dialects we read"). Adding a spelling is one string;
 * adding a material kind to MATERIAL_KINDS (kernel/types.h) needs its row in json_material_rows,
 * which the static assert below and test_scene_load's table check ask for by name. */
#include "import/json_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- section keys ------------------------------------------------------------------------------ */
const keyalias json_root_keys[] = {
    {"Materials", "MATERIAL|MATS|MATERIALLIST", NULL, 0, 0},
    {"Camera", "CAM", NULL, 0, 0},
    {"Objects", "OBJECT|PRIMITIVES|GEOMETRY|SHAPES", NULL, 0, 0},
    {"Environment",
     "ENVIRONMENTMAP|ENVMAP|ENVIRONMENTTEXTURE|ENVIRONMENTLIGHT|ENVLIGHT|BACKGROUND|SKYBOX|SKY|"
     "HDRI|ENVIRONMENTHDR",
     NULL, 0, 0},
    {"Lights", "LIGHT|PUNCTUALLIGHTS", NULL, 0, 0},
    {"Meshes", "MESHTABLE|MESHLIST", NULL, 0, 0},
    {"Imports", "IMPORT|MODELS|GLTFS|SCENES", NULL, 0, 0},
    {"Media", "MEDIUMS|PARTICIPATINGMEDIA", NULL, 0, 0}, /* name -> medium (json_media.c) */
    {"Volumes", "VOLUME|VDB", "volume sections of other dialects are not read (caustic's media: the Media section)", 0,
     0},
    {NULL, NULL, NULL, 0, 0}};

const keyalias json_material_keys[] = {
    {"TYPE", "MATERIALTYPE|MATTYPE|KIND|BSDF", NULL, 0, 0},
    {"RGB", "COLOR|COLOUR|ALBEDO|BASECOLOR|BASECOLOUR|DIFFUSECOLOR|DIFFUSECOLOUR|KD|REFLECTANCE|DIFFUSE", NULL, 0,
     WANT_NONSTRING},
    {"TEXTURE",
     "DIFFUSE|BASECOLOR|BASECOLOUR|ALBEDO|COLOR|COLOUR|DIFFUSEMAP|ALBEDOMAP|BASECOLORMAP|BASECOLORTEXTURE|COLORMAP|"
     "DIFFUSETEXTURE|TEX|MAPKD|"
     "ALBEDOTEXTURE|IMAGE",
     NULL, 0, 0},
    {"EMITTANCE", "EMISSION|EMISSIVE|EMISSIVESTRENGTH|EMISSIONSTRENGTH|INTENSITY|STRENGTH|POWER|LUMINANCE", NULL, 0, 0},
    /* an emitted radiance of its own (a reflecting surface that also emits: pbrt's and Mitsuba's
     * area lights); times EMITTANCE when that is given */
    {"EMISSION_RGB", "EMISSIONRGB|EMISSIONCOLOR|EMISSIONCOLOUR|EMITTEDRGB", NULL, 0, WANT_NONSTRING},
    {"ROUGHNESS", "FUZZ|ROUGH", NULL, 0, 0},
    /* a cut-out (glTF's alpha mask, Mitsuba's mask): opacity map, its factor and the cut-off */
    {"OPACITY_MAP", "OPACITYMAP|ALPHAMAP|MASKMAP|CUTOUTMAP", NULL, 0, 0},
    {"OPACITY", NULL, NULL, 0, WANT_NONSTRING},
    {"ALPHA_CUTOFF", "ALPHACUTOFF|CUTOFF", NULL, 0, WANT_NONSTRING},
    {"IOR", "ETA|REFRIOR|INDEXOFREFRACTION|INDEXOFREFLECTION|REFRACTIONINDEX|REFRACTIVEINDEX|REFRACTION|N", NULL, 0, 0},
    {"METALLIC", "METALNESS|METAL", NULL, 0, 0},
    {"SPECRGB", "SPECULARCOLOR|SPECULARCOLOUR|SPECCOLOR|SPECCOLOUR|KS|SPECULARRGB", NULL, 0, 0},
    {"EXPONENT", "SPECEX|SHININESS|NS|SPECULAREXPONENT|SPECEXPONENT|PHONGEXPONENT", NULL, 0, 0},
    {"REFLECTIVE", "REFL|HASREFLECTIVE|REFLECTIVITY", NULL, 0, 0},
    {"REFRACTIVE", "REFR|HASREFRACTIVE|TRANSMISSION|TRANSMISSIVE|TRANSMITTANCE", NULL, 0, 0},
    {"TWO_SIDED", "DOUBLESIDED", NULL, 0, 0},
    {"TRANSMIT_RGB",
     "TRANSMITRGB|TRANSMITTANCERGB|TRANSMITCOLOR|TRANSMITCOLOUR|TRANSMISSIONCOLOR|TRANSMISSIONCOLOUR|"
     "TRANSMITTANCECOLOR|TRANSMITTANCECOLOUR|KT",
     NULL, 0, 0},
    /* two-colour procedural materials: the fallback renders their mean */
    {"RGB1", "COLOR1|COLOUR1", NULL, 0, 0},
    {"RGB2", "COLOR2|COLOUR2", NULL, 0, 0},
    {"LIGHT_RGB", "LIGHTCOLOR|LIGHTCOLOUR", NULL, 0, 0},
    {"DARK_RGB", "DARKCOLOR|DARKCOLOUR", NULL, 0, 0},
    /* the procedural materials' noise (Marble, Wood, Noise) */
    {"OCTAVES", "OCTAVE|NUMOCTAVES|NOISEOCTAVES", NULL, 0, 0},
    {"FREQUENCY", "FREQ|NOISESCALE|NOISEFREQUENCY|TURBULENCESCALE|MARBLESCALE", NULL, 0, 0},
    {"NORMAL_MAP", "NORMAL|NORMALMAP|NORMALTEXTURE|NORM|MAPNORM", NULL, 0, 0},
    {"NORMAL_SCALE", "NORMALSCALE|NORMALSTRENGTH|NORMALINTENSITY", NULL, 0, 0},
    {"BUMP_MAP", "BUMP|BUMPMAP|BUMPTEXTURE|HEIGHTMAP|HEIGHT|MAPBUMP", NULL, 0, 0},
    {"BUMP_SCALE", "BUMPSCALE|BUMPSTRENGTH|BUMPMULTIPLIER|BM|HEIGHTSCALE", NULL, 0, 0},
    {"DISPLACEMENT", "DISPLACEMENTMAP|DISP|MAPDISP",
     "displacement is not supported (no geometry is moved; give a BUMP_MAP)", 0, 0},
    {"METALLIC_ROUGHNESS",
     "METALLICROUGHNESSMAP|METALLICROUGHNESSTEXTURE|ROUGHNESSMAP|METALLICMAP|ORM|AOMAP|"
     "OCCLUSION|EMISSIVEMAP|EMISSIONMAP",
     "texture maps other than the base colour are not supported yet", 0, 0},
    /* dispersion (Dielectric, RoughGlass: kernel/spectral.h): one of KHR_materials_dispersion's
     * DISPERSION (20 / V_d), the Abbe number V_d, or Cauchy's B in um^2 */
    {"DISPERSION", "DISPERSIONFACTOR|KHRDISPERSION", NULL, 0, 0},
    {"ABBE", "ABBENUMBER|ABBEVD|VD", NULL, 0, 0},
    {"CAUCHY_B", "CAUCHYB|CAUCHY", NULL, 0, 0},
    /* conductors' complex IOR: IOR is eta, K the extinction (a named METAL gives both) */
    {"K", "KAPPA|EXTINCTION|EXTINCTIONCOEFFICIENT|ETAK|IORK", NULL, 0, 0},
    /* coated materials */
    {"BASE", "BASETYPE|SUBSTRATE|BASEMATERIAL|COATBASE", NULL, 0, 0},
    {"COAT_ROUGHNESS", "COATROUGHNESS|CLEARCOATROUGHNESS|COATINGROUGHNESS", NULL, 0, 0},
    {"COAT_RGB", "COATRGB|COATTINT|COATCOLOR|COATCOLOUR|COATINGCOLOR|COATINGCOLOUR|CLEARCOATTINT", NULL, 0, 0},
    {"COAT_ABSORPTION", "COATABSORPTION|COATSIGMAA|COATINGABSORPTION", NULL, 0, 0},
    /* a volume material's medium (TYPE Fog, Smoke, Volume, Medium: json_media.c) */
    {"SIGMA_A", "SIGMAA|ABSORPTIONCOEFFICIENT", NULL, 0, 0},
    {"SIGMA_S", "SIGMAS|SCATTERINGCOEFFICIENT", NULL, 0, 0},
    {"G", "ANISOTROPY|HG|PHASEG|ASYMMETRY", NULL, 1, 0},
    /* a subsurface material's mean free path per channel (TYPE Subsurface: json_media.c) */
    {"RADIUS", "SUBSURFACERADIUS|SSSRADIUS|SCATTERDISTANCE|SCATTERINGDISTANCE|MFP|MEANFREEPATH|DMFP|SUBSURFACEDISTANCE",
     NULL, 0, 0},
    {"COAT_THICKNESS", "COATTHICKNESS|COATINGTHICKNESS", NULL, 0, 0},
    /* PBR's layers: KHR_materials_sheen and KHR_materials_specular */
    {"SHEEN_RGB", "SHEEN|SHEENCOLOR|SHEENCOLOUR|SHEENCOLORFACTOR", NULL, 0, 0},
    {"SHEEN_ROUGHNESS", "SHEENROUGHNESSFACTOR", NULL, 0, 0},
    {"SPECULAR_WEIGHT", "SPECULARFACTOR|SPECULARSTRENGTH|SPECULARLEVEL", NULL, 0, 0},
    {"SPECULAR_TINT", "SPECULARCOLORFACTOR|SPECULARCOLOURFACTOR", NULL, 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const keyalias json_camera_keys[] = {
    {"RES", "RESOLUTION|SIZE|IMAGESIZE", NULL, 0, 0},
    {"FOVY", "FOV|VFOV|FIELDOFVIEW|YFOV", NULL, 0, 0},
    {"ITERATIONS", "SPP|SAMPLES|SAMPLESPERPIXEL|ITERATION", NULL, 0, 0},
    {"DEPTH", "MAXDEPTH|MAXBOUNCES|BOUNCES|TRACEDEPTH|MAXPATHLENGTH", NULL, 0, 0},
    {"FILE", "OUTPUT|OUTFILE|FILENAME", NULL, 0, 0},
    {"EYE", "POSITION|POS|ORIGIN|FROM|LOOKFROM|CAMERAPOSITION", NULL, 0, 0},
    {"LOOKAT", "TARGET|AT|CENTER|CENTRE|LOOKAT", NULL, 0, 0},
    {"VIEW", "DIRECTION|DIR|FORWARD|VIEWDIR", NULL, 0, 0},
    {"UP", "UPVECTOR|VUP", NULL, 0, 0},
    {"FOCAL_LENGTH", NULL, NULL, 1, 0},
    /* thin lens: course projects call the lens radius and the distance in focus many names; their
     * "focal length" is the distance in focus (a scene distance), unlike caustic's FOCAL_LENGTH */
    {"APERTURE", "APERTURERADIUS|LENSRADIUS|LENSRAD|LENS|RADIUS", NULL, 0, 0},
    {"FSTOP", "FNUMBER|FSTOPS", NULL, 0, 0},
    {"FOCUS_DISTANCE",
     "FOCUSDISTANCE|FOCALDISTANCE|FOCALDIST|FOCUSDIST|FOCALLENGTH|FOCAL|FOCUS|FOCALDEPTH|"
     "FOCUSPLANE|FOCALPLANE|FOCALPLANEDISTANCE",
     NULL, 0, 0},
    {"EXPOSURE", "EV", "exposure is not applied by the renderer (tone-map the image instead)", 0, 0},
    {"INV_RES", "PIXELLENGTH", NULL, 0, 0},
    {"ANTIALIAS", "AA|ANTIALIASING|SAMPLEWIDTH|JITTER", "caustic always antialiases (jittered samples)", 0, 0},
    {"FRAME", NULL, NULL, 0, 0},
    /* placements of a mesh object (true instancing): [{TRANS, ROTAT, SCALE, MATRIX, MATERIAL}, ...] */
    {"INSTANCES", "PLACEMENTS", NULL, 0, WANT_NONSTRING},
    /* the file's integrator (pbrt's Integrator, kept by --dump-scene); --integrator overrides */
    {"INTEGRATOR", NULL, NULL, 0, WANT_STRING},
    {"ENVMAP", "ENVIRONMENTMAP|ENVIRONMENT|SKYBOX|HDRI|BACKGROUND", NULL, 0,
     WANT_STRING},                                   /* a dialect's place for it */
    {"MEDIUM", "CAMERAMEDIUM|EXTERIOR", NULL, 0, 0}, /* the medium around the camera (a name in Media) */
    {NULL, NULL, NULL, 0, 0}};

const keyalias json_environment_keys[] = {
    {"RGB", "COLOR|COLOUR|RADIANCE|BACKGROUND|BACKGROUNDCOLOR", NULL, 0, 0},
    {"EMITTANCE", "INTENSITY|STRENGTH|SCALE|EMISSION|MULTIPLIER", NULL, 0, 0},
    {"FILE", "PATH|FILENAME|TEXTURE|MAP|HDR|HDRI|IMAGE|ENVMAP", NULL, 0, 0},
    {"TYPE", NULL, NULL, 0, 0}, /* "CONSTANT" / "TEXTURE": implied by FILE */
    {"ROTATION", "ROTAT|ROTATE", "rotating the environment map is not supported", 0, 0},
    {NULL, NULL, NULL, 0, 0}};

const char *const json_object_types[] = {"cube", "sphere", "mesh", "quad", "plane", NULL};

const char *const json_object_type_aliases[] = {"CUBE|BOX",
                                                "SPHERE|BALL",
                                                "MESH|OBJ|TRIMESH|TRIANGLEMESH|MODEL|GLTF|GLB|PLY|POLYMESH",
                                                "QUAD|RECT|RECTANGLE|SQUARE|PARALLELOGRAM",
                                                "PLANE|GROUND|FLOOR",
                                                NULL};

const keyalias json_object_keys[] = {
    {"TYPE", "SHAPE|KIND|GEOMETRY", NULL, 0, 0},
    {"MATERIAL", "MAT|MTL|MATERIALS|MATERIALNAME|MATERIALID|BSDF", NULL, 0, 0},
    {"TRANS", "TRANSLATE|TRANSLATION|POSITION|POS|OFFSET|T", NULL, 0, 0},
    {"ROTAT", "ROTATE|ROTATION|ROT|R|EULER", NULL, 0, 0},
    {"SCALE", "SCALING|S|SIZE", NULL, 0, 0},
    /* a general 4x4 transform, row-major, applied after TRANS/ROTAT/SCALE */
    {"MATRIX", "TRANSFORM|TRANSFORMMATRIX|XFORM|TOWORLD|MODELMATRIX|MATRIX4", NULL, 0, 0},
    {"FILE", "PATH|FILENAME|FILEPATH|MESHFILE|MESHPATH|SRC|SOURCE|URI|GLTF|OBJ|MODELFILE", NULL, 0, 0},
    /* an inline mesh instead of a FILE: positions, and optionally triangles, normals, uvs */
    {"VERTICES", "VERTS|POSITIONS|POINTS|VERTEXPOSITIONS", NULL, 0, WANT_NONSTRING},
    {"INDICES", "INDEX|FACES|TRIANGLES|TRIS|TRIANGLEINDICES|F", NULL, 0, 0},
    {"NORMALS", "NORMAL|VERTEXNORMALS|VN|N", NULL, 0, 0},
    {"UVS", "UV|TEXCOORDS|TEXCOORD|TEXTURECOORDINATES|VT|ST", NULL, 0, 0},
    {"MESH", "MESHNAME|MODEL|MESHID", NULL, 0, WANT_STRING},
    {"ORIGIN", NULL, NULL, 1, 0},
    {"U", NULL, NULL, 1, 0},
    {"V", NULL, NULL, 1, 0},
    {"NAME", "LABEL|ID|COMMENT", NULL, 0, 0}, /* a label: no effect */
    {"BUILD_BVH", "BVH|USEBVH", NULL, 0, 0},  /* caustic always builds one */
    {"MOTION", "VELOCITY|VEL|MOTIONBLUR|TRANSEND|MOVE", "motion blur is not supported (the object is rendered at rest)",
     0, 0},
    {"FRAME", NULL, NULL, 0, 0},
    /* placements of a mesh object (true instancing): [{TRANS, ROTAT, SCALE, MATRIX, MATERIAL}, ...] */
    {"INSTANCES", "PLACEMENTS", NULL, 0, WANT_NONSTRING},
    /* the media inside and outside the object's closed surface (names in Media) */
    {"INTERIOR", "INSIDE|MEDIUMINSIDE|INTERIORMEDIUM|MEDIUMINTERIOR|INNERMEDIUM", NULL, 0, 0},
    {"EXTERIOR", "OUTSIDE|MEDIUMOUTSIDE|EXTERIORMEDIUM|MEDIUMEXTERIOR|OUTERMEDIUM", NULL, 0, 0},
    {NULL, NULL, NULL, 0, 0}};

/* ---- material TYPE -> kind ----------------------------------------------------------------------
 * One row per kind of MATERIAL_KINDS, keyed by the kind's name; `reads` says which material keys
 * the kind takes beyond RGB, EMITTANCE, TEXTURE and TWO_SIDED. */
static const json_material_row json_material_rows[] = {
    /* "Emitting" is the course's name of it */
    {"Emitter", "EMITTER|EMITTING|EMISSIVE|EMISSION|LIGHT|AREALIGHT|LIGHTSOURCE", JM_EMITS},
    {"Diffuse", "DIFFUSE|LAMBERT|LAMBERTIAN|MATTE", 0},
    /* The reference loader reads ROUGHNESS for Specular but never uses it, and the course renders
     * Specular as an ideal mirror (the stock cornell.json has ROUGHNESS 1.0 on its mirror sphere):
     * kept so. Rough metal is the Conductor/Metal extension. */
    {"Mirror",
     "SPECULAR|MIRROR|REFLECT|REFLECTIVE|REFLECTION|PUREREFLECTION|PERFECTSPECULAR|PERFECTMIRROR|"
     "SPECULARREFLECTION|SPECULARREFLECTIVE",
     0},
    {"Dielectric",
     "REFRACTIVE|DIELECTRIC|GLASS|TRANSMISSIVE|TRANSPARENT|TRANSMISSION|REFRACT|REFRACTION|FRESNEL|"
     "PURETRANSMISSION|PUREREFRACTION|SPECULARTRANSMISSION|SPECULARREFRACTION",
     JM_IOR},
    /* RGB is F0 (Schlick), or a complex IOR: METAL "Au" (a named metal) or IOR (eta) with K */
    {"Conductor", "CONDUCTOR|METAL|METALLIC|ROUGHMETAL|GLOSSYMETAL",
     JM_ALPHA | JM_METAL_DEFAULT | JM_METAL_NAME | JM_ETA_K},
    /* RGB is the diffuse part, SPECRGB the lobe's reflectance */
    {"Phong", "PHONG|GLOSSY|BLINNPHONG|BLINN", JM_PHONG_LOBE},
    /* glTF 2.0 metallic-roughness: RGB base colour, METALLIC, ROUGHNESS (perceptual, alpha = r^2) */
    {"PBR",
     "PBR|MICROFACET|MICROFACETPBR|METALLICROUGHNESS|METALLICWORKFLOW|PRINCIPLED|DISNEY|DISNEYBRDF|GGX|"
     "COOKTORRANCE|STANDARD|PBRMETALLICROUGHNESS",
     JM_ALPHA | JM_METALLIC | JM_PBR_LAYERS},
    /* frosted glass: GGX reflection and transmission, RGB tints both */
    {"RoughGlass", "ROUGHGLASS|FROSTEDGLASS|ROUGHDIELECTRIC|ROUGHREFRACTIVE|ROUGHTRANSMISSION", JM_IOR | JM_ALPHA},
    /* a dielectric coat (IOR, COAT_ROUGHNESS, COAT_RGB or COAT_ABSORPTION x COAT_THICKNESS) over
     * BASE "Diffuse" (RGB), "Conductor" (RGB as F0 or METAL, ROUGHNESS) or "PBR" (METALLIC,
     * ROUGHNESS); pbrt's coateddiffuse/coatedconductor, Mitsuba's plastic/roughplastic */
    {"Coated",
     "COATED|PLASTIC|ROUGHPLASTIC|CLEARCOAT|COATEDDIFFUSE|COATEDCONDUCTOR|COATEDMETAL|LACQUER|VARNISH|"
     "LACQUERED|VARNISHED",
     JM_IOR | JM_ALPHA | JM_METALLIC | JM_METAL_NAME | JM_COAT},
    /* pbrt-v4 / Mitsuba thindielectric, glTF thin-walled transmission */
    {"ThinDielectric", "THINDIELECTRIC|THINGLASS|THINWALLED|THINWALLEDGLASS|WINDOWGLASS|WINDOW|PANE|GLASSPANE", JM_IOR},
    /* pbrt-v4 diffusetransmission, KHR_materials_diffuse_transmission: RGB reflects, TRANSMIT_RGB
     * transmits */
    {"DiffuseTransmission", "DIFFUSETRANSMISSION|DIFFUSETRANSMITTER|TRANSLUCENTDIFFUSE|DIFFUSETRANSLUCENT|LEAF|PAPER",
     JM_TRANSMIT},
    /* no surface: the boundary of a medium (Objects[].INTERIOR / EXTERIOR) */
    {"Interface", "INTERFACE|NULL|NULLBSDF|NULLMATERIAL|MEDIUMBOUNDARY|PASSTHROUGH", JM_NO_COLOUR},
};
_Static_assert(sizeof json_material_rows / sizeof json_material_rows[0] == MAT_KIND_COUNT,
               "src/import/json_dialect.c: json_material_rows needs one row per MATERIAL_KINDS kind");

/* The dialect's TYPEs that are no kind of caustic's. */
static const struct {
    const char *spellings;
    int kind; /* JM_KIND_INFER, JM_KIND_FALLBACK or JM_KIND_PROCEDURAL */
    const char *why;
} json_material_others[] = {
    /* no type ("", "N/A"): from the keys, as the course's text format did */
    {"|N/A|NA|NONE|DEFAULT", JM_KIND_INFER, NULL},
    /* known, no caustic counterpart: its base colour as diffuse, with a warning */
    /* subsurface scattering: a dielectric around a medium (json_media.c) */
    {"SUBSURFACE|SSS|SKIN|WAX|TRANSLUCENT|RANDOMWALK|RANDOMWALKSSS|SUBSURFACESCATTERING", JM_KIND_SUBSURFACE, NULL},
    /* a course's volume material: the medium inside the objects that use it (json_media.c) */
    {"VOLUME|MEDIUM|PARTICIPATINGMEDIUM|FOG|SMOKE|HOMOGENEOUS", JM_KIND_MEDIUM, NULL},
    {"HETEROGENEOUS|VDB|GRID|CLOUD", JM_KIND_FALLBACK, "has no heterogeneous (grid) media yet"},
    {"MARBLE|WOOD|NOISE|PERLIN|TURBULENCE|PERLINNOISE|WOODGRAIN", JM_KIND_PROCEDURAL, NULL},
    {"PROCEDURAL|CHECKER|CHECKERBOARD|GRADIENT|WORLEY", JM_KIND_FALLBACK,
     "has no procedural materials (caustic's checker is a TEXTURE)"},
    {NULL, 0, NULL}};

/* caustic's own names and the course's, for "did you mean" */
const char *const json_material_type_names[] = {"Emitter",
                                                "Emitting",
                                                "Diffuse",
                                                "Specular",
                                                "Refractive",
                                                "Conductor",
                                                "Metal",
                                                "Dielectric",
                                                "Glass",
                                                "Mirror",
                                                "Phong",
                                                "PBR",
                                                "RoughGlass",
                                                "Coated",
                                                "Plastic",
                                                "ThinDielectric",
                                                "DiffuseTransmission",
                                                "Interface",
                                                "Subsurface",
                                                NULL};

static int kind_of_name(const char *name) {
    for (int k = 0; k < MAT_KIND_COUNT; ++k)
        if (strcmp(material_kind_name(k), name) == 0) return k;
    return JM_KIND_UNKNOWN;
}

int json_material_named(const char *kind_name, const json_material_row **row) {
    *row = NULL;
    for (int i = 0; i < MAT_KIND_COUNT; ++i)
        if (strcmp(json_material_rows[i].kind_name, kind_name) == 0) {
            *row = &json_material_rows[i];
            return kind_of_name(kind_name);
        }
    return JM_KIND_UNKNOWN;
}

int json_material_kind(const char *tnorm, const json_material_row **row, const char **why) {
    *row = NULL;
    *why = NULL;
    for (int i = 0; i < MAT_KIND_COUNT; ++i)
        if (prm_in_list(tnorm, json_material_rows[i].spellings)) {
            *row = &json_material_rows[i];
            return kind_of_name(json_material_rows[i].kind_name);
        }
    for (int i = 0; json_material_others[i].spellings; ++i)
        if (prm_in_list(tnorm, json_material_others[i].spellings) ||
            (!tnorm[0] && json_material_others[i].spellings[0] == '|')) {
            *why = json_material_others[i].why;
            return json_material_others[i].kind;
        }
    return JM_KIND_UNKNOWN;
}

int json_material_table_check(char *err, size_t errlen) {
    for (int k = 0; k < MAT_KIND_COUNT; ++k) {
        int rows = 0;
        for (int i = 0; i < MAT_KIND_COUNT; ++i)
            rows += strcmp(json_material_rows[i].kind_name, material_kind_name(k)) == 0;
        if (rows != 1) {
            snprintf(err, errlen,
                     "src/import/json_dialect.c: material kind \"%s\" has %d rows in json_material_rows "
                     "(one is needed)",
                     material_kind_name(k), rows);
            return -1;
        }
    }
    for (int i = 0; i < MAT_KIND_COUNT; ++i)
        if (kind_of_name(json_material_rows[i].kind_name) < 0) {
            snprintf(err, errlen, "src/import/json_dialect.c: row \"%s\" names no kind of MATERIAL_KINDS",
                     json_material_rows[i].kind_name);
            return -1;
        }
    return 0;
}
