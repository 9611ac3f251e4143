#include "lib/cmdline.h"

#include "lib/fmt.h"
#include "lib/string.h"

#define TOKEN_MAX 256
#define MSG_MAX 160
#define ACCEPTED_MAX 512

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static bool span_eq(const char *s, size_t n, const char *word)
{
    size_t i = 0;
    for (; i < n; i++)
        if (word[i] != s[i])
            return false;
    return word[i] == 0;
}

/* Decimal digits; a value past uint64 comes back as UINT64_MAX (no key's
 * range reaches it, so it is rejected as out of range, never wrapped). */
static bool parse_count(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
    }
    *out = v;
    return true;
}

bool cmdline_parse_size(const char *s, size_t n, uint64_t *out)
{
    unsigned shift = 0;
    if (n > 0) {
        switch (s[n - 1]) {
        case 'K': case 'k': shift = 10; break;
        case 'M': case 'm': shift = 20; break;
        case 'G': case 'g': shift = 30; break;
        }
        if (shift)
            n--;
    }
    uint64_t v;
    if (!parse_count(s, n, &v))
        return false;
    /* the suffix's multiplication checked too: the range is checked after it */
    *out = v > (UINT64_MAX >> shift) ? UINT64_MAX : v << shift;
    return true;
}

/* "0x" and 1 to 4 hex digits (an I/O port number). */
static bool parse_hex_port(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n < 3 || n > 6 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    for (size_t i = 2; i < n; i++) {
        char c = s[i];
        uint64_t d = c >= '0' && c <= '9' ? (uint64_t)(c - '0')
                   : c >= 'a' && c <= 'f' ? (uint64_t)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (uint64_t)(c - 'A' + 10) : 16;
        if (d == 16)
            return false;
        v = v * 16 + d;
    }
    *out = v;
    return true;
}

static void size_text(char *buf, size_t size, uint64_t v)
{
    if (v && v % (1u << 30) == 0)
        fmt(buf, size, "%lluG", (unsigned long long)(v >> 30));
    else if (v && v % (1u << 20) == 0)
        fmt(buf, size, "%lluM", (unsigned long long)(v >> 20));
    else if (v && v % (1u << 10) == 0)
        fmt(buf, size, "%lluK", (unsigned long long)(v >> 10));
    else
        fmt(buf, size, "%llu", (unsigned long long)v);
}

void cmdline_accepted(enum config_key key, const struct name_list *bench_names, char *buf, size_t size)
{
    const struct key_spec *k = &config_keys[key];
    char lo[24], hi[24];
    size_t len = 0;
    buf[0] = 0;
    switch (k->kind) {
    case KIND_ENUM:
    case KIND_ENUM_OR_PORT:
        for (uint32_t i = 0; k->values[i]; i++)
            len += fmt(buf + len, len < size ? size - len : 0, "%s%s", i ? "|" : "", k->values[i]);
        if (k->kind == KIND_ENUM_OR_PORT)
            fmt(buf + len, len < size ? size - len : 0, "|0xPORT (an I/O port from 0x%llx to 0x%llx)",
                (unsigned long long)k->min, (unsigned long long)k->max);
        break;
    case KIND_FLAG:
        fmt(buf, size, "0|1");
        break;
    case KIND_COUNT:
    case KIND_COUNT_OR_ALL:
        fmt(buf, size, "a whole number from %llu to %llu%s", (unsigned long long)k->min,
            (unsigned long long)k->max, k->kind == KIND_COUNT_OR_ALL ? ", or all" : "");
        break;
    case KIND_SIZE:
    case KIND_SIZE_LIST:
        size_text(lo, sizeof lo, k->min);
        size_text(hi, sizeof hi, k->max);
        fmt(buf, size, "%s from %s to %s bytes, digits with an optional K, M or G suffix (x1024)",
            k->kind == KIND_SIZE ? "a size" : "a comma-separated list of sizes", lo, hi);
        break;
    case KIND_NAME_LIST:
        len = fmt(buf, size, "a comma-separated list of: ");
        for (uint32_t i = 0; bench_names && i < bench_names->count; i++)
            len += fmt(buf + len, len < size ? size - len : 0, "%s%s", i ? "|" : "", bench_names->names[i]);
        break;
    }
}

