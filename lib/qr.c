#include "lib/qr.h"

/* ISO/IEC 18004 tables for level M, by version (index 0 = version 1):
 * error-correction codewords per block, and the number of blocks. The data
 * codewords follow from the version's total (counted from the drawn
 * function patterns): blocks differ by at most one data codeword, the
 * shorter ones first. */
static const uint8_t ec_per_block_m[QR_VERSION_MAX] = {
    10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
    26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
};
static const uint8_t blocks_m[QR_VERSION_MAX] = {
    1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
    17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
};

static const char alnum_set[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

static int alnum_value(char c)
{
    for (int i = 0; alnum_set[i]; i++)
        if (alnum_set[i] == c)
            return i;
    return -1;
}

bool qr_is_alnum(char c) { return c != 0 && alnum_value(c) >= 0; }

/* --- GF(256) and Reed-Solomon --------------------------------------------- */

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;
    while (b) { /* shift-and-add, reducing by the field polynomial 0x11D */
        if (b & 1)
            r ^= a;
        a = (uint8_t)((a << 1) ^ (a & 0x80 ? 0x1d : 0));
        b >>= 1;
    }
    return r;
}

void qr_reed_solomon(const uint8_t *data, size_t len, uint8_t *ec, int ec_len)
{
    /* The generator's coefficients, highest power implicit (monic):
     * gen[0] is x^(ec_len-1)'s, gen[ec_len-1] the constant. */
    uint8_t gen[32] = { 0 };
    gen[ec_len - 1] = 1;
    uint8_t root = 1;
    for (int i = 0; i < ec_len; i++) { /* multiply by (x - root), root = 2^i */
        for (int j = 0; j < ec_len; j++) {
            gen[j] = gf_mul(gen[j], root);
            if (j + 1 < ec_len)
                gen[j] ^= gen[j + 1];
        }
        root = gf_mul(root, 2);
    }
    for (int j = 0; j < ec_len; j++)
        ec[j] = 0;
    for (size_t i = 0; i < len; i++) { /* long division, one data byte at a time */
        uint8_t factor = data[i] ^ ec[0];
        for (int j = 0; j + 1 < ec_len; j++)
            ec[j] = ec[j + 1] ^ gf_mul(gen[j], factor);
        ec[ec_len - 1] = gf_mul(gen[ec_len - 1], factor);
    }
}

/* --- function patterns ---------------------------------------------------- */

static void set_function(struct qr_code *qr, int x, int y, bool dark)
{
    qr->dark[y * qr->size + x] = dark;
    qr->function[y * qr->size + x] = 1;
}

static void draw_finder(struct qr_code *qr, int cx, int cy)
{
    /* 7x7 rings (dark, light, dark 3x3 core) plus the light separator */
    for (int dy = -4; dy <= 4; dy++)
        for (int dx = -4; dx <= 4; dx++) {
            int x = cx + dx, y = cy + dy;
            if (x < 0 || y < 0 || x >= qr->size || y >= qr->size)
                continue;
            int ring = (dx < 0 ? -dx : dx) > (dy < 0 ? -dy : dy) ? (dx < 0 ? -dx : dx) : (dy < 0 ? -dy : dy);
            set_function(qr, x, y, ring != 2 && ring != 4);
        }
}

static void draw_alignment(struct qr_code *qr, int cx, int cy)
{
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            int ring = (dx < 0 ? -dx : dx) > (dy < 0 ? -dy : dy) ? (dx < 0 ? -dx : dx) : (dy < 0 ? -dy : dy);
            set_function(qr, cx + dx, cy + dy, ring != 1);
        }
}

/* Centre coordinates of the alignment patterns (the same list for rows and
 * columns): 6, then evenly spaced (an even step) ending at size - 7. */
static int alignment_positions(int version, int *pos)
{
    if (version == 1)
        return 0;
    int n = version / 7 + 2;
    int step = version == 32 ? 26 : (version * 4 + n * 2 + 1) / (n * 2 - 2) * 2;
    pos[0] = 6;
    for (int i = n - 1, p = qr_size(version) - 7; i >= 1; i--, p -= step)
        pos[i] = p;
    return n;
}

/* The 15 format bits: level M (00) and the mask, BCH(15,5), then masked. */
static uint32_t format_bits(int mask)
{
    uint32_t data = (0u << 3) | (uint32_t)mask, rem = data;
    for (int i = 0; i < 10; i++)
        rem = (rem << 1) ^ ((rem >> 9) * 0x537);
    return ((data << 10) | rem) ^ 0x5412;
}

static void draw_format(struct qr_code *qr, int mask)
{
    uint32_t bits = format_bits(mask);
    int n = qr->size;
    for (int i = 0; i < 15; i++) {
        bool b = bits >> i & 1;
        /* first copy around the top-left finder */
        if (i < 6)
            set_function(qr, 8, i, b);
        else if (i < 8)
            set_function(qr, 8, i + 1, b); /* skips the timing row */
        else if (i == 8)
            set_function(qr, 7, 8, b);
        else
            set_function(qr, 14 - i, 8, b);
        /* second copy: below the top-right finder, beside the bottom-left */
        if (i < 8)
            set_function(qr, n - 1 - i, 8, b);
        else
            set_function(qr, 8, n - 15 + i, b);
    }
    set_function(qr, 8, n - 8, true); /* the dark module */
}

