/* An independent check of bench coherence: a CAS ping-pong between two
 * pinned threads of an ordinary 64-bit Linux program, sharing nothing with
 * cleanroom's code. For every pair of the CPUs this process may use, the
 * round trip of one line (ns, CLOCK_MONOTONIC over `reps` round trips, the
 * median of 5 runs after 2 runs' warm-up); then the median pair. Usage: pingpong [reps]
 * (tools/smp-scale-check.sh compares it with coherence's median pair). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 5
#define WARMUP 2
#define MAX_CPUS 1024

static _Alignas(128) volatile uint32_t word;
static long reps, total; /* round trips per timed run; all of a pair's, its warm-up included */

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *pong(void *arg)
{
    pin(*(int *)arg);
    for (long i = 0; i < total; i++) {
        uint32_t w = (uint32_t)(2 * i + 1);
        while (word != w)
            ;
        __sync_val_compare_and_swap(&word, w, w + 1);
    }
    return 0;
}

static void ping(long from, long to)
{
    for (long i = from; i < to; i++) {
        uint32_t w = (uint32_t)(2 * i);
        while (word != w)
            ;
        __sync_val_compare_and_swap(&word, w, w + 1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per round trip between CPUs a (this thread) and b: one thread each for
 * the whole pair, a warm-up of WARMUP runs' worth first (a virtual CPU woken
 * from idle takes milliseconds), then the median of RUNS timed runs */
static double pair(int a, int b)
{
    double ns[RUNS];
    pthread_t t;
    word = 0;
    total = (WARMUP + RUNS) * reps;
    pin(a);
    pthread_create(&t, 0, pong, &b);
    ping(0, WARMUP * reps);
    for (int r = 0; r < RUNS; r++) {
        struct timespec t0, t1;
        long from = (WARMUP + r) * reps;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ping(from, from + reps);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)reps;
    }
    pthread_join(t, 0);
    qsort(ns, RUNS, sizeof ns[0], cmp);
    return ns[RUNS / 2];
}

int main(int argc, char **argv)
{
    static int cpus[MAX_CPUS];
    static double all[MAX_CPUS * 4];
    cpu_set_t allowed;
    int n = 0, np = 0;
    reps = argc > 1 ? atol(argv[1]) : 20000;
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int c = 0; c < CPU_SETSIZE && n < MAX_CPUS; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[n++] = c;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && np < (int)(sizeof all / sizeof all[0]); j++) {
            all[np] = pair(cpus[i], cpus[j]);
            printf("pair %d %d %.1f ns\n", cpus[i], cpus[j], all[np++]);
        }
    if (!np)
        return 1;
    qsort(all, (size_t)np, sizeof all[0], cmp);
    printf("median pair %.1f ns (fastest %.1f, slowest %.1f; %d pairs, %ld round trips each, median of %d runs)\n",
           all[np / 2], all[0], all[np - 1], np, reps, RUNS);
    return 0;
}
