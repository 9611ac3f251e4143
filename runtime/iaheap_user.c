#include "runtime/iaheap_user.h"

#include "arch/x86.h"
#include "runtime/ulib_user.h"

void ia_init(void)
{
    struct ia_meta *m = IA_META;
    uint32_t pages = U_CONTROL->heap_pages;
    uint32_t per = pages > 1 ? (pages - 1) / (IA_SUBHEAPS + 1) : 0; /* page 0: this header */
    m->pages = pages;
    m->shared_lock.state = 0;
    for (uint32_t i = 0; i <= IA_SUBHEAPS; i++) {
        struct ia_sub *s = &m->subs[i];
        s->lo = s->bump = U_HEAP + (1 + i * per) * U_PAGE;
        s->hi = s->lo + per * U_PAGE;
        for (uint32_t c = 0; c < IA_CLASSES; c++)
            s->free[c] = 0;
        s->remote = 0;
        s->allocs = s->frees = s->remote_frees = 0;
    }
}

static uint32_t class_of(uint32_t size)
{
    uint32_t c = 0;
    while (c < IA_CLASSES && (IA_MIN_OBJECT << c) < size)
        c++;
    return c;
}

static uint32_t page_of(uint32_t addr) { return (addr - U_HEAP) / U_PAGE; }

int32_t ia_owner(uint32_t addr)
{
    const struct ia_meta *m = IA_META;
    for (uint32_t i = 0; i <= IA_SUBHEAPS; i++)
        if (addr >= m->subs[i].lo && addr < m->subs[i].hi)
            return (int32_t)i;
    return -1;
}

static void push(struct ia_sub *s, uint32_t c, uint32_t obj)
{
    *(uint32_t *)obj = s->free[c];
    s->free[c] = obj;
}

/* A fresh page of class c, cut into objects. */
static int carve(struct ia_sub *s, uint32_t c)
{
    if (s->bump + U_PAGE > s->hi)
        return 0;
    uint32_t page = s->bump, size = IA_MIN_OBJECT << c;
    s->bump += U_PAGE;
    IA_META->page_class[page_of(page)] = (uint8_t)c;
    for (uint32_t off = U_PAGE; off >= size; off -= size)
        push(s, c, page + off - size);
    return 1;
}

/* The objects other threads gave back, onto the local lists. */
static void drain(struct ia_sub *s)
{
    uint32_t obj = xchg32(&s->remote, 0);
    while (obj) {
        uint32_t next = *(uint32_t *)obj;
        push(s, IA_META->page_class[page_of(obj)], obj);
        obj = next;
    }
}

static void *alloc_from(struct ia_sub *s, uint32_t size)
{
    uint32_t c = class_of(size);
    if (!size || c >= IA_CLASSES)
        return 0;
    if (!s->free[c] && s->remote)
        drain(s);
    if (!s->free[c] && !carve(s, c))
        return 0;
    uint32_t obj = s->free[c];
    s->free[c] = *(uint32_t *)obj;
    s->allocs++;
    return (void *)obj;
}

void *ia_malloc(uint32_t size) { return alloc_from(&IA_META->subs[uself()->subheap % IA_SUBHEAPS], size); }

void ia_free(void *p)
{
    int32_t owner = ia_owner((uint32_t)p);
    if (owner < 0 || owner == IA_SHARED)
        return;
    struct ia_sub *s = &IA_META->subs[owner];
    uint32_t obj = (uint32_t)p;
    if ((uint32_t)owner == uself()->subheap % IA_SUBHEAPS) {
        push(s, IA_META->page_class[page_of(obj)], obj);
        s->frees++;
        return;
    }
    uint32_t head; /* another thread's object: onto its owner's remote list */
    do {
        head = s->remote;
        *(uint32_t *)obj = head;
    } while (cmpxchg32(&s->remote, head, obj) != head);
    s->remote_frees++;
}

void *ia_shared_malloc(uint32_t size)
{
    umutex_lock(&IA_META->shared_lock);
    void *p = alloc_from(&IA_META->subs[IA_SHARED], size);
    umutex_unlock(&IA_META->shared_lock);
    return p;
}

void ia_shared_free(void *p)
{
    uint32_t obj = (uint32_t)p;
    if (ia_owner(obj) != IA_SHARED)
        return;
    umutex_lock(&IA_META->shared_lock);
    struct ia_sub *s = &IA_META->subs[IA_SHARED];
    push(s, IA_META->page_class[page_of(obj)], obj);
    s->frees++;
    umutex_unlock(&IA_META->shared_lock);
}
