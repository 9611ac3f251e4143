#include "runtime/userprims.h"

#include "arch/usercall.h"
#include "kernel/error_record.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "lib/fmt.h"
#include "lib/string.h"

static struct usercode_primitive sw_code, lock_code;
static struct user_switch sw;
static struct user_lock lk;
static bool have_switch, have_lock;

static void refused(uint32_t module, const char *name, const char *why)
{
    char msg[160];
    fmt(msg, sizeof msg, "module %u (the user's code %s): %s: not loaded", module, name, why);
    error_record("user_code", msg);
}

/* The primitive's code copied where the CPU may run it; NULL (and an error record) when there is no memory. */
static uint8_t *placed(uint32_t module, const struct usercode_primitive *p)
{
    uint8_t *at = memory_alloc_code(p->code.len);
    if (!at) {
        refused(module, p->name, "no memory for its code");
        return 0;
    }
    memcpy(at, p->code.code, p->code.len);
    fault_add_user_piece(p->name, (uint32_t)at, p->code.len);
    return at;
}

/* Module i's primitive of this kind, read into *p and its code placed; NULL (and an error record) when not. */
static uint8_t *loaded(uint32_t i, const struct boot_blob *m, enum usercode_kind kind, struct usercode_primitive *p)
{
    const char *why = 0;
    if (!usercode_primitive(m->addr, m->len, kind, p, &why)) {
        refused(i, kind == USERCODE_SWITCH ? "(a switch routine)" : "(a lock)", why);
        return 0;
    }
    return placed(i, p);
}

void userprims_load(void)
{
    const struct boot_info *b = boot_info();
    for (uint32_t i = 0; i < b->nmodules; i++) {
        uint32_t kind = usercode_kind(b->modules[i].addr, b->modules[i].len);
        uint8_t *at;
        if (kind == USERCODE_SWITCH && !have_switch && (at = loaded(i, &b->modules[i], kind, &sw_code))) {
            sw = (struct user_switch){ sw_code.name, sw_code.as, (switch_entry)(at + sw_code.entry[0]),
                                       sw_code.entry[1] == USERCODE_NO_ENTRY ? 0 : (user_frame_fn)(at + sw_code.entry[1]) };
            have_switch = true;
        } else if (kind == USERCODE_LOCK && !have_lock && (at = loaded(i, &b->modules[i], kind, &lock_code))) {
            lk = (struct user_lock){ lock_code.name, lock_code.lock_size, (user_lock_fn)(at + lock_code.entry[0]),
                                     (user_lock_fn)(at + lock_code.entry[1]), (user_lock_fn)(at + lock_code.entry[2]) };
            have_lock = true;
        }
    }
}

const struct user_switch *user_switch(void) { return have_switch ? &sw : 0; }
const struct user_lock *user_lock(void) { return have_lock ? &lk : 0; }

const char *user_lock_check(void *obj, uint32_t cpus)
{
    static const char *const steps[] = { "cr_lock_init", "cr_lock", "cr_unlock" };
    const user_lock_fn fns[] = { lk.init, lk.lock, lk.unlock };
    memset(obj, 0, lk.size);
    for (uint32_t i = 0; i < 3; i++) {
        struct usercall_seen seen;
        uint32_t broke = usercall_cdecl(fns[i], obj, i == 0 ? cpus : 0, &seen);
        if (!broke)
            continue;
        char msg[200];
        fmt(msg, sizeof msg, "the user's lock '%s': %s changed%s%s%s%s%s%s, which cdecl and the harness keep "
            "(lib/userabi.h)", lk.name, steps[i], broke & USERCALL_CALLEE ? " EBX, ESI or EDI" : "",
            broke & USERCALL_EBP ? " EBP" : "", broke & USERCALL_ESP ? " ESP" : "",
            broke & USERCALL_SEGS ? " a segment register" : "", broke & USERCALL_IF ? " IF" : "",
            broke & USERCALL_DF ? " DF" : "");
        error_record("user_lock", msg);
        finish_mark_failed();
        return "the user's lock broke the harness's state (the error record before this says how)";
    }
    return 0;
}
