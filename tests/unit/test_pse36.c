/* arch/pse36.c: the 4 MiB page-directory entries that reach physical memory
 * above 4 GiB without PAE, checked bit by bit against the SDM's layout
 * (address bits 39:32 in PDE bits 20:13), and where the framebuffer's
 * window goes. The CPU's side is the self-test paging_pse36 (RAM above
 * 4 GiB under QEMU). */
#include "arch/pse36.c"
#include "unit.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

int main(void)
{
    uint32_t pde = 0;
    /* 256 GiB: address bit 38 -> PDE bit 13 + 6 = 19 */
    CHECK(pse36_pde(256 * GIB, 40, PTE_P | PTE_W, &pde) && pde == (1u << 19 | PTE_PS | PTE_P | PTE_W));
    CHECK(pse36_pde_address(pde) == 256 * GIB);
    /* bits 31:22 stay where they are; bit 32 -> bit 13 */
    CHECK(pse36_pde(0x123400000ull, 36, PTE_P, &pde) && pde == (0x23400000u | 1u << 13 | PTE_PS | PTE_P));
    CHECK(pse36_pde_address(pde) == 0x123400000ull);
    /* the last 4 MiB below 1 TiB: all eight high bits */
    CHECK(pse36_pde(1024 * GIB - 4 * MIB, 46, PTE_P, &pde) && (pde >> 13 & 0xff) == 0xff && (pde & 0xffc00000u) == 0xffc00000u);
    CHECK(pse36_pde_address(pde) == 1024 * GIB - 4 * MIB);
    /* below 4 GiB it is a plain 4 MiB entry */
    CHECK(pse36_pde(8 * MIB, 36, PTE_P, &pde) && pde == (8 * MIB | PTE_PS | PTE_P));
    /* refused: not 4 MiB aligned; past the CPU's width; past what bits 20:13 hold; no width */
    CHECK(!pse36_pde(256 * GIB + 4096, 40, PTE_P, &pde));
    CHECK(!pse36_pde(64 * GIB, 36, PTE_P, &pde));
    CHECK(pse36_pde(64 * GIB - 4 * MIB, 36, PTE_P, &pde));
    CHECK(!pse36_pde(1024 * GIB, 48, PTE_P, &pde));
    CHECK(!pse36_pde(8 * MIB, 0, PTE_P, &pde));

    /* A 1920x1080x32 framebuffer 3 MiB into a 4 MiB page at 256 GiB, RAM up to 3 GiB - 1 MiB */
    struct pse36_window w;
    uint64_t fb = 256 * GIB + 3 * MIB, len = 7680ull * 1080;
    CHECK(pse36_window_plan(fb, len, 0xbff00000u, 40, &w) == 0);
    CHECK(w.pa_base == 256 * GIB && w.slots == 3 && w.first_slot == 768 && w.va == 0xc0300000u);
    /* why not */
    const char *why = pse36_window_plan(fb, len, 0xbff00000u, 0, &w);
    CHECK(why && strstr(why, "no PSE-36"));
    why = pse36_window_plan(fb, len, 0xbff00000u, 36, &w);
    CHECK(why && strstr(why, "beyond the physical addresses"));
    why = pse36_window_plan(fb, 32 * MIB, 0xff000000u, 40, &w);
    CHECK(why && strstr(why, "larger than the virtual space"));
    CHECK(pse36_window_plan(fb, 8 * MIB, 0xff000000u, 40, &w) == 0 && w.first_slot == 1020 && w.slots == 3);

    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed != 0;
}
