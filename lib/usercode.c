#include "lib/usercode.h"

#include "lib/string.h"

#define SNIPPET_WORDS (3 + 2 * USERCODE_VARIANTS) /* setup off/len, variants, body off/len each */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool header(const uint8_t *b, uint32_t len, uint32_t min, enum usercode_kind kind, char *name,
                   uint32_t *size, const char **why);

/* [off, off+len) within a blob of `size` bytes, without overflow. */
static bool inside(uint32_t off, uint32_t len, uint32_t size)
{
    return off <= size && len <= size - off;
}

bool usercode_snippet(const void *p, uint32_t len, struct usercode_snippet *out, const char **why)
{
    const uint8_t *b = p;
    uint32_t size;
    memset(out, 0, sizeof *out);
    if (!header(b, len, 4 * SNIPPET_WORDS, USERCODE_SNIPPET, out->name, &size, why))
        return false;
    const uint8_t *w = b + USERCODE_HEADER;
    out->setup = (struct usercode_piece){ b + rd32(w), rd32(w + 4) };
    out->nvariants = rd32(w + 8);
    if (!inside(rd32(w), out->setup.len, size)) {
        *why = "its setup runs past the blob";
        return false;
    }
    if (out->nvariants != 1 && out->nvariants != USERCODE_VARIANTS) {
        *why = "neither one body nor one per register";
        return false;
    }
    for (uint32_t v = 0; v < out->nvariants; v++) {
        uint32_t off = rd32(w + 12 + 8 * v), n = rd32(w + 16 + 8 * v);
        if (!inside(off, n, size)) {
            *why = "a body runs past the blob";
            return false;
        }
        if (n == 0) {
            *why = "an empty body";
            return false;
        }
        out->body[v] = (struct usercode_piece){ b + off, n };
    }
    return true;
}

/* The header's checks, the same for every kind: magic, version, kind, size; the name copied. */
static bool header(const uint8_t *b, uint32_t len, uint32_t min, enum usercode_kind kind, char *name,
                   uint32_t *size, const char **why)
{
    if (!b || len < USERCODE_HEADER + min) {
        *why = "shorter than its header";
        return false;
    }
    if (rd32(b) != USERCODE_MAGIC) {
        *why = "not the user's code (no CRUC magic)";
        return false;
    }
    if (rd32(b + 4) != USERCODE_VERSION) {
        *why = "a version of the user's code this kernel does not read";
        return false;
    }
    if (rd32(b + 8) != (uint32_t)kind) {
        *why = "not of this kind";
        return false;
    }
    *size = rd32(b + 12);
    if (*size > len) {
        *why = "its size runs past the module";
        return false;
    }
    for (uint32_t i = 0; i < USERCODE_NAME_MAX && b[16 + i]; i++)
        name[i] = (char)b[16 + i];
    return true;
}

/* The entries each kind needs (bit i: entry i). */
static uint32_t needed(enum usercode_kind kind) { return kind == USERCODE_SWITCH ? 1u : kind == USERCODE_LOCK ? 7u : 0; }

uint32_t usercode_kind(const void *p, uint32_t len)
{
    const uint8_t *b = p;
    return b && len >= USERCODE_HEADER && rd32(b) == USERCODE_MAGIC ? rd32(b + 8) : 0;
}

bool usercode_primitive(const void *p, uint32_t len, enum usercode_kind kind, struct usercode_primitive *out,
                        const char **why)
{
    const uint8_t *b = p;
    uint32_t size;
    memset(out, 0, sizeof *out);
    if (!header(b, len, USERCODE_AS_MAX + 4 * (3 + USERCODE_ENTRIES), kind, out->name, &size, why))
        return false;
    const uint8_t *w = b + USERCODE_HEADER;
    for (uint32_t i = 0; i < USERCODE_AS_MAX && w[i]; i++)
        out->as[i] = (char)w[i];
    w += USERCODE_AS_MAX;
    uint32_t off = rd32(w), n = rd32(w + 4);
    if (!inside(off, n, size) || n == 0) {
        *why = "its code runs past the blob, or is empty";
        return false;
    }
    out->code = (struct usercode_piece){ b + off, n };
    for (uint32_t e = 0; e < USERCODE_ENTRIES; e++) {
        out->entry[e] = rd32(w + 8 + 4 * e);
        bool has = out->entry[e] != USERCODE_NO_ENTRY;
        if (has && out->entry[e] >= n) {
            *why = "an entry point lies outside its code";
            return false;
        }
        if (!has && (needed(kind) >> e & 1)) {
            *why = kind == USERCODE_SWITCH ? "no switch routine (cr_switch)" : "no cr_lock_init, cr_lock or cr_unlock";
            return false;
        }
    }
    out->lock_size = rd32(w + 8 + 4 * USERCODE_ENTRIES);
    if (kind == USERCODE_LOCK && (out->lock_size == 0 || out->lock_size > USERCODE_LOCK_MAX)) {
        *why = "its lock's size (cr_lock_size) is 0 or over USERCODE_LOCK_MAX";
        return false;
    }
    return true;
}

static uint32_t copy_len(const struct usercode_layout *l, uint32_t k)
{
    return l->nvariants > 1 ? l->body_len[k % l->nvariants] : l->body_len[l->fixed];
}

uint32_t usercode_code_len(const struct usercode_layout *l)
{
    uint32_t n = l->setup_len;
    if (l->nvariants <= 1)
        return n + l->copies * l->body_len[l->fixed];
    for (uint32_t k = 0; k < l->copies; k++)
        n += copy_len(l, k);
    return n;
}

struct usercode_place usercode_locate(const struct usercode_layout *l, uint32_t offset)
{
    if (offset < l->setup_len)
        return (struct usercode_place){ USERCODE_IN_SETUP, 0, 0, offset };
    uint32_t at = l->setup_len;
    for (uint32_t k = 0; k < l->copies; k++) {
        uint32_t n = copy_len(l, k);
        if (offset < at + n)
            return (struct usercode_place){ USERCODE_IN_BODY, k, l->nvariants > 1 ? k % l->nvariants : l->fixed,
                                            offset - at };
        at += n;
    }
    return (struct usercode_place){ USERCODE_IN_TAIL, 0, 0, offset - at };
}

const char *usercode_part_name(enum usercode_part part)
{
    return part == USERCODE_IN_SETUP ? "setup" : part == USERCODE_IN_BODY ? "body" : "tail";
}
