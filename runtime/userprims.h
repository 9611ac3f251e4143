/* The user's primitives (lib/userabi.h, docs/USERCODE.md): a switch routine
 * and a lock the host built and handed over as modules, copied where the CPU
 * may run them and offered to the runtime and the benchmarks beside the
 * built-ins. Loaded once at start-up (app/kmain.c, hosted/main.c); a module
 * that is not one of these is left to whoever reads it (bench asm). */
#ifndef RUNTIME_USERPRIMS_H
#define RUNTIME_USERPRIMS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/usercode.h"

typedef uint32_t (*user_frame_fn)(uint32_t stack_top, void (*entry)(void *), void *arg);
typedef void(__attribute__((fastcall)) *switch_entry)(uint32_t *state_word);
typedef void (*user_lock_fn)(void *lock, uint32_t cpu_or_cpus);

struct user_switch {
    const char *name; /* the user's label */
    const char *as;   /* the built-in it stands in for in ctxsw, or "" for a case of its own */
    switch_entry fn;
    user_frame_fn frame; /* NULL: the callee frame */
};

struct user_lock {
    const char *name;
    uint32_t size;
    user_lock_fn init; /* (lock, cpus) */
    user_lock_fn lock, unlock; /* (lock, cpu) */
};

/* Reads the modules; a primitive module that is malformed, or that found no
 * memory, is named by an error record (never run). */
void userprims_load(void);
/* The user's lock object (size bytes, 64-byte aligned) zeroed, and init
 * (for cpus CPUs), lock and unlock each run once with the harness watching
 * (arch/usercall.h): NULL when it kept what cdecl and the harness keep, else
 * why not; an error record then says what it broke, and the run ends fail. */
const char *user_lock_check(void *obj, uint32_t cpus);
/* NULL when the user gave none. */
const struct user_switch *user_switch(void);
const struct user_lock *user_lock(void);

#endif
