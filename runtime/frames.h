/* The page frames of the threads' address spaces: directories, page
 * tables, stacks, the shared region, working copies and twins. One pool,
 * taken from kernel memory when a world starts (kernel/memory.h) and given
 * back whole with it; inside, frames come and go one at a time, and the
 * count of frames out shows any leak. Frames are identity-mapped RAM, so
 * the kernel reaches one at its physical address in every directory. */
#ifndef RUNTIME_FRAMES_H
#define RUNTIME_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

/* count frames; false when they do not fit in memory. */
bool frames_init(uint32_t count);
/* A frame's physical address, or 0 when the pool is empty. */
uint32_t frame_alloc(void);
uint32_t frame_alloc_zeroed(void);
void frame_free(uint32_t pa);
uint32_t frames_in_use(void);
uint32_t frames_total(void);
/* True when pa is a frame of the pool. */
bool frame_in_pool(uint32_t pa);

#endif
