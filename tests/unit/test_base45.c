/* Base45 against RFC 9285's examples (section 4.3 and 4.4). */
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

int main(void)
{
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
