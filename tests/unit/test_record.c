#include <stdlib.h>

#include "lib/crc32.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "unit.h"

static char out[1 << 20];
static size_t len;

static void sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    memcpy(out + len, s, n);
    len += n;
    out[len] = 0;
}

/* Checks that out holds exactly one well-framed record and returns its JSON. */
static int frame_ok(const char *line, char *json)
{
    size_t n = strlen(line);
    if (strncmp(line, WIRE_MARKER, strlen(WIRE_MARKER)) != 0 || n < 20 || strcmp(line + n - 2, WIRE_EOL) != 0)
        return 0;
    const char *tilde = line + n - 2 - WIRE_CRC_DIGITS - 2;
    if (strncmp(tilde, WIRE_CRC_SEP, 2) != 0)
        return 0;
    size_t jn = (size_t)(tilde - line) - strlen(WIRE_MARKER);
    memcpy(json, line + strlen(WIRE_MARKER), jn);
    json[jn] = 0;
    char want[16];
    snprintf(want, sizeof want, "%08x", crc32(json, jn));
    return strncmp(tilde + 2, want, 8) == 0;
}

int main(void)
{
    struct rec_writer w;
    rec_writer_init(&w, sink, 0);
    rec_attach(&w);
    char json[1 << 20];

    /* the protocol's example, byte for byte */
    rec_begin(REC_HELLO);
    rec_u64("proto", 1);
    rec_str("kernel", "0.1.0");
    rec_str("cmdline", "suite=quick exit=qemu");
    rec_end();
    CHECK_STR(out, "@cr1 {\"t\":\"hello\",\"seq\":0,\"proto\":1,\"kernel\":\"0.1.0\",\"cmdline\":\"suite=quick exit=qemu\"}"
                   " ~22317d96\r\n");
    CHECK(rec_count() == 1);

    /* escapes: quote, backslash, control and non-ASCII bytes */
    len = 0;
    rec_begin("t");
    rec_str("s", "a\"b\\c\n\x01\xe9");
    rec_i64("neg", -42);
    rec_u64("big", 18446744073709551615ull);
    rec_end();
    CHECK(frame_ok(out, json));
    CHECK_STR(json, "{\"t\":\"t\",\"seq\":1,\"s\":\"a\\\"b\\\\c\\u000a\\u0001\\u00e9\",\"neg\":-42,"
                    "\"big\":18446744073709551615}");

    /* nesting, and containers closed by rec_end when left open */
    len = 0;
    rec_begin("n");
    rec_obj_begin("o");
    rec_arr_begin("a");
    rec_u64(0, 1);
    rec_obj_begin(0);
    rec_bool("x", 0);
    rec_obj_end();
    rec_arr_end();
    rec_null("z");
    rec_end(); /* "o" still open */
    CHECK(frame_ok(out, json));
    CHECK_STR(json, "{\"t\":\"n\",\"seq\":2,\"o\":{\"a\":[1,{\"x\":false}],\"z\":null}}");

    /* an aborted record: a bare line end, its seq consumed */
    len = 0;
    rec_begin("partial");
    rec_u64("x", 1);
    rec_abort();
    CHECK(!rec_is_open());
    rec_begin("after");
    rec_end();
    static const char partial[] = "@cr1 {\"t\":\"partial\",\"seq\":3,\"x\":1\r\n";
    CHECK(strncmp(out, partial, sizeof partial - 1) == 0);
    CHECK(strstr(out, "\"t\":\"after\",\"seq\":4}") != 0);

    /* a long record (raw samples) streams without a buffer limit */
    len = 0;
    rec_begin("result");
    rec_arr_begin("samples");
    for (int i = 0; i < 100000; i++)
        rec_u64(0, (uint64_t)i * 7919);
    rec_arr_end();
    rec_end();
    CHECK(len > 500000);
    CHECK(frame_ok(out, json));
    return unit_finish();
}
