/* Commit mode (Sheriff, Dthreads: Liu 2014, sections 2.3-2.4 and 3.2.2):
 * between two synchronisation points a thread's shared pages are read-only
 * views of the shared frames. Its first write to one faults (in the kernel,
 * interrupts still off); twin_fault gives the thread a private working copy
 * and keeps a twin, an untouched copy of the page as it was. At the next
 * synchronisation point twin_commit publishes the transaction: for each
 * page, the words where the working copy differs from the twin are written
 * to the shared frame (a diff, so two threads writing different words of
 * one page both survive), then the view is read-only again.
 *
 * The single-writer fast path is Dthreads' version numbers: every shared
 * page has a global version, bumped at each commit of it; a working copy
 * made at the version the page still has is the first to commit since, so
 * the whole page is copied without a diff.
 *
 * Order: threads commit when they reach a synchronisation point. On one CPU
 * with run-to-block threads only one thread is ever between its fault and
 * its commit at the kernel's level, and the FIFO run queue fixes which
 * reaches its point first: the commit order (the token's path) is the same
 * on every run, and a word two threads wrote ends as the last committer's. */
#ifndef RUNTIME_TWIN_H
#define RUNTIME_TWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/aspace.h"

struct twin_page {
    uint32_t va;      /* the page */
    uint32_t working; /* the thread's private copy (mapped writable) */
    uint32_t twin;    /* the page as it was when first written */
    uint32_t version; /* its global version then */
};

struct commit_stats {
    uint32_t pages;  /* pages committed */
    uint32_t copied; /* by the single-writer fast path */
    uint32_t diffed; /* by a word-by-word diff */
    uint32_t words;  /* words the diffs wrote */
};

/* Versions to 0 and counters cleared: at the start of each world. */
void twin_reset(void);
/* The first write of this transaction to the shared page holding va: a
 * working copy and a twin. False when va is not a twinnable shared page
 * (the sync page is never isolated) or the frame pool is empty. */
bool twin_fault(struct aspace *as, uint32_t va);
/* Publishes the space's transaction into the shared frames (see above). */
void twin_commit(struct aspace *as, struct commit_stats *stats);
/* Drops the transaction unpublished (a thread stopped by a fault). */
void twin_discard(struct aspace *as);
uint32_t twin_version(uint32_t shared_index);
/* Makes every current working copy of that page look stale, as if another
 * thread had committed it since: its commit must diff (benchmarks). */
void twin_bump_version(uint32_t shared_index);
/* Totals since twin_reset: twins made, and what commits did. */
uint32_t twin_count(void);
const struct commit_stats *twin_totals(void);

#endif
