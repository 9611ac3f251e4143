/* PCI configuration space through configuration mechanism #1 (ports 0xCF8
 * and 0xCFC), which every PC since the mid-1990s and every PCIe chipset
 * keep for compatibility. Only reads, plus setting a device's I/O decode
 * bit: the kernel never assigns BARs (the firmware does, or a device stays
 * unusable and is reported as such). */
#ifndef ARCH_PCI_H
#define ARCH_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_BUSES 256
#define PCI_DEVICES 32
#define PCI_FUNCTIONS 8

/* Config-space offsets (PCI Local Bus spec, type-0 header). */
#define PCI_VENDOR_ID 0x00
#define PCI_COMMAND 0x04
#define PCI_CLASS_REV 0x08 /* class, subclass, prog-if, revision from the top byte down */
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_BAR_COUNT 6
#define PCI_COMMAND_IO 0x0001
#define PCI_BAR_IO 0x1
#define PCI_HEADER_MULTIFUNCTION 0x80
#define PCI_NO_DEVICE 0xffff

struct pci_address {
    uint8_t bus, dev, func;
};

/* True when mechanism #1 answers (the address register reads back). */
bool pci_present(void);
uint32_t pci_read32(struct pci_address a, uint8_t offset);
void pci_write16(struct pci_address a, uint8_t offset, uint16_t v);

/* Calls visit() for every function that exists, bus 0..255, device 0..31,
 * function 0..7 (1..7 only on multi-function devices): at most 8192 + 57344
 * config reads, no waits. Stops early when visit() returns false. */
void pci_each_function(bool (*visit)(void *ctx, struct pci_address a, uint32_t class_rev), void *ctx);

#endif
