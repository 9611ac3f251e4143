#include "runtime/twin.h"

#include "arch/mmu.h"
#include "arch/modelmark.h"
#include "arch/x86.h"
#include "runtime/frames.h"

#define WORDS (U_PAGE / 4)
#define TWIN_MAX (U_PAGE / sizeof(struct twin_page))
_Static_assert(TWIN_MAX >= U_SHARED_MAX_PAGES, "one twin list frame holds every shared page");

static uint32_t versions[U_SHARED_MAX_PAGES];
static uint32_t twins_made;
static struct commit_stats totals;

void twin_reset(void)
{
    for (uint32_t i = 0; i < U_SHARED_MAX_PAGES; i++)
        versions[i] = 0;
    twins_made = 0;
    totals = (struct commit_stats){ 0, 0, 0, 0 };
}

uint32_t twin_version(uint32_t i) { return i < U_SHARED_MAX_PAGES ? versions[i] : 0; }
void twin_bump_version(uint32_t i)
{
    if (i < U_SHARED_MAX_PAGES)
        versions[i]++;
}
uint32_t twin_count(void) { return twins_made; }
const struct commit_stats *twin_totals(void) { return &totals; }

static void flush_if_loaded(struct aspace *as, uint32_t va)
{
    if (read_cr3() == aspace_cr3(as))
        tlb_invalidate(va);
}

bool twin_fault(struct aspace *as, uint32_t va)
{
    va &= PTE_ADDR_MASK;
    int32_t idx = shared_region_index(va);
    uint32_t *pte = aspace_pte(as, va);
    if (!as->private_view || idx < (int32_t)U_SYNC_PAGES || !pte || (*pte & PTE_W))
        return false;
    if (!as->twins) {
        as->twins = (struct twin_page *)frame_alloc();
        as->ntwins = 0;
    }
    uint32_t working = frame_alloc(), twin = frame_alloc();
    if (!as->twins || !working || !twin || as->ntwins >= TWIN_MAX) {
        frame_free(working);
        frame_free(twin);
        return false;
    }
    uint32_t shared = shared_region_frame((uint32_t)idx);
    rep_movsd((void *)working, (const void *)shared, WORDS);
    rep_movsd((void *)twin, (const void *)shared, WORDS);
    as->twins[as->ntwins++] = (struct twin_page){ va, working, twin, versions[idx] };
    *pte = working | PTE_P | PTE_W | PTE_U | PTE_OWNED;
    flush_if_loaded(as, va);
    twins_made++;
    return true;
}

/* The view of that page back to the shared frame, read-only; the copies to the pool. */
static void end_page(struct aspace *as, const struct twin_page *p)
{
    uint32_t *pte = aspace_pte(as, p->va);
    if (pte)
        *pte = shared_region_frame((uint32_t)shared_region_index(p->va)) | PTE_P | PTE_U;
    flush_if_loaded(as, p->va);
    frame_free(p->working);
    frame_free(p->twin);
}

static void end_transaction(struct aspace *as)
{
    frame_free((uint32_t)as->twins);
    as->twins = 0;
    as->ntwins = 0;
}

void twin_commit(struct aspace *as, struct commit_stats *stats)
{
    struct commit_stats st = { 0, 0, 0, 0 };
    for (uint32_t k = 0; k < as->ntwins; k++) {
        const struct twin_page *p = &as->twins[k];
        uint32_t idx = (uint32_t)shared_region_index(p->va);
        uint32_t *shared = (uint32_t *)shared_region_frame(idx);
        const uint32_t *w = (const uint32_t *)p->working, *t = (const uint32_t *)p->twin;
        if (versions[idx] == p->version) {
            rep_movsd(shared, w, WORDS);
            st.copied++;
        } else {
            for (uint32_t i = 0; i < WORDS; i++) {
                if (w[i] != t[i]) {
                    shared[i] = w[i];
                    st.words++;
                }
            }
            st.diffed++;
        }
        versions[idx]++;
        st.pages++;
        end_page(as, p);
    }
    if (as->twins)
        end_transaction(as);
    totals.pages += st.pages;
    totals.copied += st.copied;
    totals.diffed += st.diffed;
    totals.words += st.words;
    if (stats)
        *stats = st;
}

void twin_discard(struct aspace *as)
{
    for (uint32_t k = 0; k < as->ntwins; k++)
        end_page(as, &as->twins[k]);
    if (as->twins)
        end_transaction(as);
}
