#include "bench/aspace_user.h"

#include "arch/usermode.h"
#include "bench/fill_user.h"
#include "runtime/iaheap_user.h"
#include "runtime/ulib_user.h"

static void begin(const struct ab_thread *t)
{
    if (t->lead) {
        umark();
        umark();
    }
}

static void end(const struct ab_thread *t)
{
    if (t->lead)
        umark();
}

void ab_yield(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++)
        uyield();
    end(t);
}

void ab_null(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    if (t->kind)
        for (uint32_t i = 0; i < t->reps; i++)
            usys_sysenter(USYS_NULL, 0, 0, 0);
    else
        for (uint32_t i = 0; i < t->reps; i++)
            usys_int80(USYS_NULL, 0, 0, 0);
    end(t);
}

static void nothing(void *arg) { (void)arg; }

void ab_create(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++)
        ujoin(ucreate(nothing, 0));
    end(t);
}

void ab_mutex(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++) {
        umutex_lock(&AB_SYNC->m);
        umutex_unlock(&AB_SYNC->m);
    }
    end(t);
}

/* Two threads: each takes the lock while the other holds it, so every
 * acquisition blocks in the kernel once and is woken by the unlock. */
void ab_mutex_pingpong(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++) {
        umutex_lock(&AB_SYNC->m);
        uyield();
        umutex_unlock(&AB_SYNC->m);
        uyield();
    }
    end(t);
}

void ab_malloc(void *arg)
{
    const struct ab_thread *t = arg;
    ia_init();
    begin(t);
    if (t->kind)
        for (uint32_t i = 0; i < t->reps; i++)
            ia_shared_free(ia_shared_malloc(t->size));
    else
        for (uint32_t i = 0; i < t->reps; i++)
            ia_free(ia_malloc(t->size));
    end(t);
}

/* With two threads the leader's end mark comes after the barrier: every
 * thread's work is in. */
void ab_touch(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->pages; i++)
        *(volatile uint32_t *)(t->va + i * U_PAGE) = i;
    if (AB_SYNC->b.count > 1) /* alone: no barrier (in commit mode it would commit) */
        ubarrier_wait(&AB_SYNC->b);
    end(t);
}

void ab_map(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++) {
        umap(t->va, t->pages);
        uunmap(t->va, t->pages);
    }
    if (AB_SYNC->b.count > 1)
        ubarrier_wait(&AB_SYNC->b);
    end(t);
}

void ab_workset(void *arg)
{
    const struct ab_thread *t = arg;
    begin(t);
    for (uint32_t i = 0; i < t->reps; i++) {
        fill_buffer((uint8_t *)t->va, t->size, t->kind);
        uyield();
    }
    end(t);
}
