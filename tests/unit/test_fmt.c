#include "lib/fmt.h"
#include "unit.h"

int main(void)
{
    char b[64];
    fmt(b, sizeof b, "%s=%u %d %x %llu %lld", "k", 42u, -7, 0xbeefu, 18446744073709551615ull, -9000000000ll);
    CHECK_STR(b, "k=42 -7 beef 18446744073709551615 -9000000000");
    fmt(b, sizeof b, "[%5u|%-5u|%05u|%c|%%]", 42u, 42u, 42u, 'z');
    CHECK_STR(b, "[   42|42   |00042|z|%]");
    fmt(b, sizeof b, "%.*s|%.2s", 3, "abcdef", "xyz");
    CHECK_STR(b, "abc|xy");
    /* truncation keeps the buffer terminated and reports the full length */
    CHECK(fmt(b, 4, "%s", "abcdef") == 6);
    CHECK_STR(b, "abc");
    const char *volatile null_string = 0; /* hidden from the format checker */
    fmt(b, sizeof b, "%s", null_string);
    CHECK_STR(b, "(null)");
    char d[24];
    CHECK(fmt_u64(d, 0) == 1);
    CHECK_STR(d, "0");
    return unit_finish();
}
