/* A small snprintf for human-readable console text (never for records,
 * which the record writer builds). Supports %s %c %d %u %x %llu %lld %llx
 * and %%, with an optional '-' or '0' flag, a width, and %.Ns / %.*s. */
#ifndef LIB_FMT_H
#define LIB_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

size_t fmt(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
size_t vfmt(char *buf, size_t size, const char *format, va_list ap);

/* Unsigned decimal of v into buf (at least 21 bytes); returns the length. */
size_t fmt_u64(char *buf, uint64_t v);

#endif
