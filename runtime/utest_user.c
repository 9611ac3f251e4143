#include "runtime/utest_user.h"

#include "arch/usermode.h"
#include "arch/x86.h"
#include "runtime/iaheap_user.h"
#include "runtime/ulib_user.h"

#define G UTEST

void utest_syscalls(void *arg)
{
    (void)arg;
    G->result[0] = usys_int80(USYS_NULL, 0, 0, 0);
    G->result[1] = G->sysenter_ok ? usys_sysenter(USYS_NULL, 0, 0, 0) : USYS_NULL_MAGIC;
    G->result[2] = uself()->tid;
    G->result[3] = usys(USYS_COUNT + 5, 0, 0, 0); /* no such call */
}

/* --- sharing: globals and heap; stacks private ------------------------------ */

static void share_reader(void *arg)
{
    (void)arg;
    G->result[0] = G->x;
    G->result[1] = *G->obj;
}

/* Forks the reader first, then writes: the reader can only see the values
 * through the shared frames. */
void utest_share_writer(void *arg)
{
    (void)arg;
    ia_init();
    uint32_t reader = ucreate(share_reader, 0);
    G->x = 0x51ab;
    G->obj = ia_malloc(64);
    *G->obj = 0x4ea9;
    G->result[2] = ujoin(reader);
}

static void stack_child(void *arg)
{
    (void)arg;
    volatile uint32_t *v = (volatile uint32_t *)G->stack_addr; /* the parent's variable's address */
    G->result[0] = *v; /* the copy made at create */
    uyield();          /* the parent writes 2 meanwhile */
    G->result[1] = *v;
    *v = 3;
}

void utest_stack_parent(void *arg)
{
    (void)arg;
    volatile uint32_t v = 1;
    G->stack_addr = (uint32_t)&v;
    uint32_t child = ucreate(stack_child, 0);
    v = 2;
    uyield();
    ujoin(child);
    G->result[2] = v;
}

/* --- faults ----------------------------------------------------------------- */

void utest_fault_kernel_write(void *arg)
{
    *(volatile uint32_t *)arg = 0xbad; /* arg: an address in the kernel image */
    G->result[4] = 1;                  /* never reached */
}

void utest_fault_kernel_read(void *arg)
{
    G->result[5] = *(volatile uint32_t *)arg;
    G->result[4] = 1;
}

void utest_fault_readonly(void *arg)
{
    (void)arg;
    *(volatile uint32_t *)G->ro_page = 1;
    G->result[4] = 1;
}

void utest_fault_privileged(void *arg)
{
    (void)arg;
    cli();
    G->result[4] = 1;
}

void utest_survivor(void *arg)
{
    (void)arg;
    G->result[0] = 0xa11fe;
}

/* --- commit mode ------------------------------------------------------------ */

void utest_commit_writer(void *arg)
{
    struct utest_writer *w = arg;
    G->page[w->word] = w->value;
    uyield();                  /* the other writer writes its word meanwhile */
    w->seen = G->page[w->peek]; /* isolated: not the other's write */
    ubarrier_wait(&USYNC->b);   /* commits */
}

/* --- IAmalloc --------------------------------------------------------------------- */

static void allocate_some(uint32_t who)
{
    for (uint32_t i = 0; i < UTEST_ALLOCS; i++) {
        uint32_t size = (i * 37) % 300 + 1;
        G->size[who][i] = size;
        G->ptr[who][i] = (uint32_t)ia_malloc(size);
        *(volatile uint32_t *)G->ptr[who][i] = who; /* it must be usable */
    }
}

void utest_heap_owner(void *arg)
{
    (void)arg;
    ia_init();
    G->obj = ia_malloc(64);
    G->result[0] = (uint32_t)G->obj;
    uyield(); /* the other thread frees it */
    /* it is on this sub-heap's remote list: it comes back once the local
     * list of its class runs dry (at most a page's worth of allocations) */
    for (uint32_t i = 0; i < U_PAGE / IA_MIN_OBJECT && !G->result[1]; i++)
        if ((uint32_t)ia_malloc(64) == G->result[0])
            G->result[1] = i + 1;
    allocate_some(0);
}

void utest_heap_other(void *arg)
{
    (void)arg;
    ia_free((void *)G->obj);
    G->result[2] = IA_META->subs[ia_owner((uint32_t)G->obj)].remote_frees;
    uyield();
    allocate_some(1);
}

/* --- life cycle ------------------------------------------------------------------- */

static void nothing(void *arg) { (void)arg; }

void utest_lifecycle(void *arg)
{
    (void)arg;
    umark();
    for (uint32_t i = 0; i < 20; i++)
        G->result[0] += ujoin(ucreate(nothing, 0)) == 0;
    umark();
}

/* --- mutex, condition variable, barrier ------------------------------------------ */

void utest_counter(void *arg)
{
    for (uint32_t i = 0; i < UTEST_COUNTER_REPS; i++) {
        umutex_lock(&USYNC->m);
        uint32_t v = G->counter;
        uyield(); /* inside the critical section: the others must block */
        G->counter = v + 1;
        umutex_unlock(&USYNC->m);
    }
    ubarrier_wait(&USYNC->b);
    umutex_lock(&USYNC->m);
    if ((uint32_t)arg == 0) {
        while (!G->ready)
            ucond_wait(&USYNC->c, &USYNC->m);
        G->result[0] = G->x;
    } else if ((uint32_t)arg == 1) {
        G->x = 42;
        G->ready = 1;
        ucond_signal(&USYNC->c);
    }
    umutex_unlock(&USYNC->m);
}

/* --- map, unmap, demand faults ----------------------------------------------------- */

void utest_map_demand(void *arg)
{
    uint32_t demand = (uint32_t)arg;
    uint32_t va = U_PRIVATE;
    G->result[0] = umap(va, 4);
    for (uint32_t i = 0; i < 4; i++)
        *(volatile uint32_t *)(va + i * U_PAGE) = i + 1;
    G->result[1] = *(volatile uint32_t *)(va + 3 * U_PAGE);
    G->result[2] = uunmap(va, 4);
    for (uint32_t i = 0; i < 8; i++)
        G->result[3] += *(volatile uint32_t *)(demand + i * U_PAGE) == 0; /* zeroed on the fault */
}
