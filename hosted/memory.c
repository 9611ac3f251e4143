/* The kernel's memory interface over one mmap'd arena: the same region
 * allocator hands out the same aligned blocks. boot_info() holds argv, and
 * the user's code: the files HOSTED_MODULES_ENV names, mapped read-only (the
 * kernel gets them as the loader's modules). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hosted/platform.h"
#include "kernel/memory.h"
#include "lib/string.h"

static struct boot_info boot;
static struct region_set arena;
static uint64_t arena_size;

/* The modules, paths separated by ':'; one that cannot be read is left out
 * (bench asm then says there is no code to run). */
static void read_modules(const char *list)
{
    char path[4096];
    while (list && *list && boot.nmodules < BOOT_MODULES_MAX) {
        const char *end = strchr(list, ':');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n < sizeof path) {
            memcpy(path, list, n);
            path[n] = 0;
            int fd = open(path, O_RDONLY);
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
                void *p = mmap(0, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p != MAP_FAILED)
                    boot.modules[boot.nmodules++] = (struct boot_blob){ p, (uint32_t)st.st_size };
            }
            if (fd >= 0)
                close(fd);
        }
        list = end ? end + 1 : 0;
    }
}

void hosted_boot_info(int argc, char **argv, const char *aslr)
{
    boot.aslr = aslr;
    /* argv joined by blanks is the command line, held to the kernel's limit */
    size_t size = 1;
    for (int i = 0; i < argc; i++)
        size += strlen(argv[i]) + 1;
    char *line = malloc(size);
    if (!line)
        abort();
    size_t len = 0;
    for (int i = 0; i < argc; i++)
        len += (size_t)snprintf(line + len, size - len, "%s%s", i ? " " : "", argv[i]);
    line[len] = 0;
    cmdline_copy(boot.cmdline, sizeof boot.cmdline, line, &boot.cut);
    free(line);
    str_copy(boot.loader, "linux", sizeof boot.loader);
    boot.protocol = 0;
    boot.mem_source = "mmap";
    read_modules(getenv(HOSTED_MODULES_ENV));
}

int hosted_memory_init(uint64_t bytes)
{
    regions_init(&arena);
    if (bytes > 0xc0000000ull)
        return 0;
    void *p = mmap(0, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    arena_size = bytes;
    regions_add(&arena, (uint32_t)p, bytes);
    return 1;
}

const struct boot_info *boot_info(void) { return &boot; }

uint64_t memory_usable(void)
{
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t memory_reserved_overlap(void) { return 0; } /* no firmware map here */
/* A process has no image placed by a loader on a firmware map. */
void memory_image(uint32_t *base, uint32_t *end) { *base = *end = 0; }
const struct boot_overlap *memory_image_overlap(void) { return 0; }
uint32_t memory_map_dropped(void) { return 0; }
uint64_t memory_largest_free(void) { return regions_largest_free(&arena); }
uint32_t memory_top(void) { return 0; }
const struct region_set *memory_regions(void) { return &arena; }

void *memory_alloc(uint32_t size, uint32_t align)
{
    uint64_t at;
    if (!regions_alloc(&arena, size ? size : 1, align ? align : 16, &at))
        return 0;
    return (void *)(uint32_t)at;
}

void *memory_alloc_code(uint32_t size)
{
    uint32_t len = (size + 4095u) & ~4095u;
    void *p = memory_alloc(len, 4096);
    if (p && mprotect(p, len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return 0;
    return p;
}

void memory_mark(struct region_mark *m) { regions_mark(&arena, m); }
void memory_release(const struct region_mark *m) { regions_release(&arena, m); }
bool memory_is_free_ram(const void *p, uint32_t len) { return regions_contains(&arena, (uint32_t)p, len); }
