/* 16550-compatible UARTs, 115200 8N1, polled. serial_init finds them:
 * COM1-COM4 at their standard addresses (0x3F8, 0x2F8, 0x3E8, 0x2E8) and
 * any other port the BIOS data area names (cross-checked with its
 * equipment word, as UEFI leaves that area empty or stale), each tested
 * with the scratch register and a loopback byte; then PCI/PCIe UARTs (class 07, subclass 00, prog-if 00-06: 16450 to
 * 16950, Intel AMT serial-over-LAN, PCIe serial cards): every I/O BAR, or
 * the ports a known card keeps behind its first (lib/uartclock.h, which
 * also says whose clock is known: a PCI UART's rate is otherwise labelled
 * unverified). Records go to EVERY working port found (serial=auto): a loopback
 * test proves a UART exists, not that a cable is attached to it, and a PC
 * whose unused COM1 header passes the test while its AMT port is the one
 * being watched would otherwise deliver nothing. serial= narrows the set.
 * Every wait is bounded: a missing or wedged UART never hangs the machine;
 * output to it is then dropped and serial_present() says so. */
#ifndef KERNEL_SERIAL_H
#define KERNEL_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/pci.h"
#include "lib/config.h"

#define COM1_PORT 0x3f8
#define SERIAL_BAUD 115200
#define SERIAL_PORTS_MAX 12

struct serial_port {
    uint16_t base;           /* 0: none (a PCI UART without a usable I/O BAR) */
    const char *kind;        /* "com1".."com4", "bda" (elsewhere), "pci", "port" (serial=0xPORT) */
    const char *source;      /* "bda", "standard", "pci", "cmdline" */
    bool is_pci;
    struct pci_address pci;
    uint32_t clock_hz;       /* the UART's clock the divisor assumes */
    uint16_t divisor;
    const char *rate;        /* "standard" (ISA: 1.8432 MHz by design), "known" (a PCI card in lib/uartclock.c's
                              * table), "set" (serial_clock=), "unverified" (a PCI card nobody vouches for) */
    const char *model;       /* the card's name when known */
    bool works;              /* scratch register and loopback passed */
    bool used;               /* records go here */
    const char *problem;     /* why it does not work, or NULL */
};

/* Finds the ports and picks those serial= asks for (a value of enum
 * serial_choice, or an I/O port number). SERIAL_NONE touches no port.
 * clock_hz (serial_clock=; 0: none given): the clock of the PCI UARTs. */
void serial_init(uint32_t choice, uint32_t clock_hz);
/* True when records reach at least one working port. */
bool serial_present(void);
const struct serial_port *serial_ports(uint32_t *count);
/* The serial= value serial_init was given. */
uint32_t serial_choice(void);
bool serial_pci_scanned(void);
void serial_write(const char *s, size_t n);
/* Waits (bounded) until every transmitter is empty: call before an exit
 * that stops the machine at once, or the last bytes are lost. */
void serial_drain(void);
/* Adds the "serial" object (ports found and used) to the open record. */
void serial_report(void);

#endif
