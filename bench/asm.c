/* bench asm: what the user's snippet costs, per copy, with nothing of the
 * harness in the figure (docs/USERCODE.md).
 *
 * The host assembles the snippet (its set-up code, and its body once, or
 * once per register where it wrote {r}) and hands it over as a module
 * (lib/usercode.h). Here each case's code is unrolled twice into buffers the
 * CPU may run: the set-up, then n copies of the body (copies=), then the
 * harness's tail; and the set-up, 2n copies, the tail. A sample calls each
 * buffer reps= times (arch/usercall.h: known registers in, anything the code
 * broke of the harness's state caught on the way back) and keeps the 2n
 * buffer's time less the n buffer's: the set-up, the call, the tail and the
 * timing cancel, what is left is n * reps copies (nanoBench's method). The
 * sample is kept whole and the record says so (`sums`): the host divides,
 * so a copy's cost keeps its decimals.
 *
 * Cases: `as_written` (the body as the user wrote it, copy after copy: a
 * dependency chain wherever the code reads what it wrote); with {r}, `chain`
 * (every copy on EAX: latency) and `independent` (the copies rotating
 * through EAX, ECX, EDX, EBX, ESI, EDI: six chains side by side, throughput).
 * Before measuring, each buffer runs once: a fault there is the kernel's
 * fault record, naming where in the user's code it happened; a snippet that
 * changed ESP, EBP, a segment register, IF or DF is named by an error
 * record, its case skipped, and the run ends fail. */
#include "arch/tsc.h"
#include "arch/usercall.h"
#include "bench/registry.h"
#include "kernel/console.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "lib/defaults.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/string.h"
#include "lib/usercode.h"
#include "lib/wire.h"

#define CASES_MAX 2
#define WHY_MAX 160

/* One buffer: its code and where the fault record finds the user's bytes. */
struct unrolled {
    uint8_t *code;
    struct fault_user_code where;
};

/* One case: the n and 2n buffers, the scratch buffer, what the calls broke. */
struct asm_case {
    struct unrolled n, twice;
    void *scratch;
    uint32_t reps;
    uint32_t broke;
    struct usercall_seen seen;
};

static struct usercode_snippet snippet;
static char why_not[WHY_MAX];

/* The first module that is a snippet; NULL, or why none is (why_not). */
static const struct usercode_snippet *find_snippet(void)
{
    const struct boot_info *b = boot_info();
    const char *why = "no module";
    for (uint32_t i = 0; i < b->nmodules; i++)
        if (usercode_snippet(b->modules[i].addr, b->modules[i].len, &snippet, &why))
            return &snippet;
    fmt(why_not, sizeof why_not, "no snippet (%s): the host tool hands one over with --asm or --asm-file", why);
    return 0;
}

static const char *unavailable(const struct config *cfg)
{
    (void)cfg;
    return find_snippet() ? 0 : why_not;
}

static bool unroll(const struct usercode_snippet *s, struct usercode_layout layout, struct unrolled *u)
{
    uint32_t tail = (uint32_t)(usercall_tail_end - usercall_tail);
    uint32_t len = usercode_code_len(&layout);
    u->code = memory_alloc_code(len + tail);
    if (!u->code)
        return false;
    memcpy(u->code, s->setup.code, s->setup.len);
    uint32_t at = s->setup.len;
    for (uint32_t k = 0; k < layout.copies; k++) {
        const struct usercode_piece *b = &s->body[layout.nvariants > 1 ? k % layout.nvariants : layout.fixed];
        memcpy(u->code + at, b->code, b->len);
        at += b->len;
    }
    memcpy(u->code + at, usercall_tail, tail);
    u->where = (struct fault_user_code){ s->name, (uint32_t)u->code, layout };
    return true;
}

/* reps calls of one buffer, timed. */
static int64_t timed_calls(struct asm_case *a, const struct unrolled *u)
{
    fault_set_user_code(&u->where);
    uint64_t t0 = tsc_begin();
    for (uint32_t r = 0; r < a->reps; r++)
        a->broke |= usercall(u->code, a->scratch, &a->seen);
    uint64_t t1 = tsc_end();
    fault_set_user_code(0);
    return (int64_t)(t1 - t0);
}

static int64_t sample(void *arg)
{
    struct asm_case *a = arg;
    int64_t once = timed_calls(a, &a->n);
    return timed_calls(a, &a->twice) - once;
}

