/* The DEFLATE encoder. Without arguments: self-checks of the output's size
 * and shape. With `stdin`: compresses standard input to standard output,
 * for tests/test_encoders.py to inflate with the host's zlib. */
#include "lib/deflate.h"
#include "unit.h"

#include <stdlib.h>

static struct deflate_work work;

static size_t squeeze(const uint8_t *in, size_t len, uint8_t **out)
{
    *out = malloc(deflate_bound(len));
    return deflate_fixed(in, len, *out, &work);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "stdin") == 0) {
        size_t len;
        uint8_t *in = unit_read_stdin(&len);
        uint8_t *out;
        size_t n = squeeze(in, len, &out);
        fwrite(out, 1, n, stdout);
        return 0;
    }
    uint8_t *out;
    /* empty input: the final fixed block holding only end-of-block (03 00) */
    CHECK(squeeze((const uint8_t *)"", 0, &out) == 2 && out[0] == 0x03 && out[1] == 0x00);
    /* one literal 'a' (0x61 -> code 0x91, 8 bits) */
    size_t n = squeeze((const uint8_t *)"a", 1, &out);
    CHECK(n == 3 && out[0] == 0x4b && out[1] == 0x04 && out[2] == 0x00);
    /* a long run compresses to a few bytes (length 258 matches) */
    static uint8_t zeros[100000];
    n = squeeze(zeros, sizeof zeros, &out);
    CHECK(n < 700); /* 388 matches of 12 bits */
    /* random bytes stay within the bound */
    static uint8_t noise[70000];
    uint32_t x = 1;
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    n = squeeze(noise, sizeof noise, &out);
    CHECK(n <= deflate_bound(sizeof noise) && n > sizeof noise);
    /* repeated record-like text compresses well */
    static char text[64000];
    size_t t = 0;
    for (int i = 0; t + 100 < sizeof text; i++)
        t += (size_t)snprintf(text + t, 100, "@cr1 {\"t\":\"result\",\"seq\":%d,\"min\":%d} ~0000abcd\r\n", i, i * 7 % 1000);
    n = squeeze((const uint8_t *)text, t, &out);
    CHECK(n < t / 3);
    return unit_finish();
}
