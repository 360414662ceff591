/* Frames round-trip; any flipped byte, wrong version or wrong length is detected. */
#include "../../src/fed/mpi/msgframe.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
    size_t payload = 1000;
    uint8_t *f = malloc(cmsg_frame_bytes(payload));
    for (size_t i = 0; i < payload; i++) cmsg_payload(f)[i] = (uint8_t)(i * 7);
    size_t n = cmsg_seal(f, 3, 9, 42, 5, payload);
    CHECK(n == payload + CMSG_HEADER_BYTES);
    cmsg_header h;
    CHECK(cmsg_open(f, n, 3, &h) == CMSG_OK);
    CHECK(h.kind == 9 && h.seq == 42 && h.sender == 5 && h.payload_bytes == payload);
    CHECK(cmsg_open(f, n, 4, &h) == CMSG_BAD_VERSION);
    CHECK(cmsg_open(f, n - 1, 3, &h) == CMSG_BAD_LENGTH);
    CHECK(cmsg_open(f, 10, 3, &h) == CMSG_TOO_SHORT);
    /* every single-byte corruption must be caught */
    int missed = 0;
    for (size_t i = 0; i < n; i++) {
        f[i] ^= 0x10;
        if (cmsg_open(f, n, 3, &h) == CMSG_OK) missed++;
        f[i] ^= 0x10;
    }
    CHECK(missed == 0);
    f[0] ^= 1;
    CHECK(cmsg_open(f, n, 3, &h) == CMSG_BAD_MAGIC);
    f[0] ^= 1;
    f[CMSG_HEADER_BYTES + 3] ^= 1;
    CHECK(cmsg_open(f, n, 3, &h) == CMSG_BAD_PAYLOAD_CRC);
    f[CMSG_HEADER_BYTES + 3] ^= 1;
    f[9] ^= 1;
    CHECK(cmsg_open(f, n, 3, &h) == CMSG_BAD_HEADER_CRC);
    /* known CRC-32 value ("123456789" -> cbf43926) */
    CHECK(cmsg_crc32("123456789", 9) == 0xcbf43926u);
    /* empty payload */
    size_t m = cmsg_seal(f, 1, 1, 0, 0, 0);
    CHECK(cmsg_open(f, m, 1, &h) == CMSG_OK && h.payload_bytes == 0);
    free(f);
    CHECK_DONE();
}
