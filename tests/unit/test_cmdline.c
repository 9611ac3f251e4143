#include "lib/cmdline.h"
#include "unit.h"

static const char *const names[] = { "tsc", "ctxsw", "workset" };
static const struct name_list nl = { names, 3 };

static int nerr;
static char last_token[256], last_msg[256], last_accepted[1024];

static void on_error(void *ctx, const char *token, const char *msg, const char *accepted)
{
    (void)ctx;
    nerr++;
    snprintf(last_token, sizeof last_token, "%s", token);
    snprintf(last_msg, sizeof last_msg, "%s", msg);
    snprintf(last_accepted, sizeof last_accepted, "%s", accepted);
}

static int parse(const char *line, struct config *cfg)
{
    nerr = 0;
    last_token[0] = last_msg[0] = last_accepted[0] = 0;
    return cmdline_parse(line, cfg, &nl, on_error, 0);
}

int main(void)
{
    struct config c;

    /* defaults, and the loader's path token skipped */
    CHECK(parse("/boot/cleanroom.elf", &c) == 0);
    CHECK(c.suite == SUITE_QUICK && c.exit == EXIT_AUTO && c.console == CONSOLE_BOTH && c.runs == 11);
    CHECK(parse("", &c) == 0);
    CHECK(parse(0, &c) == 0);

    /* every key accepted */
    CHECK(parse("k suite=selftest bench=workset,tsc exit=halt console=vga paging=on pagesize=4m runs=100000 "
                "warmup=0 reps=5 sizes=0,1,3K,24M,2G maxsize=512k fill=sse raw=1",
                &c) == 0);
    CHECK(c.suite == SUITE_SELFTEST && c.nbenches == 2 && c.benches[0] == 2 && c.benches[1] == 0);
    CHECK(c.exit == EXIT_HALT && c.console == CONSOLE_VGA && c.paging == PAGING_ON && c.pagesize == PAGESIZE_4M);
    CHECK(c.runs == 100000 && c.warmup == 0 && c.reps == 5 && c.fill == FILL_SSE && c.raw == 1);
    CHECK(c.nsizes == 5 && c.sizes[0] == 0 && c.sizes[1] == 1 && c.sizes[2] == 3072 &&
          c.sizes[3] == 24u << 20 && c.sizes[4] == 2ull << 30);
    CHECK(c.maxsize == 512 * 1024);
    CHECK(c.given[KEY_SIZES] && c.given[KEY_RAW] && !c.given[KEY_PROVOKE]);

    /* serial=: a named choice or an I/O port in hex; the error lists both forms */
    CHECK(parse("x", &c) == 0 && c.serial == SERIAL_AUTO);
    CHECK(parse("x serial=com2", &c) == 0 && c.serial == SERIAL_COM2 && c.given[KEY_SERIAL]);
    CHECK(parse("x serial=pci", &c) == 0 && c.serial == SERIAL_PCI);
    CHECK(parse("x serial=none", &c) == 0 && c.serial == SERIAL_NONE);
    CHECK(parse("x serial=0x2F8", &c) == 0 && c.serial == 0x2f8);
    CHECK_STR(config_value_name(&c, KEY_SERIAL), "0x2f8");
    CHECK(parse("x serial=0xc050", &c) == 0 && c.serial == 0xc050);
    CHECK_STR(config_value_name(&c, KEY_SERIAL), "0xc050");
    CHECK(parse("x serial=com2", &c) == 0);
    CHECK_STR(config_value_name(&c, KEY_SERIAL), "com2");
    CHECK(parse("x serial=com5", &c) == 1 && c.serial == SERIAL_AUTO);
    CHECK_STR(last_msg, "bad value");
    CHECK(strstr(last_accepted, "auto|com1|com2|com3|com4|pci|none|0xPORT") != 0);
    CHECK(parse("x serial=0x80", &c) == 1);
    CHECK_STR(last_msg, "port out of range");
    CHECK(parse("x serial=0x12345", &c) == 1 && parse("x serial=0xg00", &c) == 1 && parse("x serial=0x", &c) == 1);

    /* tabs and repeated blanks separate tokens */
    CHECK(parse("  suite=all\t\trruns=3  ", &c) == 1);
    CHECK_STR(last_token, "rruns=3");
    CHECK(parse("x  suite=all\t runs=3  ", &c) == 0 && c.runs == 3 && c.suite == SUITE_ALL);

    /* rejections: the token named, the accepted values listed */
    CHECK(parse("x foo=1", &c) == 1);
    CHECK_STR(last_token, "foo=1");
    CHECK_STR(last_msg, "unknown key");
    CHECK(strstr(last_accepted, "suite=") && strstr(last_accepted, "maxsize="));

    CHECK(parse("x suite=fast", &c) == 1);
    CHECK_STR(last_msg, "bad value");
    CHECK_STR(last_accepted, "selftest|quick|paper|all|smp");

    CHECK(parse("x runs=12x", &c) == 1);
    CHECK_STR(last_msg, "bad number");
    CHECK(strstr(last_accepted, "1 to 100000") != 0);
    CHECK(parse("x runs=0", &c) == 1);
    CHECK_STR(last_msg, "number out of range");
    CHECK(parse("x runs=100001", &c) == 1);
    CHECK(parse("x runs=99999999999999999999", &c) == 1);
    CHECK(parse("x runs=-1", &c) == 1);

    CHECK(parse("x maxsize=4T", &c) == 1);
    CHECK_STR(last_msg, "bad number or suffix");
    CHECK(parse("x maxsize=3G", &c) == 1);
    CHECK_STR(last_msg, "size out of range");
    CHECK(parse("x maxsize=K", &c) == 1);

    CHECK(parse("x sizes=", &c) == 1);
    CHECK_STR(last_msg, "empty value");
    CHECK(parse("x sizes=,", &c) == 1);
    CHECK_STR(last_msg, "empty element in list");
    CHECK(parse("x sizes=1K,,2K", &c) == 1);
    CHECK(parse("x sizes=1K,2Q", &c) == 1);
    CHECK(strstr(last_msg, "2Q") != 0);
    CHECK(c.nsizes == 0);

    CHECK(parse("x bench=tsc,nosuch", &c) == 1);
    CHECK(strstr(last_msg, "nosuch") != 0);
    CHECK(strstr(last_accepted, "tsc|ctxsw|workset") != 0);

    CHECK(parse("x raw=2", &c) == 1);
    CHECK_STR(last_accepted, "0|1");

    CHECK(parse("x suite=quick suite=paper", &c) == 1);
    CHECK_STR(last_msg, "duplicate key");
    CHECK_STR(last_token, "suite=paper");

    CHECK(parse("x raw", &c) == 1);
    CHECK_STR(last_msg, "not of the form key=value");
    CHECK(parse("x =1", &c) == 1);

    /* several bad tokens: each reported, good ones still parsed */
    CHECK(parse("x foo=1 runs=7 suite=nope bar", &c) == 3);
    CHECK(c.runs == 7);

    /* accepted-values text for each kind */
    char buf[512];
    cmdline_accepted(KEY_SIZES, &nl, buf, sizeof buf);
    CHECK(strstr(buf, "comma-separated list of sizes from 0 to 2G") != 0);
    uint64_t v;
    CHECK(cmdline_parse_size("16k", 3, &v) && v == 16384);
    CHECK(!cmdline_parse_size("", 0, &v));

    /* a suffix's multiplication is range-checked after it, never wrapped */
    CHECK(parse("x maxsize=17179869185G", &c) == 1 && c.maxsize == 24u << 20); /* (2^34+1) << 30 wraps to 1G */
    CHECK_STR(last_msg, "size out of range");
    CHECK_STR(last_token, "maxsize=17179869185G");
    CHECK(strstr(last_accepted, "from 0 to 2G bytes") != 0);
    CHECK(parse("x maxsize=4194304T", &c) == 1); /* not a suffix at all */
    CHECK(parse("x maxsize=2097153K", &c) == 1 && parse("x maxsize=2049M", &c) == 1);
    CHECK(parse("x maxsize=2097152K", &c) == 0 && c.maxsize == 2ull << 30);
    CHECK(parse("x sizes=17179869184G", &c) == 1 && c.nsizes == 0); /* 2^64: wrapped to a single size 0 */
    CHECK(strstr(last_msg, "17179869184G") && strstr(last_msg, "out of range"));
    CHECK(parse("x sizes=1K,18014398509481984M", &c) == 1 && c.nsizes == 0);
    CHECK(parse("x sizes=18446744073709551616", &c) == 1); /* 2^64 in digits */
    CHECK(parse("x sizes=99999999999999999999999999K", &c) == 1);
    CHECK(cmdline_parse_size("17179869184G", 12, &v) && v == UINT64_MAX);
    CHECK(cmdline_parse_size("17179869183G", 12, &v) && v == 17179869183ull << 30);
    CHECK(cmdline_parse_size("00000000000000000000001K", 24, &v) && v == 1024);
    CHECK(parse("x runs=18446744073709551617", &c) == 1);
    CHECK_STR(last_msg, "number out of range");

    /* a line longer than the buffer: cut before the first token it cannot
     * hold whole, never inside one; what was left out is named */
    char buf16[16];
    struct cmdline_cut cut;
    cmdline_copy(buf16, sizeof buf16, "k runs=3", &cut);
    CHECK_STR(buf16, "k runs=3");
    CHECK(cut.len == 8 && cut.kept == 8 && cut.tokens == 0 && cut.named[0] == 0);
    cmdline_copy(buf16, sizeof buf16, "k bench=tsc runs=20000", &cut); /* "runs=" ends at byte 15 */
    CHECK_STR(buf16, "k bench=tsc ");
    CHECK(cut.len == 22 && cut.kept == 12 && cut.tokens == 1);
    CHECK_STR(cut.named, "runs=20000");
    CHECK(parse(buf16, &c) == 0 && c.runs == 11); /* "runs=2" is never read */
    cmdline_copy(buf16, sizeof buf16, "k bench=tsc    runs=2 exit=qemu  ", &cut); /* cut in the blanks */
    CHECK_STR(buf16, "k bench=tsc    ");
    CHECK(cut.tokens == 2);
    CHECK_STR(cut.named, "runs=2 exit=qemu");
    cmdline_copy(buf16, sizeof buf16, "k bench=tsc    ", &cut); /* only blanks past the limit */
    CHECK(cut.len == 15 && cut.tokens == 0);
    cmdline_copy(buf16, sizeof buf16, "/a/very/long/path/to/cleanroom.elf suite=quick", &cut);
    CHECK_STR(buf16, "");
    CHECK(cut.kept == 0 && cut.tokens == 2);
    CHECK_STR(cut.named, "/a/very/long/path/to/cleanroom.elf suite=quick");
    /* a long token is named by its start; later ones while they fit */
    static char line[6000], big[4096];
    struct cmdline_cut c2;
    snprintf(line, sizeof line, "k maxsize=%05000dK", 64);
    for (int i = 0; i < 40; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " raw=%d", i);
    cmdline_copy(big, sizeof big, line, &c2);
    CHECK_STR(big, "k ");
    CHECK(c2.len == strlen(line) && c2.tokens == 41);
    CHECK(strncmp(c2.named, "maxsize=0000", 12) == 0 && strstr(c2.named, "... raw=0 raw=1 ") != 0);
    CHECK(strlen(c2.named) < sizeof c2.named && strstr(c2.named, "raw=39") == 0);
    return unit_finish();
}
