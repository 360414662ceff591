/* Versioned, checksummed message frames, independent of what they carry.
 *
 * A frame is a fixed 32-byte little-endian header followed by the payload:
 *   magic u32 | version u16 | kind u16 | seq u32 | sender u32 |
 *   payload_bytes u64 | payload_crc u32 | header_crc u32
 * header_crc covers the 28 bytes before it, payload_crc the payload (zlib CRC-32).
 * The MPI helpers move whole frames; the pack/open functions need no MPI, so
 * unit tests and other transports can use them too. */
#ifndef CAUSTIC_MSGFRAME_H
#define CAUSTIC_MSGFRAME_H

#include <stddef.h>
#include <stdint.h>

#define CMSG_MAGIC        0x47534d43u /* "CMSG" read as little-endian */
#define CMSG_HEADER_BYTES 32

typedef struct {
    uint16_t version; /* protocol version of the application */
    uint16_t kind;    /* application-defined message type */
    uint32_t seq;     /* sequence number, e.g. training round */
    uint32_t sender;  /* application-level sender id */
    uint64_t payload_bytes;
    uint32_t payload_crc;
} cmsg_header;

typedef enum {
    CMSG_OK = 0,
    CMSG_TOO_SHORT,
    CMSG_BAD_MAGIC,
    CMSG_BAD_HEADER_CRC,
    CMSG_BAD_VERSION,
    CMSG_BAD_LENGTH,
    CMSG_BAD_PAYLOAD_CRC
} cmsg_status;

/* Bytes a frame with this payload size occupies. */
static inline size_t cmsg_frame_bytes(size_t payload_bytes) { return CMSG_HEADER_BYTES + payload_bytes; }

/* The payload lives right after the header; write it there, then seal. */
static inline uint8_t *cmsg_payload(uint8_t *frame) { return frame + CMSG_HEADER_BYTES; }

/* Fills the header of `frame` (payload already in place) and returns the frame size. */
size_t cmsg_seal(uint8_t *frame, uint16_t version, uint16_t kind, uint32_t seq, uint32_t sender,
                 uint64_t payload_bytes);

/* Checks magic, header CRC, version, length against frame_bytes and payload CRC.
 * On CMSG_OK fills *hdr. */
cmsg_status cmsg_open(const uint8_t *frame, size_t frame_bytes, uint16_t expected_version, cmsg_header *hdr);

/* Reads the header alone (magic and header CRC checked, nothing else): lets a receiver tell
 * who sent a frame whose payload is damaged. Returns CMSG_OK or why not. */
cmsg_status cmsg_peek_header(const uint8_t *frame, size_t frame_bytes, cmsg_header *hdr);

const char *cmsg_status_str(cmsg_status s);

uint32_t cmsg_crc32(const void *data, size_t n);

#endif
