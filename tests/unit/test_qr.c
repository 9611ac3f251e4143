/* The QR encoder: Reed-Solomon against the standard's worked example, the
 * capacity table, and (with arguments) a code written as a PBM image for
 * tests/test_encoders.py to decode with zxing-cpp:
 *     test_qr pbm VERSION TEXT > code.pbm
 *     test_qr capacity VERSION      (characters it holds) */
#include "lib/qr.h"
#include "unit.h"

#include <stdlib.h>

static struct qr_code code;

/* One module = `scale` pixels, with the standard's 4-module quiet zone. */
static int write_pbm(const char *text, int version, int scale)
{
    if (!qr_encode_alnum(&code, text, strlen(text), version))
        return 2;
    int side = (code.size + 2 * QR_QUIET_ZONE) * scale;
    printf("P1\n%d %d\n", side, side);
    for (int py = 0; py < side; py++) {
        for (int px = 0; px < side; px++) {
            int x = px / scale - QR_QUIET_ZONE, y = py / scale - QR_QUIET_ZONE;
            bool dark = x >= 0 && y >= 0 && x < code.size && y < code.size && qr_module(&code, x, y);
            putchar(dark ? '1' : '0');
        }
        putchar('\n');
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "pbm") == 0)
        return write_pbm(argv[3], atoi(argv[2]), 3);
    if (argc == 3 && strcmp(argv[1], "capacity") == 0) {
        printf("%u\n", (unsigned)qr_alnum_capacity(atoi(argv[2])));
        return 0;
    }

    /* ISO/IEC 18004 Annex I: "01234567" as 1-M, its 16 data codewords and
     * the 10 error-correction codewords the standard lists. */
    static const uint8_t data[16] = { 0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11,
                                      0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11 };
    static const uint8_t want[10] = { 0xa5, 0x24, 0xd4, 0xc1, 0xed, 0x36, 0xc7, 0x87, 0x2c, 0x55 };
    uint8_t ec[10];
    qr_reed_solomon(data, sizeof data, ec, 10);
    CHECK(memcmp(ec, want, sizeof want) == 0);

    /* Alphanumeric capacities at level M (the standard's Table 7). */
    CHECK(qr_alnum_capacity(1) == 20);
    CHECK(qr_alnum_capacity(7) == 178);
    CHECK(qr_alnum_capacity(10) == 311);
    CHECK(qr_alnum_capacity(40) == 3391);
    CHECK(qr_fit_version(20, 40) == 1 && qr_fit_version(21, 40) == 2 && qr_fit_version(3392, 40) == 0);

    CHECK(qr_is_alnum('Z') && qr_is_alnum(':') && !qr_is_alnum('a') && !qr_is_alnum(0));
    CHECK(!qr_encode_alnum(&code, "lower", 5, 1));
    CHECK(qr_encode_alnum(&code, "HELLO WORLD", 11, 1) && code.size == 21);
    /* the three finders' dark corners and the always-dark module */
    CHECK(qr_module(&code, 0, 0) && qr_module(&code, 20, 0) && qr_module(&code, 0, 20) && qr_module(&code, 8, 13));
    CHECK(qr_encode_alnum(&code, "CR1/0/1/2/3", 11, 40) && code.size == 177);
    return unit_finish();
}
