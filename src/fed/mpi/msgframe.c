#include "msgframe.h"

#include <string.h>
#include <zlib.h>

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

uint32_t cmsg_crc32(const void *data, size_t n) {
    /* zlib takes uInt lengths: feed large buffers in chunks. */
    uLong crc = crc32(0L, Z_NULL, 0);
    const Bytef *p = data;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

size_t cmsg_seal(uint8_t *frame, uint16_t version, uint16_t kind, uint32_t seq, uint32_t sender,
                 uint64_t payload_bytes) {
    put32(frame + 0, CMSG_MAGIC);
    put16(frame + 4, version);
    put16(frame + 6, kind);
    put32(frame + 8, seq);
    put32(frame + 12, sender);
    put64(frame + 16, payload_bytes);
    put32(frame + 24, cmsg_crc32(frame + CMSG_HEADER_BYTES, (size_t)payload_bytes));
    put32(frame + 28, cmsg_crc32(frame, 28));
    return cmsg_frame_bytes((size_t)payload_bytes);
}

cmsg_status cmsg_peek_header(const uint8_t *frame, size_t frame_bytes, cmsg_header *hdr) {
    if (frame == NULL || frame_bytes < CMSG_HEADER_BYTES) return CMSG_TOO_SHORT;
    if (get32(frame) != CMSG_MAGIC) return CMSG_BAD_MAGIC;
    if (get32(frame + 28) != cmsg_crc32(frame, 28)) return CMSG_BAD_HEADER_CRC;
    hdr->version = get16(frame + 4);
    hdr->kind = get16(frame + 6);
    hdr->seq = get32(frame + 8);
    hdr->sender = get32(frame + 12);
    hdr->payload_bytes = get64(frame + 16);
    hdr->payload_crc = get32(frame + 24);
    return CMSG_OK;
}

cmsg_status cmsg_open(const uint8_t *frame, size_t frame_bytes, uint16_t expected_version, cmsg_header *hdr) {
    cmsg_header h;
    cmsg_status st = cmsg_peek_header(frame, frame_bytes, &h);
    if (st != CMSG_OK) return st;
    if (h.version != expected_version) return CMSG_BAD_VERSION;
    if (h.payload_bytes != (uint64_t)(frame_bytes - CMSG_HEADER_BYTES)) return CMSG_BAD_LENGTH;
    if (cmsg_crc32(frame + CMSG_HEADER_BYTES, (size_t)h.payload_bytes) != h.payload_crc) return CMSG_BAD_PAYLOAD_CRC;
    if (hdr) *hdr = h;
    return CMSG_OK;
}

const char *cmsg_status_str(cmsg_status s) {
    switch (s) {
    case CMSG_OK: return "ok";
    case CMSG_TOO_SHORT: return "frame shorter than its header";
    case CMSG_BAD_MAGIC: return "bad magic number";
    case CMSG_BAD_HEADER_CRC: return "header checksum mismatch";
    case CMSG_BAD_VERSION: return "unsupported protocol version";
    case CMSG_BAD_LENGTH: return "payload length does not match the frame size";
    case CMSG_BAD_PAYLOAD_CRC: return "payload checksum mismatch";
    }
    return "unknown status";
}
