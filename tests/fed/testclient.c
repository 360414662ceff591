/* A misbehaving client for fedtrain's end-to-end tests: takes the place of one client rank
 * in `mpirun -np 2 fedtrain federated ... : -np 1 fed_testclient SAMPLES ROUND1 ROUND2 ...`
 * and, in round i, sends the frames listed in argument ROUNDi (comma-separated):
 *   good      the global model back, with correct metadata (a valid update)
 *   dup       good, twice
 *   magic     good with a broken magic number        version   protocol version 99
 *   length    header promises 4 more bytes than sent  crc       payload byte flipped
 *   round     sequence number of the next round       unknown   sender/client id 7
 *   spoof     claims to be client 0 (hosted by rank 1) kind     a GLOBAL message
 *   huge      every parameter 3e38                    count     claims 4294967295 samples
 *   nan       one NaN parameter                       short     payload shorter than the meta
 *   oversize  a frame larger than any update          silent    nothing at all (deadline)
 * It speaks the protocol of src/fed/update.h and follows fedtrain's start-up collectives. */
#define _POSIX_C_SOURCE 200809L
#include "../../src/fed/mpi/msgframe.h"
#include "../../src/fed/mpi/msgmpi.h"
#include "update.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

static void send_frame(const uint8_t *f, size_t n, MPI_Comm comm) {
    if (cmsg_mpi_send(f, n, 0, TAG_UPDATE, comm) != MPI_SUCCESS) {
        fprintf(stderr, "testclient: send failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc < 2) {
        fprintf(stderr, "usage: fed_testclient SAMPLES ROUND1 ROUND2 ...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint32_t samples = (uint32_t)strtoul(argv[1], NULL, 10);
    int client = rank - 1; /* with N clients on N ranks, client c lives on rank c + 1 */
    /* fedtrain's two start-up agreements, then the protocol communicator */
    int ok = 1, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    cmsg_mpi_set_idle_sleep(100);

    uint8_t *g = NULL, *f = NULL;
    size_t gcap = 0, gbytes = 0;
    for (;;) {
        if (cmsg_mpi_recv(&g, &gcap, &gbytes, 0, TAG_GLOBAL, comm, NULL) != MPI_SUCCESS) break;
        cmsg_header h;
        if (cmsg_open(g, gbytes, FED_PROTO_VERSION, &h) != CMSG_OK) {
            fprintf(stderr, "testclient: bad global frame\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (h.kind == MSG_STOP) break;
        uint32_t round = h.seq;
        size_t np = (size_t)h.payload_bytes / sizeof(float);
        const float *global = (const float *)cmsg_payload(g);
        size_t fb = update_frame_bytes(np) + 4096;
        f = realloc(f, fb);
        float *params = malloc(sizeof(float) * np);
        const char *plan = (int)round + 1 < argc ? argv[round + 1] : "good";
        char *list = strdup(plan), *save = NULL;
        for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            memcpy(params, global, sizeof(float) * np);
            update_meta m = {(uint32_t)client, samples, (uint32_t)np, 0, 0.5f, 0.5f, 0.01f, 0.03f};
            uint32_t seq = round;
            int reps = 1;
            if (!strcmp(a, "silent")) continue;
            if (!strcmp(a, "dup")) reps = 2;
            if (!strcmp(a, "unknown")) m.client = 7;
            if (!strcmp(a, "spoof")) m.client = 0;
            if (!strcmp(a, "round")) seq = round + 1;
            if (!strcmp(a, "huge"))
                for (size_t i = 0; i < np; i++) params[i] = 3e38f;
            if (!strcmp(a, "count")) m.n_samples = 4294967295u;
            if (!strcmp(a, "nan")) params[np / 3] = NAN;
            size_t n = update_encode(f, seq, &m, params);
            if (!strcmp(a, "magic")) f[0] ^= 0xFF;
            if (!strcmp(a, "version")) n = cmsg_seal(f, 99, MSG_UPDATE, seq, m.client, n - CMSG_HEADER_BYTES);
            if (!strcmp(a, "kind"))
                n = cmsg_seal(f, FED_PROTO_VERSION, MSG_GLOBAL, seq, m.client, n - CMSG_HEADER_BYTES);
            if (!strcmp(a, "length")) {
                n = cmsg_seal(f, FED_PROTO_VERSION, MSG_UPDATE, seq, m.client, n - CMSG_HEADER_BYTES + 4);
                n -= 4;
            }
            if (!strcmp(a, "crc")) f[CMSG_HEADER_BYTES + sizeof m + 5] ^= 0x10;
            if (!strcmp(a, "short")) n = cmsg_seal(f, FED_PROTO_VERSION, MSG_UPDATE, seq, m.client, 8);
            if (!strcmp(a, "oversize")) {
                memset(cmsg_payload(f) + (n - CMSG_HEADER_BYTES), 0, 4096);
                n = cmsg_seal(f, FED_PROTO_VERSION, MSG_UPDATE, seq, m.client, n - CMSG_HEADER_BYTES + 4096);
            }
            for (int r = 0; r < reps; r++) send_frame(f, n, comm);
        }
        free(list);
        free(params);
    }
    free(g);
    free(f);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
