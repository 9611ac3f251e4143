#include "lib/base45.h"

static const char base45_alphabet[45] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

size_t base45_encode(const uint8_t *in, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i += 2) {
        uint32_t n = in[i];
        int digits = 2;
        if (i + 1 < len) {
            n = n * 256 + in[i + 1];
            digits = 3;
        }
        for (int d = 0; d < digits; d++, n /= 45)
            out[o++] = base45_alphabet[n % 45];
    }
    return o;
}
