#include "lib/fmt.h"

#include <stdbool.h>

struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static size_t digits(char *tmp, uint64_t v, unsigned base)
{
    size_t n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    return n;
}

size_t fmt_u64(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = digits(tmp, v, 10);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

static void put_field(struct out *o, const char *s, size_t n, bool neg, size_t width, bool left, bool zero)
{
    size_t total = n + (neg ? 1 : 0);
    size_t pad = width > total ? width - total : 0;
    if (!left && !zero)
        while (pad--)
            put(o, ' ');
    if (neg)
        put(o, '-');
    if (!left && zero)
        while (pad--)
            put(o, '0');
    for (size_t i = 0; i < n; i++)
        put(o, s[i]);
    if (left)
        while (pad--)
            put(o, ' ');
}

size_t vfmt(char *buf, size_t size, const char *f, va_list ap)
{
    struct out o = { buf, size, 0 };
    for (; *f; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        f++;
        bool left = false, zero = false;
        for (; *f == '-' || *f == '0'; f++) {
            if (*f == '-')
                left = true;
            else
                zero = true;
        }
        size_t width = 0;
        for (; *f >= '0' && *f <= '9'; f++)
            width = width * 10 + (size_t)(*f - '0');
        size_t precision = (size_t)-1; /* %.Ns / %.*s: at most N characters */
        if (*f == '.') {
            f++;
            if (*f == '*') {
                int pr = va_arg(ap, int);
                precision = pr < 0 ? 0 : (size_t)pr;
                f++;
            } else {
                for (precision = 0; *f >= '0' && *f <= '9'; f++)
                    precision = precision * 10 + (size_t)(*f - '0');
            }
        }
        int longs = 0;
        for (; *f == 'l'; f++)
            longs++;
        char tmp[24], rev[24];
        switch (*f) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            size_t n = 0;
            while (n < precision && s[n])
                n++;
            put_field(&o, s, n, false, width, left, false);
            break;
        }
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            put_field(&o, tmp, 1, false, width, left, false);
            break;
        case 'd':
        case 'u':
        case 'x': {
            uint64_t v;
            bool neg = false;
            if (*f == 'd') {
                int64_t s = longs >= 2 ? va_arg(ap, long long) : longs ? va_arg(ap, long) : va_arg(ap, int);
                neg = s < 0;
                v = neg ? -(uint64_t)s : (uint64_t)s;
            } else {
                v = longs >= 2 ? va_arg(ap, unsigned long long)
                    : longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            }
            size_t n = digits(rev, v, *f == 'x' ? 16 : 10);
            for (size_t i = 0; i < n; i++)
                tmp[i] = rev[n - 1 - i];
            put_field(&o, tmp, n, neg, width, left, zero);
            break;
        }
        case '%':
            put(&o, '%');
            break;
        case 0:
            f--;
            break;
        default:
            put(&o, '%');
            put(&o, *f);
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return o.len;
}

size_t fmt(char *buf, size_t size, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    size_t n = vfmt(buf, size, format, ap);
    va_end(ap);
    return n;
}
