/* The few C library routines the freestanding kernel needs (GCC may also
 * emit calls to memcpy/memset on its own). On the host the C library's
 * versions are used instead, with the same prototypes. */
#ifndef LIB_STRING_H
#define LIB_STRING_H

#include <stddef.h>
#include <stdbool.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* Copy at most size-1 characters and always terminate. */
void str_copy(char *dst, const char *src, size_t size);
bool str_eq(const char *a, const char *b);

#endif
