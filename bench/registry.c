#include "bench/registry.h"

#define BENCH(sym) extern const struct bench sym;
#include "bench/registry.def"
#undef BENCH

const struct bench *const bench_registry[] = {
#define BENCH(sym) &sym,
#include "bench/registry.def"
#undef BENCH
};

const uint32_t bench_count = sizeof bench_registry / sizeof bench_registry[0];

const struct name_list *bench_name_list(void)
{
    static const char *names[sizeof bench_registry / sizeof bench_registry[0]];
    static struct name_list list = { names, 0 };
    if (!list.count) {
        for (uint32_t i = 0; i < bench_count; i++)
            names[i] = bench_registry[i]->name;
        list.count = bench_count;
    }
    return &list;
}