static void draw_version(struct qr_code *qr)
{
    if (qr->version < 7)
        return;
    uint32_t rem = (uint32_t)qr->version;
    for (int i = 0; i < 12; i++)
        rem = (rem << 1) ^ ((rem >> 11) * 0x1f25);
    uint32_t bits = (uint32_t)qr->version << 12 | rem;
    for (int i = 0; i < 18; i++) {
        bool b = bits >> i & 1;
        int a = qr->size - 11 + i % 3, c = i / 3;
        set_function(qr, a, c, b);
        set_function(qr, c, a, b);
    }
}

static void draw_function_patterns(struct qr_code *qr)
{
    int n = qr->size;
    for (int i = 0; i < n * n; i++)
        qr->dark[i] = qr->function[i] = 0;
    for (int i = 0; i < n; i++) {
        set_function(qr, 6, i, i % 2 == 0);
        set_function(qr, i, 6, i % 2 == 0);
    }
    draw_finder(qr, 3, 3);
    draw_finder(qr, n - 4, 3);
    draw_finder(qr, 3, n - 4);
    int pos[7];
    int na = alignment_positions(qr->version, pos);
    for (int i = 0; i < na; i++)
        for (int j = 0; j < na; j++) {
            bool on_finder = (i == 0 && j == 0) || (i == 0 && j == na - 1) || (i == na - 1 && j == 0);
            if (!on_finder)
                draw_alignment(qr, pos[i], pos[j]);
        }
    draw_format(qr, 0); /* reserves the format areas; rewritten with the real mask */
    draw_version(qr);
}

static int data_modules(const struct qr_code *qr)
{
    int free_modules = 0;
    for (int i = 0; i < qr->size * qr->size; i++)
        free_modules += !qr->function[i];
    return free_modules;
}

/* --- capacity -------------------------------------------------------------- */

static struct qr_code scratch_for_capacity; /* only the function map is used */

static int total_codewords(int version)
{
    static int cache[QR_VERSION_MAX + 1];
    if (!cache[version]) {
        struct qr_code *qr = &scratch_for_capacity;
        qr->version = version;
        qr->size = qr_size(version);
        draw_function_patterns(qr);
        cache[version] = data_modules(qr) / 8; /* the leftover 0-7 are remainder bits */
    }
    return cache[version];
}

static int data_codewords(int version)
{
    return total_codewords(version) - ec_per_block_m[version - 1] * blocks_m[version - 1];
}

static int count_bits(int version) { return version <= 9 ? 9 : version <= 26 ? 11 : 13; }

size_t qr_alnum_capacity(int version)
{
    if (version < 1 || version > QR_VERSION_MAX)
        return 0;
    int bits = data_codewords(version) * 8 - 4 - count_bits(version);
    return (size_t)(bits / 11 * 2 + (bits % 11 >= 6));
}

int qr_fit_version(size_t len, int max_version)
{
    for (int v = 1; v <= max_version && v <= QR_VERSION_MAX; v++)
        if (qr_alnum_capacity(v) >= len)
            return v;
    return 0;
}

/* --- data, error correction, placement, masking ---------------------------- */

struct bit_writer {
    uint8_t *buf;
    int bits;
};

static void put_bits(struct bit_writer *w, uint32_t value, int n)
{
    for (int i = n - 1; i >= 0; i--, w->bits++) {
        if (w->bits % 8 == 0)
            w->buf[w->bits / 8] = 0;
        if (value >> i & 1)
            w->buf[w->bits / 8] |= (uint8_t)(0x80 >> (w->bits % 8));
    }
}

static void interleave(struct qr_code *qr, int ndata)
{
    int nblocks = blocks_m[qr->version - 1], ec_len = ec_per_block_m[qr->version - 1];
    int short_len = ndata / nblocks, nlong = ndata % nblocks, nshort = nblocks - nlong;
    uint8_t ec[QR_CODEWORDS_MAX];
    int out = 0;
    for (int i = 0; i <= short_len; i++) /* data: column by column across the blocks */
        for (int b = 0, start = 0; b < nblocks; start += short_len + (b >= nshort), b++)
            if (i < short_len + (b >= nshort))
                qr->stream[out++] = qr->data[start + i];
    for (int b = 0, start = 0; b < nblocks; start += short_len + (b >= nshort), b++)
        qr_reed_solomon(qr->data + start, (size_t)(short_len + (b >= nshort)), ec + b * ec_len, ec_len);
    for (int i = 0; i < ec_len; i++)
        for (int b = 0; b < nblocks; b++)
            qr->stream[out++] = ec[b * ec_len + i];
}

/* The zigzag: two-module columns from the right, upwards then downwards,
 * skipping the vertical timing pattern; bits MSB first. */
