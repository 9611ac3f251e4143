/* Parses the multiboot command line into struct config. Every rejected
 * token is reported through the callback with the accepted values, and
 * parsing goes on so that one boot names every bad token. */
#ifndef LIB_CMDLINE_H
#define LIB_CMDLINE_H

#include "lib/config.h"

/* token: the offending key=value token; msg: what is wrong; accepted: the
 * values or forms that would have been accepted. */
typedef void (*cmdline_error_fn)(void *ctx, const char *token, const char *msg, const char *accepted);

struct name_list {
    const char *const *names;
    uint32_t count;
};

/* Starts from config_defaults(). The first token is skipped when it holds no
 * '=' (GRUB and QEMU put the kernel's path there). Returns the number of
 * rejected tokens. */
int cmdline_parse(const char *line, struct config *cfg, const struct name_list *bench_names,
                  cmdline_error_fn on_error, void *ctx);

/* "a|b|c" of an enum key's values, or a description of the accepted form. */
void cmdline_accepted(enum config_key key, const struct name_list *bench_names, char *buf, size_t size);

/* Parses a size such as "0", "4096", "16K", "3M", "1G". */
bool cmdline_parse_size(const char *s, size_t n, uint64_t *out);

#endif
