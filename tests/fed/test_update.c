/* update_accept, the server's rules for one update frame: a valid update is taken; each kind
 * of bad frame is refused with its reason, attributed to its client only when that is safe,
 * and claimed sample counts and parameter magnitudes are bounded. */
#include "../../src/fed/mpi/msgframe.h"
#include "check.h"
#include "update.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NP = 5 };
static uint8_t frame[1024];
static float dst[NP];
static int shard_n[3] = {10, 20, 30};
static uint8_t selected[3] = {1, 1, 1};
static uint32_t answered[3];
static float global[NP];
static update_rules rules;

static size_t make(uint32_t client, uint32_t samples, float fill, uint32_t round) {
    float p[NP];
    for (int i = 0; i < NP; i++) p[i] = fill + 0.1f * (float)i;
    update_meta m = {client, samples, NP, 0, 0.5f, 0.6f, 0.1f, 0.03f};
    return update_encode(frame, round, &m, p);
}

/* Runs the rules; 1 if the outcome matches (needle NULL = accepted). */
static int outcome(size_t n, const char *needle, int want_client, int want_counts) {
    update_meta meta;
    int c, counts;
    const char *why = update_accept(frame, n, &rules, dst, &meta, &c, &counts);
    int ok = needle ? why && strstr(why, needle) : why == NULL;
    ok = ok && c == want_client && counts == want_counts;
    if (!ok)
        fprintf(stderr, "  got '%s' client %d counts %d; want '%s' client %d counts %d\n", why ? why : "(accepted)", c,
                counts, needle ? needle : "(accepted)", want_client, want_counts);
    return ok;
}

int main(void) {
    update_rules r = {4, 3, 4, 2, NP, shard_n, selected, answered, global, 1e4f, 0};
    rules = r; /* round 4, 3 clients on ranks 1..3, frame from rank 2 (client 1) */
    CHECK(outcome(make(1, 20, 1.0f, 4), NULL, 1, 1));
    CHECK(dst[4] == 1.4f);
    /* claimed sample counts must match the shard the server assigned */
    CHECK(outcome(make(1, 4294967295u, 1.0f, 4), "claims 4294967295 training samples, its shard has 20", 1, 1));
    CHECK(outcome(make(1, 0, 1.0f, 4), "claims 0", 1, 1));
    /* magnitudes */
    CHECK(outcome(make(1, 20, 3e38f, 4), "exceeds --max-param", 1, 1));
    CHECK(outcome(make(1, 20, NAN, 4), "contains NaN", 1, 1));
    CHECK(outcome(make(1, 20, INFINITY, 4), "contains Inf", 1, 1));
    rules.max_norm = 1.0f; /* ||(1, 1.1, 1.2, 1.3, 1.4)|| = 2.7 */
    CHECK(outcome(make(1, 20, 1.0f, 4), "exceeds --max-update-norm", 1, 1));
    CHECK(outcome(make(1, 20, 0.0f, 4), NULL, 1, 1)); /* norm 0.55 */
    rules.max_norm = 0;
    /* identity: the sender must be a client that the sending rank hosts */
    CHECK(outcome(make(0, 10, 1.0f, 4), "client 0 is not hosted by rank 2", -1, 0));
    CHECK(outcome(make(7, 20, 1.0f, 4), "unknown client id", -1, 0));
    /* rounds, selection, duplicates do not touch the client's slot */
    CHECK(outcome(make(1, 20, 1.0f, 3), "update for round 3, not 4", 1, 0));
    answered[1] = 3;
    CHECK(outcome(make(1, 20, 1.0f, 3), "duplicate update (for round 3)", 1, 0));
    answered[1] = 4;
    CHECK(outcome(make(1, 20, 1.0f, 4), "duplicate update", 1, 0));
    answered[1] = 0;
    selected[1] = 0;
    CHECK(outcome(make(1, 20, 1.0f, 4), "not selected", 1, 0));
    selected[1] = 1;
    /* frame damage: anonymous unless only the payload is damaged */
    size_t n = make(1, 20, 1.0f, 4);
    frame[0] ^= 1;
    CHECK(outcome(n, "bad magic", -1, 0));
    n = make(1, 20, 1.0f, 4);
    frame[10] ^= 1;
    CHECK(outcome(n, "header checksum", -1, 0));
    n = make(1, 20, 1.0f, 4);
    frame[n - 1] ^= 1;
    CHECK(outcome(n, "payload checksum", 1, 1));
    n = make(1, 20, 1.0f, 4);
    CHECK(outcome(n - 4, "payload length", 1, 1));
    CHECK(outcome(10, "shorter than its header", -1, 0));
    n = make(1, 20, 1.0f, 4);
    n = cmsg_seal(frame, 1, MSG_UPDATE, 4, 1, n - CMSG_HEADER_BYTES);
    CHECK(outcome(n, "unsupported protocol version", -1, 0));
    /* payload structure */
    n = cmsg_seal(frame, FED_PROTO_VERSION, MSG_UPDATE, 4, 1, 8);
    CHECK(outcome(n, "payload too short", 1, 1));
    n = make(1, 20, 1.0f, 4);
    n = cmsg_seal(frame, FED_PROTO_VERSION, MSG_UPDATE, 4, 1, n - CMSG_HEADER_BYTES - 4);
    CHECK(outcome(n, "wrong number of parameters", 1, 1));
    n = cmsg_seal(frame, FED_PROTO_VERSION, MSG_SKIP, 4, 1, 0);
    CHECK(outcome(n, "could not use the global model", 1, 1));
    n = cmsg_seal(frame, FED_PROTO_VERSION, MSG_GLOBAL, 4, 1, 0);
    CHECK(outcome(n, "unexpected message kind", 1, 0));
    /* single process: every client is on rank 0 */
    rules.ranks = 1;
    rules.from_rank = 0;
    CHECK(outcome(make(2, 30, 1.0f, 4), NULL, 2, 1));
    CHECK_DONE();
}
