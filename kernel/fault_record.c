#include "kernel/fault_record.h"

#include "kernel/console.h"
#include "kernel/finish.h"
#include "lib/record.h"
#include "lib/wire.h"

static const char *running_bench;
static const char *running_what;
static void (*annotator)(uint32_t vector, uint32_t cr2, uint32_t esp);

void fault_set_running(const char *bench, const char *what)
{
    running_bench = bench;
    running_what = what;
}

const char *fault_running_bench(void) { return running_bench; }
const char *fault_running_what(void) { return running_what; }

static const struct fault_user_code *user_code;
static struct user_piece {
    const char *name;
    uint32_t base, len;
} pieces[FAULT_USER_PIECES];
static uint32_t npieces;

void fault_set_user_code(const struct fault_user_code *u) { user_code = u; }

void fault_add_user_piece(const char *name, uint32_t base, uint32_t len)
{
    if (npieces < FAULT_USER_PIECES)
        pieces[npieces++] = (struct user_piece){ name, base, len };
}

/* The fault's place in the user's code, where its EIP lies in it. */
static void user_code_fields(uint32_t eip)
{
    for (uint32_t i = 0; i < npieces; i++)
        if (eip >= pieces[i].base && eip - pieces[i].base < pieces[i].len) {
            rec_obj_begin(WIRE_USER);
            rec_str("name", pieces[i].name);
            rec_str("part", "code");
            rec_u64("offset", eip - pieces[i].base);
            rec_obj_end();
            return;
        }
    const struct fault_user_code *u = user_code;
    if (!u || eip < u->base || eip - u->base >= usercode_code_len(&u->layout))
        return;
    struct usercode_place at = usercode_locate(&u->layout, eip - u->base);
    rec_obj_begin(WIRE_USER);
    rec_str("name", u->name);
    rec_str("part", usercode_part_name(at.part));
    if (at.part == USERCODE_IN_BODY) {
        rec_u64("copy", at.copy);
        rec_u64("variant", at.variant);
    }
    rec_u64("offset", at.offset);
    rec_obj_end();
}

void fault_set_annotator(void (*annotate)(uint32_t vector, uint32_t cr2, uint32_t esp)) { annotator = annotate; }

void fault_report_and_end(const struct fault_report *r)
{
    rec_abort();
    rec_begin(REC_FAULT);
    rec_u64("vector", r->vector);
    rec_str("name", r->name);
    rec_u64("eip", r->eip);
    rec_u64("err", r->err);
    rec_u64("cr2", r->cr2);
    rec_str("bench", running_bench);
    rec_str("what", running_what);
    rec_u64("cs", r->cs);
    rec_u64("eflags", r->eflags);
    rec_u64("esp", r->esp);
    user_code_fields(r->eip);
    if (r->on_cpu) {
        rec_u64("cpu", r->cpu);
        rec_u64("apic_id", r->apic_id);
    }
    if (r->fiber) {
        rec_str("fiber", r->fiber);
        rec_str("cause", r->cause);
    } else if (annotator) {
        annotator(r->vector, r->cr2, r->esp);
    }
    if (r->mc) { /* null where the CPU has no MCA registers to read, or no bank holds an error */
        if (r->mc->read)
            rec_u64("mcg_status", r->mc->mcg_status);
        else
            rec_null("mcg_status");
        if (r->mc->bank >= 0) {
            rec_u64("mc_bank", (uint64_t)r->mc->bank);
            rec_u64("mc_status", r->mc->bank_status);
        } else {
            rec_null("mc_bank");
            rec_null("mc_status");
        }
    }
    rec_end();
    console_say(VGA_RED, "FAULT: %s (vector %u) at eip 0x%x err 0x%x cr2 0x%x in %s%s", r->name, r->vector, r->eip,
                r->err, r->cr2, running_bench ? running_bench : "(kernel)", r->on_cpu ? " on another CPU" : "");
    finish_run(RUN_FAULT);
}
