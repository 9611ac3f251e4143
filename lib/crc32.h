/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the checksum of
 * every record, the same one zlib.crc32 computes on the host. Streaming, so
 * records of any length are checksummed as they are written. */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define CRC32_INIT 0xffffffffu

uint32_t crc32_update(uint32_t state, const void *data, size_t len);
static inline uint32_t crc32_final(uint32_t state) { return ~state; }
uint32_t crc32(const void *data, size_t len);

#endif
