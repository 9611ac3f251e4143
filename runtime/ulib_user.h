/* The ring-3 thread library (runs in ring 3: see linker.ld): system calls,
 * the fork-like thread create of PATHREADS, and futex-style
 * synchronisation whose uncontended path never enters the kernel. In commit
 * mode (runtime/twin.h) every lock and unlock commits first, as Dthreads
 * and Sheriff end a transaction at each synchronisation. */
#ifndef RUNTIME_ULIB_USER_H
#define RUNTIME_ULIB_USER_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/uabi.h"

/* A system call by the entry the kernel chose (U_CONTROL->use_sysenter). */
uint32_t usys(uint32_t nr, uint32_t a, uint32_t b, uint32_t c);

void uyield(void);
void umark(void);
void ucommit(void);
__attribute__((noreturn)) void uexit(uint32_t status);
/* A new thread running fn(arg); its id, or USYS_ERROR. In an isolated
 * world the child is a copy of the caller (its stack, at the same address)
 * that returns 0 from the system call and goes on into fn(arg) here. */
uint32_t ucreate(void (*fn)(void *), void *arg);
/* Waits for the thread's end: its status (UTHREAD_FAULTED if it was stopped). */
uint32_t ujoin(uint32_t tid);
uint32_t umap(uint32_t va, uint32_t pages);
uint32_t uunmap(uint32_t va, uint32_t pages);

void umutex_lock(struct umutex *m);
void umutex_unlock(struct umutex *m);
void ucond_wait(struct ucond *c, struct umutex *m);
void ucond_signal(struct ucond *c);
void ucond_broadcast(struct ucond *c);
/* True in exactly one thread of each generation (the last to arrive). */
bool ubarrier_wait(struct ubarrier *b);

/* This thread's block at the top of its stack slot. */
struct uself *uself(void);

/* Where the kernel starts a thread: fn(arg), then uexit(0). */
__attribute__((noreturn)) void uthread_entry(void (*fn)(void *), void *arg);

#endif
