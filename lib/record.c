#include "lib/record.h"

#include "lib/crc32.h"
#include "lib/fmt.h"
#include "lib/wire.h"

static struct rec_writer *cur;

void rec_writer_init(struct rec_writer *w, rec_sink_fn sink, void *ctx)
{
    w->sink = sink;
    w->ctx = ctx;
    w->seq = 0;
    w->crc = CRC32_INIT;
    w->depth = 0;
}

struct rec_writer *rec_attach(struct rec_writer *w)
{
    struct rec_writer *prev = cur;
    cur = w;
    return prev;
}

struct rec_writer *rec_current(void) { return cur; }

static size_t cstrlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* Raw frame bytes: not part of the JSON, not checksummed. */
static void frame(const char *s)
{
    cur->sink(cur->ctx, s, cstrlen(s));
}

/* JSON bytes: sent and checksummed. */
static void json(const char *s, size_t n)
{
    cur->crc = crc32_update(cur->crc, s, n);
    cur->sink(cur->ctx, s, n);
}

static void json_cstr(const char *s) { json(s, cstrlen(s)); }

static void json_string(const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    json("\"", 1);
    size_t run = 0; /* emit runs of plain characters in one sink call */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
        if (plain) {
            run++;
            continue;
        }
        json(s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') {
            char esc[2] = { '\\', (char)c };
            json(esc, 2);
        } else {
            char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            json(esc, 6);
        }
    }
    json(s + n - run, run);
    json("\"", 1);
}

/* Comma and key before a value in the current container. */
static void member(const char *key)
{
    if (cur->need_comma[cur->depth])
        json(",", 1);
    cur->need_comma[cur->depth] = true;
    if (key) {
        json_string(key, cstrlen(key));
        json(":", 1);
    }
}

void rec_begin(const char *type)
{
    if (cur->depth)
        rec_abort();
    frame(WIRE_MARKER);
    cur->crc = CRC32_INIT;
    cur->depth = 1;
    cur->need_comma[1] = false;
    cur->closer[1] = '}';
    json("{", 1);
    rec_str("t", type);
    rec_u64("seq", cur->seq);
}

void rec_end(void)
{
    /* close anything left open (the record itself included) */
    while (cur->depth > 0) {
        json(&cur->closer[cur->depth], 1);
        cur->depth--;
    }
    char tail[sizeof(WIRE_CRC_SEP) + WIRE_CRC_DIGITS + sizeof(WIRE_EOL)];
    static const char hex[] = "0123456789abcdef";
    uint32_t crc = crc32_final(cur->crc);
    size_t n = 0;
    for (const char *p = WIRE_CRC_SEP; *p; p++)
        tail[n++] = *p;
    for (int i = WIRE_CRC_DIGITS - 1; i >= 0; i--)
        tail[n++] = hex[(crc >> (4 * i)) & 15];
    for (const char *p = WIRE_EOL; *p; p++)
        tail[n++] = *p;
    tail[n] = 0;
    frame(tail);
    cur->seq++;
}

void rec_abort(void)
{
    if (!cur || !cur->depth)
        return;
    frame(WIRE_EOL);
    cur->depth = 0;
    cur->seq++;
}

bool rec_is_open(void) { return cur && cur->depth > 0; }
uint32_t rec_count(void) { return cur ? cur->seq : 0; }

void rec_strn(const char *key, const char *value, size_t n)
{
    member(key);
    json_string(value, n);
}

void rec_str(const char *key, const char *value)
{
    if (!value) {
        rec_null(key);
        return;
    }
    rec_strn(key, value, cstrlen(value));
}

void rec_u64(const char *key, uint64_t value)
{
    char buf[24];
    member(key);
    json(buf, fmt_u64(buf, value));
}

void rec_i64(const char *key, int64_t value)
{
    char buf[24];
    member(key);
    if (value < 0) {
        json("-", 1);
        json(buf, fmt_u64(buf, -(uint64_t)value));
    } else {
        json(buf, fmt_u64(buf, (uint64_t)value));
    }
}

void rec_bool(const char *key, bool value)
{
    member(key);
    json_cstr(value ? "true" : "false");
}

void rec_null(const char *key)
{
    member(key);
    json_cstr("null");
}

/* Callers nest at most REC_MAX_DEPTH deep (records are flat by design). */
static void open_container(const char *key, char open, char close)
{
    if (cur->depth >= REC_MAX_DEPTH)
        return;
    member(key);
    json(&open, 1);
    cur->depth++;
    cur->need_comma[cur->depth] = false;
    cur->closer[cur->depth] = close;
}

void rec_obj_begin(const char *key) { open_container(key, '{', '}'); }
void rec_arr_begin(const char *key) { open_container(key, '[', ']'); }

static void close_container(void)
{
    if (cur->depth <= 1)
        return;
    json(&cur->closer[cur->depth], 1);
    cur->depth--;
}

void rec_obj_end(void) { close_container(); }
void rec_arr_end(void) { close_container(); }