/* What the code changed that it must leave, as words. */
static void broke_text(char *out, uint32_t size, uint32_t mask, const struct usercall_seen *seen)
{
    out[0] = 0;
    uint32_t at = 0;
    if (mask & USERCALL_ESP)
        at += fmt(out + at, size - at, "%sESP (came back 0x%x)", at ? ", " : "", seen->esp);
    if (mask & USERCALL_EBP)
        at += fmt(out + at, size - at, "%sEBP (came back 0x%x)", at ? ", " : "", seen->ebp);
    if (mask & USERCALL_SEGS)
        at += fmt(out + at, size - at, "%sa segment register (ds %x es %x fs %x gs %x ss %x)", at ? ", " : "",
                  seen->ds, seen->es, seen->fs, seen->gs, seen->ss);
    if (mask & USERCALL_IF)
        at += fmt(out + at, size - at, "%sIF (eflags 0x%x)", at ? ", " : "", seen->eflags);
    if (mask & USERCALL_DF)
        fmt(out + at, size - at, "%sDF (eflags 0x%x)", at ? ", " : "", seen->eflags);
}

/* An error record naming what the user's code broke; the run ends fail. */
static void report_broken(struct bench_ctx *ctx, const char *case_name, const struct asm_case *a)
{
    char what[WHY_MAX], msg[2 * WHY_MAX];
    broke_text(what, sizeof what, a->broke, &a->seen);
    fmt(msg, sizeof msg, "the user's code '%s' changed %s: ESP, EBP, the segment registers, IF and DF must come "
        "back as they went in (docs/USERCODE.md)", snippet.name, what);
    rec_begin(REC_ERROR);
    rec_str("code", "asm_state");
    rec_str("msg", msg);
    rec_str("bench", ctx->bench->name);
    rec_str("what", case_name);
    rec_str(WIRE_USER, snippet.name);
    rec_u64("esp", a->seen.esp);
    rec_u64("ebp", a->seen.ebp);
    rec_u64("eflags", a->seen.eflags);
    rec_end();
    console_say(VGA_RED, "  %s/%s: %s", ctx->bench->name, case_name, msg);
    finish_mark_failed();
}

static void one_case(struct bench_ctx *ctx, const char *name, const char *regs, struct usercode_layout layout,
                     void *scratch)
{
    struct region_mark mark;
    memory_mark(&mark);
    uint32_t copies = layout.copies;
    struct asm_case a = { .scratch = scratch, .reps = bench_reps(ctx, CR_DEF_ASM_REPS) };
    layout.copies = 2 * copies;
    bool made = unroll(&snippet, layout, &a.twice);
    layout.copies = copies;
    if (!made || !unroll(&snippet, layout, &a.n)) {
        bench_skip(ctx, name, "no memory for the unrolled code");
        memory_release(&mark);
        return;
    }
    bench_running_user(ctx, name, snippet.name);
    fault_set_running(ctx->bench->name, name);
    uint32_t reps = a.reps;
    a.reps = 1; /* each buffer once, untimed: what it breaks is named before anything is measured */
    sample(&a);
    a.reps = reps;
    if (a.broke) {
        report_broken(ctx, name, &a);
        bench_skip(ctx, name, "the snippet broke the harness's state (the error record before this says how)");
        memory_release(&mark);
        return;
    }
    struct bench_case c = { .name = name, .per = (uint64_t)copies * a.reps, .sums = true };
    c.params[c.nparams++] = (struct bench_param)PARAM_STR("code", snippet.name);
    c.params[c.nparams++] = (struct bench_param)PARAM_STR("registers", regs);
    c.params[c.nparams++] = (struct bench_param)PARAM_NUM("copies", copies);
    c.params[c.nparams++] = (struct bench_param)PARAM_NUM("reps", a.reps);
    bench_measure(ctx, &c, sample, &a);
    if (a.broke) /* it broke the state only now and then: the samples stand, the record says it */
        report_broken(ctx, name, &a);
    memory_release(&mark);
}

static void run(struct bench_ctx *ctx)
{
    const struct usercode_snippet *s = find_snippet();
    bool rotates = s->nvariants == USERCODE_VARIANTS;
    bench_plan(ctx, rotates ? CASES_MAX : 1);
    struct region_mark mark;
    memory_mark(&mark);
    void *scratch = memory_alloc(CR_DEF_ASM_SCRATCH, 4096);
    if (!scratch) {
        bench_skip(ctx, rotates ? "chain" : "as_written", "no memory for the scratch buffer");
        return;
    }
    memset(scratch, 0, CR_DEF_ASM_SCRATCH);
    struct usercode_layout layout = { .setup_len = s->setup.len, .nvariants = 1, .copies = ctx->cfg->copies };
    for (uint32_t v = 0; v < s->nvariants; v++)
        layout.body_len[v] = s->body[v].len;
    if (!rotates) {
        one_case(ctx, "as_written", "as written", layout, scratch);
    } else {
        one_case(ctx, "chain", "eax", layout, scratch);
        layout.nvariants = USERCODE_VARIANTS;
        one_case(ctx, "independent", "eax ecx edx ebx esi edi", layout, scratch);
    }
    memory_release(&mark);
}

const struct bench bench_asm = {
    .name = "asm",
    .what = "the user's snippet (--asm): cycles per copy, unrolled n and 2n times and subtracted",
    .in_quick = false,
    .by_name_only = true,
    .unavailable = unavailable,
    .run = run,
};
