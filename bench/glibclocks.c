#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP */
#include "bench/glibclocks.h"

#include <pthread.h>

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(((struct glibclock *)0)->mutex), "struct glibclock too small");

static pthread_mutex_t *mutex_of(struct glibclock *l) { return (pthread_mutex_t *)(void *)l->mutex; }

void glibclock_init(struct glibclock *l, enum glibclock_kind kind)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, kind == GLIBCLOCK_ADAPTIVE ? PTHREAD_MUTEX_ADAPTIVE_NP : PTHREAD_MUTEX_DEFAULT);
    pthread_mutex_init(mutex_of(l), &a);
    pthread_mutexattr_destroy(&a);
}

void glibclock_acquire(struct glibclock *l) { pthread_mutex_lock(mutex_of(l)); }

void glibclock_release(struct glibclock *l) { pthread_mutex_unlock(mutex_of(l)); }