struct parser {
    struct config *cfg;
    const struct name_list *names;
    cmdline_error_fn on_error;
    void *ctx;
    int errors;
    char token[TOKEN_MAX];
};

static void reject(struct parser *p, int key, const char *msg)
{
    char accepted[ACCEPTED_MAX];
    if (key >= 0) {
        cmdline_accepted((enum config_key)key, p->names, accepted, sizeof accepted);
    } else {
        /* an unknown key: list the keys */
        size_t len = 0;
        accepted[0] = 0;
        for (int i = 0; i < KEY_COUNT; i++)
            len += fmt(accepted + len, len < sizeof accepted ? sizeof accepted - len : 0, "%s%s=", i ? " " : "",
                       config_keys[i].name);
    }
    p->errors++;
    if (p->on_error)
        p->on_error(p->ctx, p->token, msg, accepted);
}

/* Calls item() for each comma-separated element; false on an empty element. */
static bool each_item(const char *v, size_t n, bool (*item)(struct parser *, const char *, size_t, char *),
                      struct parser *p, char *why)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && v[i] != ',')
            continue;
        if (i == start) {
            fmt(why, MSG_MAX, "empty element in list");
            return false;
        }
        if (!item(p, v + start, i - start, why))
            return false;
        start = i + 1;
    }
    return true;
}

static bool size_item(struct parser *p, const char *s, size_t n, char *why)
{
    const struct key_spec *k = &config_keys[KEY_SIZES];
    uint64_t v;
    if (!cmdline_parse_size(s, n, &v)) {
        fmt(why, MSG_MAX, "bad size '%.*s'", (int)n, s);
        return false;
    }
    if (v < k->min || v > k->max) {
        fmt(why, MSG_MAX, "size '%.*s' out of range", (int)n, s);
        return false;
    }
    if (p->cfg->nsizes >= CFG_MAX_SIZES) {
        fmt(why, MSG_MAX, "more than %d sizes", CFG_MAX_SIZES);
        return false;
    }
    p->cfg->sizes[p->cfg->nsizes++] = v;
    return true;
}

static bool name_item(struct parser *p, const char *s, size_t n, char *why)
{
    for (uint32_t i = 0; p->names && i < p->names->count; i++) {
        if (!span_eq(s, n, p->names->names[i]))
            continue;
        if (p->cfg->nbenches >= CFG_MAX_BENCHES) {
            fmt(why, MSG_MAX, "more than %d names", CFG_MAX_BENCHES);
            return false;
        }
        p->cfg->benches[p->cfg->nbenches++] = i;
        return true;
    }
    fmt(why, MSG_MAX, "unknown name '%.*s'", (int)n, s);
    return false;
}

