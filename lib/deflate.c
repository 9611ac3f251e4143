#include "lib/deflate.h"

#define MIN_MATCH 3
#define MAX_MATCH 258

struct bit_out {
    uint8_t *out;
    size_t n;      /* whole bytes written */
    uint32_t acc;  /* pending bits, the first at bit 0 */
    int nacc;
};

/* DEFLATE packs data elements starting at each byte's least significant bit. */
static void put_bits(struct bit_out *b, uint32_t value, int count)
{
    b->acc |= value << b->nacc;
    b->nacc += count;
    while (b->nacc >= 8) {
        b->out[b->n++] = (uint8_t)b->acc;
        b->acc >>= 8;
        b->nacc -= 8;
    }
}

/* Huffman codes go most significant bit first: reverse them. */
static void put_code(struct bit_out *b, uint32_t code, int length)
{
    uint32_t rev = 0;
    for (int i = 0; i < length; i++)
        rev |= ((code >> i) & 1) << (length - 1 - i);
    put_bits(b, rev, length);
}

/* The fixed literal/length code (RFC 1951 3.2.6). */
static void put_symbol(struct bit_out *b, int sym)
{
    if (sym < 144)
        put_code(b, 0x30 + (uint32_t)sym, 8);
    else if (sym < 256)
        put_code(b, 0x190 + (uint32_t)(sym - 144), 9);
    else if (sym < 280)
        put_code(b, (uint32_t)(sym - 256), 7);
    else
        put_code(b, 0xc0 + (uint32_t)(sym - 280), 8);
}

/* Length codes 257-285 and distance codes 0-29: each covers a range that
 * starts at a base and spans 2^extra values; the extra bits doubles every
 * four codes (length) or two codes (distance). */
static void put_length(struct bit_out *b, uint32_t len)
{
    if (len == MAX_MATCH) {
        put_symbol(b, 285);
        return;
    }
    uint32_t base = 3;
    for (int i = 0; i < 28; i++) {
        int extra = i < 8 ? 0 : (i - 4) / 4;
        if (len < base + (1u << extra)) {
            put_symbol(b, 257 + i);
            put_bits(b, len - base, extra);
            return;
        }
        base += 1u << extra;
    }
}

static void put_distance(struct bit_out *b, uint32_t dist)
{
    uint32_t base = 1;
    for (int i = 0; i < 30; i++) {
        int extra = i < 4 ? 0 : (i - 2) / 2;
        if (dist < base + (1u << extra)) {
            put_code(b, (uint32_t)i, 5);
            put_bits(b, dist - base, extra);
            return;
        }
        base += 1u << extra;
    }
}

static uint32_t hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - DEFLATE_HASH_BITS);
}

static void insert(struct deflate_work *w, const uint8_t *in, size_t pos)
{
    uint32_t h = hash3(in + pos);
    w->prev[pos % DEFLATE_WINDOW] = w->head[h];
    w->head[h] = (uint32_t)pos + 1;
}

size_t deflate_fixed(const uint8_t *in, size_t len, uint8_t *out, struct deflate_work *w)
{
    struct bit_out b = { out, 0, 0, 0 };
    for (uint32_t i = 0; i < (1u << DEFLATE_HASH_BITS); i++)
        w->head[i] = 0;
    put_bits(&b, 1, 1); /* BFINAL */
    put_bits(&b, 1, 2); /* BTYPE 01: fixed Huffman codes */
    size_t pos = 0;
    while (pos < len) {
        uint32_t best_len = 0, best_dist = 0;
        if (pos + MIN_MATCH <= len) {
            size_t limit = len - pos < MAX_MATCH ? len - pos : MAX_MATCH;
            uint32_t cand = w->head[hash3(in + pos)];
            for (int tries = 0; cand && tries < DEFLATE_CHAIN; tries++) {
                size_t at = cand - 1;
                if (pos - at > DEFLATE_WINDOW)
                    break;
                size_t k = 0;
                while (k < limit && in[at + k] == in[pos + k])
                    k++;
                if (k > best_len) {
                    best_len = (uint32_t)k, best_dist = (uint32_t)(pos - at);
                    if (k == limit)
                        break;
                }
                uint32_t next = w->prev[at % DEFLATE_WINDOW];
                if (next >= cand) /* the slot was reused by a newer position: the chain ends */
                    break;
                cand = next;
            }
        }
        if (best_len >= MIN_MATCH) {
            put_length(&b, best_len);
            put_distance(&b, best_dist);
            for (size_t end = pos + best_len; pos < end; pos++)
                if (pos + MIN_MATCH <= len)
                    insert(w, in, pos);
        } else {
            put_symbol(&b, in[pos]);
            if (pos + MIN_MATCH <= len)
                insert(w, in, pos);
            pos++;
        }
    }
    put_symbol(&b, 256); /* end of block */
    if (b.nacc)
        put_bits(&b, 0, 8 - b.nacc);
    return b.n;
}
