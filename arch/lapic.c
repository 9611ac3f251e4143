#include "arch/lapic.h"

#include "arch/cpu.h"
#include "arch/msr.h"
#include "arch/x86.h"

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_EXTD (1u << 10) /* x2APIC mode */
#define APIC_BASE_EN (1u << 11)
#define MSR_X2APIC 0x800 /* register r (an xAPIC offset) at 0x800 + r / 16 */

/* xAPIC register offsets (x2APIC: the same divided by 16, ICR as one MSR) */
#define REG_ID 0x20
#define REG_VERSION 0x30
#define REG_TPR 0x80
#define REG_EOI 0xb0
#define REG_SVR 0xf0
#define REG_ICR_LO 0x300
#define REG_ICR_HI 0x310
#define REG_LVT_CMCI 0x2f0
#define REG_LVT_TIMER 0x320
#define REG_LVT_THERMAL 0x330
#define REG_LVT_PERF 0x340
#define REG_LVT_LINT0 0x350
#define REG_LVT_LINT1 0x360
#define REG_LVT_ERROR 0x370
#define REG_TIMER_INITIAL 0x380
#define REG_TIMER_DIVIDE 0x3e0

#define SVR_ENABLE (1u << 8)
#define LVT_MASKED (1u << 16)
#define TIMER_DIVIDE_BY_1 0xbu /* one-shot is the LVT's timer mode 0 */
#define ICR_PENDING (1u << 12) /* xAPIC: delivery status; x2APIC has none */
#define ICR_LEVEL_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_FIXED 0u
/* Polls of the delivery-status bit before an IPI counts as stuck: a real
 * APIC clears it within microseconds. */
#define ICR_POLLS 1000000u

static struct lapic_info info;

static uint32_t reg_read(uint32_t r)
{
    if (info.x2apic)
        return (uint32_t)rdmsr(MSR_X2APIC + r / 16);
    return *(volatile uint32_t *)(uintptr_t)(info.base + r);
}

static void reg_write(uint32_t r, uint32_t v)
{
    if (info.x2apic)
        wrmsr(MSR_X2APIC + r / 16, v);
    else
        *(volatile uint32_t *)(uintptr_t)(info.base + r) = v;
}

static void enable_this_cpu(void)
{
    uint32_t max_lvt = (reg_read(REG_VERSION) >> 16) & 0xff;
    reg_write(REG_LVT_TIMER, LVT_MASKED);
    reg_write(REG_LVT_LINT0, LVT_MASKED);
    reg_write(REG_LVT_LINT1, LVT_MASKED);
    reg_write(REG_LVT_ERROR, LVT_MASKED);
    if (max_lvt >= 4)
        reg_write(REG_LVT_PERF, LVT_MASKED);
    if (max_lvt >= 5)
        reg_write(REG_LVT_THERMAL, LVT_MASKED);
    if (max_lvt >= 6)
        reg_write(REG_LVT_CMCI, LVT_MASKED);
    reg_write(REG_TPR, 0);
    reg_write(REG_SVR, SVR_ENABLE | VEC_SPURIOUS);
}

const struct lapic_info *lapic_init(void)
{
    uint64_t base;
    if (!cpu_has(FEAT_APIC)) {
        info.why = "CPUID.1:EDX.APIC is 0: no local APIC";
        return &info;
    }
    if (!cpu_has(FEAT_MSR) || !msr_try_read(MSR_APIC_BASE, &base)) {
        info.why = "IA32_APIC_BASE cannot be read";
        return &info;
    }
    if (!(base & APIC_BASE_EN)) /* the firmware left it off: on, at the address it holds */
        wrmsr(MSR_APIC_BASE, base | APIC_BASE_EN);
    info.x2apic = (base & APIC_BASE_EXTD) != 0;
    info.base = (uint32_t)base & 0xfffff000u;
    if (!info.x2apic && (base >> 32)) {
        info.why = "the xAPIC page lies above 4 GiB";
        return &info;
    }
    info.present = true;
    info.version = reg_read(REG_VERSION) & 0xff;
    enable_this_cpu();
    info.boot_id = lapic_id();
    return &info;
}

const struct lapic_info *lapic_info(void) { return &info; }

void lapic_init_this_cpu(void)
{
    if (info.x2apic) /* a CPU starts in xAPIC mode: switch it as the BSP is */
        wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
    enable_this_cpu();
}

uint32_t lapic_id(void)
{
    if (!info.present)
        return 0;
    return info.x2apic ? reg_read(REG_ID) : reg_read(REG_ID) >> 24;
}

bool lapic_on_boot_cpu(void) { return !info.present || lapic_id() == info.boot_id; }

static bool icr_idle(void)
{
    if (info.x2apic)
        return true;
    for (uint32_t i = 0; i < ICR_POLLS; i++) {
        if (!(reg_read(REG_ICR_LO) & ICR_PENDING))
            return true;
        cpu_pause();
    }
    return false;
}

static bool send(uint32_t apic_id, uint32_t command)
{
    if (!info.present || !icr_idle())
        return false;
    if (info.x2apic) {
        wrmsr(MSR_X2APIC + REG_ICR_LO / 16, (uint64_t)apic_id << 32 | command);
        return true;
    }
    reg_write(REG_ICR_HI, apic_id << 24);
    reg_write(REG_ICR_LO, command); /* this write sends it */
    return icr_idle();
}

bool lapic_send_init(uint32_t apic_id) { return send(apic_id, ICR_INIT | ICR_LEVEL_ASSERT); }
bool lapic_send_sipi(uint32_t apic_id, uint32_t page) { return send(apic_id, ICR_STARTUP | ICR_LEVEL_ASSERT | (page >> 12)); }
bool lapic_send_ipi(uint32_t apic_id, uint32_t vector) { return send(apic_id, ICR_FIXED | ICR_LEVEL_ASSERT | vector); }
void lapic_eoi(void) { reg_write(REG_EOI, 0); }

bool lapic_timer_once(uint32_t count, uint32_t vector)
{
    if (!info.present)
        return false;
    reg_write(REG_TIMER_DIVIDE, TIMER_DIVIDE_BY_1);
    reg_write(REG_LVT_TIMER, vector); /* unmasked, one-shot */
    reg_write(REG_TIMER_INITIAL, count); /* this write starts it */
    return true;
}
