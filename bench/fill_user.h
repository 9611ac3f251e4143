/* The buffer-zeroing kernels of the working-set scenario (fill=): one
 * function for the fibers of bench workset (ring 0) and the ring-3 threads
 * of bench aspace (workset_threads), so both refill exactly alike. In the
 * user pages (linker.ld), which ring 0 may run too. */
#ifndef BENCH_FILL_USER_H
#define BENCH_FILL_USER_H

#include <stdint.h>

/* kind: enum fill_kind (lib/config.h). loop: one 32-bit store per
 * iteration (store-bound: at most a store per cycle, whatever the cache);
 * stos: rep stosd, which the CPU turns into line-sized writes
 * (bandwidth-bound: it shows the cache hierarchy); sse: 16-byte stores
 * (buf 16-byte aligned). */
void fill_buffer(uint8_t *buf, uint32_t size, uint32_t kind);

#endif
