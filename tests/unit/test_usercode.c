#include "lib/usercode.h"
#include "unit.h"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* A snippet blob as the host writes it (machines/usercode.py): a 2-byte setup, `n` bodies of `len` bytes. */
static uint32_t blob(uint8_t *b, uint32_t n, uint32_t len)
{
    memset(b, 0, 512);
    uint32_t code = USERCODE_HEADER + 4 * (3 + 2 * USERCODE_VARIANTS);
    put32(b, USERCODE_MAGIC);
    put32(b + 4, USERCODE_VERSION);
    put32(b + 8, USERCODE_SNIPPET);
    memcpy(b + 16, "mine", 4);
    uint8_t *w = b + USERCODE_HEADER;
    put32(w, code), put32(w + 4, 2), put32(w + 8, n);
    for (uint32_t v = 0; v < n; v++)
        put32(w + 12 + 8 * v, code + 2 + v * len), put32(w + 16 + 8 * v, len);
    uint32_t size = code + 2 + n * len;
    put32(b + 12, size);
    return size;
}

int main(void)
{
    uint8_t b[512];
    struct usercode_snippet s;
    const char *why = 0;
    uint32_t size = blob(b, 1, 3);
    CHECK(usercode_snippet(b, size, &s, &why));
    CHECK_STR(s.name, "mine");
    CHECK(s.nvariants == 1 && s.setup.len == 2 && s.body[0].len == 3 && s.body[0].code == b + size - 3);
    size = blob(b, USERCODE_VARIANTS, 4);
    CHECK(usercode_snippet(b, size, &s, &why) && s.nvariants == USERCODE_VARIANTS);
    /* every way a blob can be wrong is refused, with why */
    CHECK(!usercode_snippet(b, size - 1, &s, &why));
    CHECK_STR(why, "its size runs past the module");
    CHECK(!usercode_snippet(b, 20, &s, &why));
    b[0] ^= 1;
    CHECK(!usercode_snippet(b, size, &s, &why));
    CHECK_STR(why, "not the user's code (no CRUC magic)");
    size = blob(b, 2, 3);
    CHECK(!usercode_snippet(b, size, &s, &why));
    CHECK_STR(why, "neither one body nor one per register");
    size = blob(b, 1, 3);
    put32(b + USERCODE_HEADER + 12, 0xfffffff0u); /* a body's offset past the blob, without overflow */
    CHECK(!usercode_snippet(b, size, &s, &why));
    CHECK_STR(why, "a body runs past the blob");

    /* the layout: setup 2, then copies of bodies 3 long (fixed) or rotating 1, 2, 3 long */
    struct usercode_layout l = { .setup_len = 2, .nvariants = 1, .fixed = 0, .body_len = { 3 }, .copies = 4 };
    CHECK(usercode_code_len(&l) == 14);
    struct usercode_place p = usercode_locate(&l, 1);
    CHECK(p.part == USERCODE_IN_SETUP && p.offset == 1);
    p = usercode_locate(&l, 2 + 3 * 2 + 1);
    CHECK(p.part == USERCODE_IN_BODY && p.copy == 2 && p.variant == 0 && p.offset == 1);
    p = usercode_locate(&l, 14);
    CHECK(p.part == USERCODE_IN_TAIL && p.offset == 0);
    struct usercode_layout r = { .setup_len = 0, .nvariants = 3, .body_len = { 1, 2, 3 }, .copies = 5 };
    CHECK(usercode_code_len(&r) == 1 + 2 + 3 + 1 + 2);
    p = usercode_locate(&r, 7); /* copies at 0, 1, 3, 6, 7 */
    CHECK(p.part == USERCODE_IN_BODY && p.copy == 4 && p.variant == 1 && p.offset == 0);
    p = usercode_locate(&r, 5);
    CHECK(p.copy == 2 && p.variant == 2 && p.offset == 2);
    CHECK_STR(usercode_part_name(USERCODE_IN_BODY), "body");
    return unit_finish();
}
