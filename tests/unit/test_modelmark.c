/* The marks' encoding (arch/modelmark.h, docs/MODEL.md): every store the
 * mark functions make is logged by offset instead of reaching the mailbox,
 * then decoded back the way the plugin reads them (offset = field << 8 |
 * byte; fields 0-3 register A, 4-7 register B, 15 a command). The decoder
 * here is written from the contract, not from modelmark.c. */
#include <stdint.h>

#include "unit.h"

#define LOG_MAX 256
static uint32_t store_log[LOG_MAX];
static uint32_t stores;
#define MODEL_MAILBOX_STORE(offset) (stores < LOG_MAX ? (void)(store_log[stores++] = (offset)) : (void)0)
#include "arch/modelmark.c"

struct decoded {
    uint32_t command, a, b;
    uint32_t a_bytes, b_bytes; /* which bytes of A and B this mark wrote: bit i = byte i */
    int bad;                   /* a store outside fields 0-7 and 15 */
};

/* Decodes the logged stores of one mark: registers first, one command last. */
static struct decoded decode(uint32_t a_before, uint32_t b_before)
{
    struct decoded d = { 0, a_before, b_before, 0, 0, 0 };
    uint32_t commands = 0;
    for (uint32_t i = 0; i < stores; i++) {
        uint32_t off = store_log[i], field = off >> 8, byte = off & 0xff;
        if (off >= MODEL_MAILBOX_BYTES) {
            d.bad = 1;
        } else if (field < 4) {
            d.a = (d.a & ~(0xffu << 8 * field)) | byte << 8 * field;
            d.a_bytes |= 1u << field;
        } else if (field < 8) {
            d.b = (d.b & ~(0xffu << 8 * (field - 4))) | byte << 8 * (field - 4);
            d.b_bytes |= 1u << (field - 4);
        } else if (field == 15) {
            d.command = byte;
            commands++;
            d.bad |= i != stores - 1; /* the command comes last */
        } else {
            d.bad = 1;
        }
    }
    d.bad |= commands != 1;
    stores = 0;
    return d;
}

/* A mark that uses A (and B when uses_b) wrote all four bytes of each, and nothing else. */
#define CHECK_MARK(d, cmd, want_a, uses_b, want_b)                                       \
    do {                                                                                 \
        CHECK(!(d).bad && (d).command == (cmd));                                         \
        CHECK((d).a_bytes == 0xf && (d).a == (want_a));                                  \
        CHECK((d).b_bytes == ((uses_b) ? 0xfu : 0u));                                     \
        if (uses_b)                                                                      \
            CHECK((d).b == (want_b));                                                    \
    } while (0)

int main(void)
{
    /* the mailbox is a page of its own */
    CHECK(sizeof model_mailbox == 4096 && ((uintptr_t)model_mailbox & 4095) == 0);

    struct decoded d;
    model_mark_paging_on(0x00123000u, true, true);
    d = decode(0, 0);
    CHECK_MARK(d, 1u, 0x00123000u, 1, 3u);
    model_mark_paging_on(0x00456000u, true, false);
    d = decode(0, 0);
    CHECK_MARK(d, 1u, 0x00456000u, 1, 1u);
    model_mark_paging_on(0x00456000u, false, true);
    d = decode(0, 0);
    CHECK_MARK(d, 1u, 0x00456000u, 1, 2u);

    /* commands without operands write nothing but the command */
    model_mark_paging_off();
    d = decode(7, 9);
    CHECK(!d.bad && d.command == 2 && d.a_bytes == 0 && d.b_bytes == 0 && d.a == 7 && d.b == 9);
    model_mark_tlb_flush_all();
    d = decode(0, 0);
    CHECK(!d.bad && d.command == 8 && d.a_bytes == 0 && d.b_bytes == 0);

    model_mark_cr3(0xfedcb000u);
    d = decode(0, 0x55u);
    CHECK_MARK(d, 3u, 0xfedcb000u, 0, 0u);
    CHECK(d.b == 0x55u); /* B keeps its value */

    /* every byte value and position survives, 0 and 0xff included */
    model_mark_invlpg(0xff00ff01u);
    d = decode(0, 0);
    CHECK_MARK(d, 4u, 0xff00ff01u, 0, 0u);
    model_mark_invlpg(0);
    d = decode(0xffffffffu, 0);
    CHECK_MARK(d, 4u, 0u, 0, 0u);

    /* PDE: bit 9 carries children_global for a table entry, whatever memory has */
    model_mark_pde(0x00201ffcu, 0x00345003u, true);
    d = decode(0, 0);
    CHECK_MARK(d, 5u, 0x00201ffcu, 1, 0x00345203u);
    model_mark_pde(0x00201ffcu, 0x00345203u, false);
    d = decode(0, 0);
    CHECK_MARK(d, 5u, 0x00201ffcu, 1, 0x00345003u);
    /* a 4 MiB entry is announced as written: PS, its own G bit 8 */
    model_mark_pde(0x00201004u, 0x00400183u, false);
    d = decode(0, 0);
    CHECK_MARK(d, 5u, 0x00201004u, 1, 0x00400183u);
    model_mark_pde(0x00201004u, 0x00400083u, true);
    d = decode(0, 0);
    CHECK_MARK(d, 5u, 0x00201004u, 1, 0x00400083u);

    /* pde_write stores the entry itself and announces its slot's address */
    uint32_t dir[4] = { 0, 0, 0, 0 };
    pde_write(&dir[2], 0x00800007u, true);
    d = decode(0, 0);
    CHECK(dir[2] == 0x00800007u && dir[1] == 0 && dir[3] == 0);
    CHECK_MARK(d, 5u, (uint32_t)(uintptr_t)&dir[2], 1, 0x00800207u);

    model_mark_sample_begin(369, 0);
    d = decode(0xdeadbeefu, 0xdeadbeefu);
    CHECK_MARK(d, 6u, 369u, 1, 0u);
    model_mark_sample_end(0x01020304u, 0x0a0b0c0du);
    d = decode(0, 0);
    CHECK_MARK(d, 7u, 0x01020304u, 1, 0x0a0b0c0du);

    /* the real mark functions each stay a handful of stores */
    model_mark_sample_begin(1, 2);
    CHECK(stores == 9);
    stores = 0;
    model_mark_invlpg(1);
    CHECK(stores == 5);
    stores = 0;
    return unit_finish();
}