static void place_stream(struct qr_code *qr, int ncodewords)
{
    int n = qr->size, bit = 0;
    for (int right = n - 1; right >= 1; right -= 2) {
        if (right == 6)
            right = 5;
        bool upward = ((n - 1 - right) / 2) % 2 == 0;
        if (right < 6)
            upward = ((n - 2 - right) / 2) % 2 == 0;
        for (int k = 0; k < n; k++) {
            int y = upward ? n - 1 - k : k;
            for (int dx = 0; dx < 2; dx++) {
                int x = right - dx;
                if (qr->function[y * n + x])
                    continue;
                bool b = bit < ncodewords * 8 && (qr->stream[bit / 8] >> (7 - bit % 8) & 1);
                qr->dark[y * n + x] = b;
                bit++;
            }
        }
    }
}

static bool mask_bit(int mask, int x, int y)
{
    switch (mask) {
    case 0: return (x + y) % 2 == 0;
    case 1: return y % 2 == 0;
    case 2: return x % 3 == 0;
    case 3: return (x + y) % 3 == 0;
    case 4: return (y / 2 + x / 3) % 2 == 0;
    case 5: return (x * y) % 2 + (x * y) % 3 == 0;
    case 6: return ((x * y) % 2 + (x * y) % 3) % 2 == 0;
    default: return ((x + y) % 2 + (x * y) % 3) % 2 == 0;
    }
}

static void apply_mask(struct qr_code *qr, int mask)
{
    int n = qr->size;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            if (!qr->function[y * n + x] && mask_bit(mask, x, y))
                qr->dark[y * n + x] ^= 1;
}

/* The module at step k along row (or column) `line`, light outside the code. */
static int line_module(const struct qr_code *qr, bool columns, int line, int k)
{
    if (k < 0 || k >= qr->size)
        return 0;
    return columns ? qr->dark[k * qr->size + line] : qr->dark[line * qr->size + k];
}

/* The standard's penalty score: long runs, 2x2 blocks, finder look-alikes,
 * and an unbalanced share of dark modules. */
static long penalty(const struct qr_code *qr)
{
    int n = qr->size;
    long score = 0;
    static const uint8_t finder_like[11] = { 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0 };
    for (int pass = 0; pass < 2; pass++) {
        bool columns = pass == 1;
        for (int line = 0; line < n; line++) {
            int run = 1;
            for (int k = 1; k <= n; k++) {
                if (k < n && line_module(qr, columns, line, k) == line_module(qr, columns, line, k - 1)) {
                    run++;
                    continue;
                }
                if (run >= 5)
                    score += 3 + (run - 5);
                run = 1;
            }
            for (int k = -4; k < n; k++) { /* 1011101 with four light modules after, or before */
                bool fwd = true, back = true;
                for (int j = 0; j < 11; j++) {
                    fwd &= line_module(qr, columns, line, k + j) == finder_like[j];
                    back &= line_module(qr, columns, line, k + j) == finder_like[10 - j];
                }
                score += 40 * (fwd + back);
            }
        }
    }
    int dark = 0;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            uint8_t c = qr->dark[y * n + x];
            dark += c;
            if (x + 1 < n && y + 1 < n && c == qr->dark[y * n + x + 1] && c == qr->dark[(y + 1) * n + x] &&
                c == qr->dark[(y + 1) * n + x + 1])
                score += 3;
        }
    int percent = dark * 100 / (n * n);
    int off = percent < 50 ? 50 - percent : percent - 50;
    return score + off / 5 * 10;
}

bool qr_encode_alnum(struct qr_code *qr, const char *text, size_t len, int version)
{
    if (version < 1 || version > QR_VERSION_MAX || len > qr_alnum_capacity(version))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!qr_is_alnum(text[i]))
            return false;
    int ndata = data_codewords(version);
    struct bit_writer w = { qr->data, 0 };
    put_bits(&w, 0x2, 4); /* alphanumeric mode */
    put_bits(&w, (uint32_t)len, count_bits(version));
    for (size_t i = 0; i + 1 < len; i += 2)
        put_bits(&w, (uint32_t)(alnum_value(text[i]) * 45 + alnum_value(text[i + 1])), 11);
    if (len % 2)
        put_bits(&w, (uint32_t)alnum_value(text[len - 1]), 6);
    int room = ndata * 8 - w.bits;
    put_bits(&w, 0, room < 4 ? room : 4); /* terminator */
    if (w.bits % 8)
        put_bits(&w, 0, 8 - w.bits % 8);
    for (int pad = 0; w.bits < ndata * 8; pad ^= 1)
        put_bits(&w, pad ? 0x11 : 0xec, 8);

    qr->version = version;
    qr->size = qr_size(version);
    draw_function_patterns(qr);
    interleave(qr, ndata);
    place_stream(qr, total_codewords(version));

    long best = -1;
    for (int mask = 0; mask < 8; mask++) {
        apply_mask(qr, mask);
        draw_format(qr, mask);
        long p = penalty(qr);
        if (best < 0 || p < best)
            best = p, qr->mask = mask;
        apply_mask(qr, mask); /* undo: XOR again */
    }
    apply_mask(qr, qr->mask);
    draw_format(qr, qr->mask);
    return true;
}