static void parse_token(struct parser *p, const char *tok, size_t n)
{
    size_t eq = 0;
    while (eq < n && tok[eq] != '=')
        eq++;
    if (eq == n) {
        reject(p, -1, "not of the form key=value");
        return;
    }
    int key = -1;
    for (int i = 0; i < KEY_COUNT; i++)
        if (span_eq(tok, eq, config_keys[i].name))
            key = i;
    if (key < 0) {
        reject(p, -1, "unknown key");
        return;
    }
    const struct key_spec *k = &config_keys[key];
    struct config *cfg = p->cfg;
    const char *v = tok + eq + 1;
    size_t vn = n - eq - 1;
    char why[MSG_MAX];
    if (cfg->given[key]) {
        reject(p, key, "duplicate key");
        return;
    }
    if (vn == 0) {
        reject(p, key, "empty value");
        return;
    }
    uint64_t num;
    switch (k->kind) {
    case KIND_ENUM_OR_PORT:
        if (parse_hex_port(v, vn, &num)) {
            if (num < k->min || num > k->max) {
                reject(p, key, "port out of range");
                return;
            }
            *config_field_u32(cfg, (enum config_key)key) = (uint32_t)num;
            break;
        }
        /* not a port: one of the named values */
        /* fall through */
    case KIND_ENUM:
        for (uint32_t i = 0; k->values[i]; i++) {
            if (span_eq(v, vn, k->values[i])) {
                *config_field_u32(cfg, (enum config_key)key) = i;
                cfg->given[key] = true;
                return;
            }
        }
        reject(p, key, "bad value");
        return;
    case KIND_FLAG:
        if (vn != 1 || (v[0] != '0' && v[0] != '1')) {
            reject(p, key, "bad value");
            return;
        }
        *config_field_u32(cfg, (enum config_key)key) = (uint32_t)(v[0] - '0');
        break;
    case KIND_COUNT_OR_ALL:
        if (span_eq(v, vn, "all")) {
            *config_field_u32(cfg, (enum config_key)key) = 0;
            break;
        }
        /* fall through */
    case KIND_COUNT:
        if (!parse_count(v, vn, &num)) {
            reject(p, key, "bad number");
            return;
        }
        if (num < k->min || num > k->max) {
            reject(p, key, "number out of range");
            return;
        }
        *config_field_u32(cfg, (enum config_key)key) = (uint32_t)num;
        break;
    case KIND_SIZE:
        if (!cmdline_parse_size(v, vn, &num)) {
            reject(p, key, "bad number or suffix");
            return;
        }
        if (num < k->min || num > k->max) {
            reject(p, key, "size out of range");
            return;
        }
        *(uint64_t *)((char *)cfg + k->offset) = num;
        break;
    case KIND_SIZE_LIST:
        cfg->nsizes = 0;
        if (!each_item(v, vn, size_item, p, why)) {
            cfg->nsizes = 0;
            reject(p, key, why);
            return;
        }
        break;
    case KIND_NAME_LIST:
        cfg->nbenches = 0;
        if (!each_item(v, vn, name_item, p, why)) {
            cfg->nbenches = 0;
            reject(p, key, why);
            return;
        }
        break;
    }
    cfg->given[key] = true;
}

int cmdline_parse(const char *line, struct config *cfg, const struct name_list *bench_names,
                  cmdline_error_fn on_error, void *ctx)
{
    struct parser p = { cfg, bench_names, on_error, ctx, 0, { 0 } };
    bool first = true;
    config_defaults(cfg);
    while (line && *line) {
        while (is_space(*line))
            line++;
        if (!*line)
            break;
        size_t n = 0;
        bool has_eq = false;
        while (line[n] && !is_space(line[n]))
            has_eq |= line[n++] == '=';
        if (!(first && !has_eq)) {
            fmt(p.token, sizeof p.token, "%.*s", (int)n, line);
            parse_token(&p, line, n);
        }
        first = false;
        line += n;
    }
    return p.errors;
}

/* A cut token is named by at most this many characters, then "...". */
#define CUT_TOKEN_SHOWN 48

/* Appends a cut token to cut->named while it fits (the first always does). */
static void name_cut_token(struct cmdline_cut *cut, const char *tok, size_t n)
{
    size_t used = strlen(cut->named);
    bool longer = n > CUT_TOKEN_SHOWN;
    size_t shown = longer ? CUT_TOKEN_SHOWN : n;
    if (used + (used ? 1 : 0) + shown + (longer ? 3 : 0) < sizeof cut->named)
        fmt(cut->named + used, sizeof cut->named - used, "%s%.*s%s", used ? " " : "", (int)shown, tok,
            longer ? "..." : "");
}

void cmdline_copy(char *dst, size_t size, const char *src, struct cmdline_cut *cut)
{
    size_t len = 0;
    while (src[len])
        len++;
    size_t kept = len;
    if (len >= size) {
        kept = size - 1;
        /* a token the buffer cannot hold whole is left out whole */
        if (!is_space(src[kept]))
            while (kept > 0 && !is_space(src[kept - 1]))
                kept--;
    }
    str_copy(dst, src, kept + 1);
    cut->len = (uint32_t)len;
    cut->kept = (uint32_t)kept;
    cut->tokens = 0;
    cut->named[0] = 0;
    for (const char *p = src + kept; *p;) {
        while (is_space(*p))
            p++;
        size_t n = 0;
        while (p[n] && !is_space(p[n]))
            n++;
        if (n) {
            name_cut_token(cut, p, n);
            cut->tokens++;
        }
        p += n;
    }
}
