#include "lib/string.h"

void str_copy(char *dst, const char *src, size_t size)
{
    size_t i = 0;
    if (!size)
        return;
    for (; i + 1 < size && src[i]; i++)
        dst[i] = src[i];
    dst[i] = 0;
}

bool str_eq(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}
