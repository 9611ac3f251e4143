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

/* Parses a size such as "0", "4096", "16K", "3M", "1G". A value past
 * uint64, in its digits or once multiplied by its suffix, comes back as
 * UINT64_MAX (beyond every key's range) rather than wrapped. */
bool cmdline_parse_size(const char *s, size_t n, uint64_t *out);

/* The loader's command line against the buffer it is copied into. */
#define CMDLINE_CUT_NAMED 200
struct cmdline_cut {
    uint32_t len;    /* bytes the loader passed */
    uint32_t kept;   /* bytes copied: len when the line fits */
    uint32_t tokens; /* tokens left out (0: every token was kept) */
    char named[CMDLINE_CUT_NAMED]; /* those tokens, space-separated, each that fits (the
                                    * first always); one over 48 characters ends in "..." */
};

/* Copies src (NUL-terminated) into dst[size]. A line that does not fit is
 * cut before the first token it cannot hold whole, so no token is ever
 * parsed in a shortened form; cut says what was left out. */
void cmdline_copy(char *dst, size_t size, const char *src, struct cmdline_cut *cut);

#endif
