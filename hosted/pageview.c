/* runtime/pageview.h for a process: its threads share one set of page
 * tables, so a view is its frame, at the frame's own address. */
#include "runtime/pageview.h"

const char *pageview_unavailable(void) { return 0; }

bool pageview_make(struct pageview *v, void *va, void *frame)
{
    (void)va;
    *v = (struct pageview){ .va = frame };
    return true;
}

volatile uint32_t *pageview_enter(const struct pageview *v, uint32_t *before)
{
    *before = 0;
    return (volatile uint32_t *)v->va;
}

void pageview_leave(uint32_t before) { (void)before; }
