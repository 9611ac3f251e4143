#include "arch/pci.h"

#include "arch/x86.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define PCI_ENABLE 0x80000000u

static uint32_t config_address(struct pci_address a, uint8_t offset)
{
    return PCI_ENABLE | (uint32_t)a.bus << 16 | (uint32_t)a.dev << 11 | (uint32_t)a.func << 8 | (offset & 0xfc);
}

bool pci_present(void)
{
    /* Mechanism #1's address register is a 32-bit latch: what we write
     * reads back. Mechanism #2 (pre-1995) and "no PCI" do not. */
    uint32_t saved = inl(PCI_CONFIG_ADDRESS);
    outl(PCI_CONFIG_ADDRESS, PCI_ENABLE);
    bool ok = inl(PCI_CONFIG_ADDRESS) == PCI_ENABLE;
    outl(PCI_CONFIG_ADDRESS, saved);
    return ok;
}

uint32_t pci_read32(struct pci_address a, uint8_t offset)
{
    outl(PCI_CONFIG_ADDRESS, config_address(a, offset));
    return inl(PCI_CONFIG_DATA);
}

void pci_write16(struct pci_address a, uint8_t offset, uint16_t v)
{
    outl(PCI_CONFIG_ADDRESS, config_address(a, offset));
    outw((uint16_t)(PCI_CONFIG_DATA + (offset & 2)), v);
}

void pci_each_function(bool (*visit)(void *ctx, struct pci_address a, uint32_t class_rev), void *ctx)
{
    if (!pci_present())
        return;
    for (uint32_t bus = 0; bus < PCI_BUSES; bus++) {
        for (uint8_t dev = 0; dev < PCI_DEVICES; dev++) {
            struct pci_address a = { (uint8_t)bus, dev, 0 };
            if ((pci_read32(a, PCI_VENDOR_ID) & 0xffff) == PCI_NO_DEVICE)
                continue;
            uint8_t header = (uint8_t)(pci_read32(a, PCI_HEADER_TYPE & 0xfc) >> 16);
            uint8_t functions = (header & PCI_HEADER_MULTIFUNCTION) ? PCI_FUNCTIONS : 1;
            for (uint8_t func = 0; func < functions; func++) {
                a.func = func;
                if ((pci_read32(a, PCI_VENDOR_ID) & 0xffff) == PCI_NO_DEVICE)
                    continue;
                if (!visit(ctx, a, pci_read32(a, PCI_CLASS_REV)))
                    return;
            }
        }
    }
}
