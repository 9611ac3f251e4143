/* Base45 against RFC 9285's examples (section 4.3 and 4.4). With `stdin`:
 * encodes standard input to standard output, for tests/test_encoders.py to
 * compare with an independent implementation (the base45 package). */
#include "lib/base45.h"
#include "unit.h"

static void check(const char *bytes, const char *want)
{
    char out[64];
    size_t n = base45_encode((const uint8_t *)bytes, strlen(bytes), out);
    out[n] = 0;
    CHECK(n == base45_length(strlen(bytes)));
    CHECK_STR(out, want);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "stdin") == 0) {
        size_t len;
        uint8_t *in = unit_read_stdin(&len);
        char *out = malloc(base45_length(len) + 1);
        fwrite(out, 1, base45_encode(in, len, out), stdout);
        return 0;
    }
    check("AB", "BB8");
    check("Hello!!", "%69 VD92EX0");
    check("base-45", "UJCLQE7W581");
    check("ietf!", "QED8WEX0");
    check("", "");
    uint8_t high[3] = { 0xff, 0xff, 0xff };
    char out[8];
    CHECK(base45_encode(high, 3, out) == 5 && memcmp(out, "FGWU5", 5) == 0); /* 65535 = 30 + 36*45 + 32*45^2, 255 = 30 + 5*45 */
    return unit_finish();
}
