#include "arch/tco.h"

#include "arch/pci.h"
#include "arch/x86.h"

#define INTEL 0x8086
#define LPC_ACPI_BASE 0x40      /* ICH: PMBASE/ABASE, bits 15:7 */
#define LPC_ACPI_CNTL 0x44      /* ICH: bit 7 ACPI decode enable */
#define LPC_RCBA 0xf0           /* ICH: root complex base, bits 31:14, bit 0 enable */
#define SMBUS_TCOBASE 0x50      /* 100-series PCH and later: bits 15:5 */
#define SMBUS_TCOCTL 0x54       /* bit 8 TCO_BASE_EN */
#define TCO_OFFSET_IN_ACPI 0x60
#define TCO1_CNT 0x08
#define TCO_TMR 0x12
#define TCO_TMR_HLT (1u << 11)
#define RCBA_GCS 0x3410
#define GCS_NO_REBOOT (1u << 5)
#define CLASS_LPC 0x0601        /* ISA bridge */
#define CLASS_SMBUS 0x0c05

static struct tco_state state = { .no_reboot = -1, .why = "not read" };
static bool done;

static const struct pci_address lpc = { 0, 31, 0 }, smbus = { 0, 31, 4 };

static bool intel_class(struct pci_address a, uint32_t class)
{
    uint32_t id = pci_read32(a, PCI_VENDOR_ID);
    return (id & 0xffff) == INTEL && pci_read32(a, PCI_CLASS_REV) >> 16 == class;
}

static void read_timer(const char *where, uint32_t base)
{
    state.where = where;
    state.base = base;
    state.halted = (inw((uint16_t)(base + TCO1_CNT)) & TCO_TMR_HLT) != 0;
    state.timeout_ticks = inw((uint16_t)(base + TCO_TMR)) & 0x3ff;
    state.why = 0;
}

const struct tco_state *tco_read(void)
{
    if (done)
        return &state;
    done = true;
    if (!pci_present()) {
        state.why = "no PCI configuration mechanism #1";
        return &state;
    }
    if (intel_class(lpc, CLASS_LPC)) {
        uint32_t acpi = pci_read32(lpc, LPC_ACPI_BASE) & 0xff80;
        bool decoded = pci_read32(lpc, LPC_ACPI_CNTL) & 0x80;
        if (acpi && decoded)
            read_timer("lpc", acpi + TCO_OFFSET_IN_ACPI);
        uint32_t rcba = pci_read32(lpc, LPC_RCBA);
        if (state.where && (rcba & 1) && (rcba & 0xffffc000u)) /* paging is off: physical = virtual */
            state.no_reboot = (*(volatile uint32_t *)(uintptr_t)((rcba & 0xffffc000u) + RCBA_GCS) & GCS_NO_REBOOT) != 0;
    }
    if (!state.where && intel_class(smbus, CLASS_SMBUS)) {
        uint32_t tco = pci_read32(smbus, SMBUS_TCOBASE) & 0xffe0;
        if (tco && (pci_read32(smbus, SMBUS_TCOCTL) & (1u << 8)))
            read_timer("smbus", tco);
    }
    if (!state.where)
        state.why = "no Intel ICH/PCH TCO found at 00:1f.0 or 00:1f.4 (another chipset, or the firmware left it off)";
    return &state;
}

bool tco_may_reset(const struct tco_state *t) { return t->where && !t->halted && t->no_reboot != 1; }
