#include "kernel/serial.h"

#include "arch/x86.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/uartclock.h"

#define REG_DATA 0
#define REG_IER 1
#define REG_FCR 2
#define REG_LCR 3
#define REG_MCR 4
#define REG_LSR 5
#define REG_SCRATCH 7
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20
#define LSR_TX_IDLE 0x40
#define LCR_DLAB 0x80
#define MCR_LOOPBACK 0x10
#define MCR_DTR_RTS_OUT2 0x0b

/* At 115200 baud a byte takes ~87 us; a port read takes ~1 us on real
 * hardware. 100000 polls is far more than any working UART needs. */
#define POLL_LIMIT 100000

/* The BIOS data area: four COM port words, then (at 0x410) the equipment
 * word whose bits 9-11 count the serial ports the BIOS found. */
#define BDA_COM_PORTS ((const volatile uint16_t *)0x400)
#define BDA_EQUIPMENT ((const volatile uint16_t *)0x410)
#define BDA_EQUIPMENT_SERIAL_SHIFT 9
#define BDA_EQUIPMENT_SERIAL_MASK 0x7

#define PCI_CLASS_SERIAL 0x07
#define PCI_SUBCLASS_UART 0x00
#define PCI_PROGIF_16950 0x06 /* 00 8250 .. 02 16550 .. 06 16950: all 16550-compatible */
#define PCI_BAR_MEM_TYPE_64 0x4

static const uint16_t standard_ports[4] = { 0x3f8, 0x2f8, 0x3e8, 0x2e8 };
static const char *const com_names[4] = { "com1", "com2", "com3", "com4" };

static struct serial_port ports[SERIAL_PORTS_MAX];
static uint32_t nports;
static uint32_t chosen;
static bool pci_scanned;
static uint32_t pci_clock; /* serial_clock=, 0: none given */

static void reg_write(uint16_t base, int reg, uint8_t v) { outb((uint16_t)(base + reg), v); }
static uint8_t reg_read(uint16_t base, int reg) { return inb((uint16_t)(base + reg)); }

/* Sets the port up and checks that a UART answers: the scratch register
 * holds what we write on any 16450/16550, and in loopback mode a byte sent
 * comes back. Returns NULL, or what failed. */
static const char *uart_setup(uint16_t base, uint16_t divisor)
{
    reg_write(base, REG_SCRATCH, 0x5a);
    if (reg_read(base, REG_SCRATCH) != 0x5a)
        return "no UART (scratch register does not hold a byte)";
    reg_write(base, REG_IER, 0x00);            /* no UART interrupts */
    reg_write(base, REG_LCR, LCR_DLAB);
    reg_write(base, REG_DATA, (uint8_t)divisor);        /* divisor low */
    reg_write(base, REG_IER, (uint8_t)(divisor >> 8)); /* divisor high */
    reg_write(base, REG_LCR, 0x03);            /* 8N1 */
    reg_write(base, REG_FCR, 0xc7);            /* FIFO on, cleared, 14-byte threshold */
    reg_write(base, REG_MCR, MCR_LOOPBACK | MCR_DTR_RTS_OUT2);
    reg_write(base, REG_DATA, 0xae);
    bool echoed = false;
    for (int i = 0; i < POLL_LIMIT && !echoed; i++)
        echoed = (reg_read(base, REG_LSR) & LSR_DATA_READY) && reg_read(base, REG_DATA) == 0xae;
    reg_write(base, REG_MCR, MCR_DTR_RTS_OUT2); /* normal operation */
    return echoed ? 0 : "loopback byte did not come back";
}

static struct serial_port *add_port(uint16_t base, const char *kind, const char *source)
{
    for (uint32_t i = 0; base && i < nports; i++)
        if (ports[i].base == base)
            return 0; /* the BIOS named a port twice */
    if (nports == SERIAL_PORTS_MAX)
        return 0;
    struct serial_port *p = &ports[nports++];
    *p = (struct serial_port){ .base = base, .kind = kind, .source = source, .clock_hz = UART_STANDARD_CLOCK,
                               .divisor = 1, .rate = "standard" };
    return p;
}

/* The BIOS's word for its n-th serial port, when believable: the
 * equipment word must count that many ports, and the address must be a
 * plausible 8-byte UART block (UEFI firmware leaves zeros, or whatever a
 * CSM wrote long ago). */
static uint16_t bda_port(uint32_t n)
{
    uint32_t count = (*BDA_EQUIPMENT >> BDA_EQUIPMENT_SERIAL_SHIFT) & BDA_EQUIPMENT_SERIAL_MASK;
    uint16_t base = BDA_COM_PORTS[n];
    if (n >= count || base < SERIAL_PORT_MIN || base > SERIAL_PORT_MAX || (base & 7))
        return 0;
    return base;
}

static bool bda_lists(uint16_t base)
{
    for (uint32_t n = 0; n < 4; n++)
        if (bda_port(n) == base)
            return true;
    return false;
}

/* COM1-COM4 are named by their standard addresses, as BIOS setup screens
 * name them (the BIOS numbers its data-area slots by what it found, so a
 * lone 0x2F8 sits in slot 0 there). A data-area port elsewhere is added
 * as kind "bda". */
static void find_com_ports(void)
{
    for (uint32_t n = 0; n < 4; n++)
        add_port(standard_ports[n], com_names[n], bda_lists(standard_ports[n]) ? "bda" : "standard");
    for (uint32_t n = 0; n < 4; n++)
        if (bda_port(n))
            add_port(bda_port(n), "bda", "bda");
}

/* The I/O BARs of a PCI UART (a base of 0 with the problem when the
 * firmware left one unassigned), in BAR order; the device's I/O decoding
 * switched on. */
static uint32_t pci_io_bars(struct pci_address a, uint16_t bases[PCI_BAR_COUNT], const char *problems[PCI_BAR_COUNT])
{
    uint32_t n = 0;
    for (uint8_t bar = 0; bar < PCI_BAR_COUNT; bar++) {
        uint32_t v = pci_read32(a, (uint8_t)(PCI_BAR0 + 4 * bar));
        if (!(v & PCI_BAR_IO)) {
            if ((v & 0x6) == PCI_BAR_MEM_TYPE_64)
                bar++; /* a 64-bit memory BAR takes two slots */
            continue;
        }
        uint32_t base = v & ~3u;
        problems[n] = base == 0 ? "I/O BAR unassigned by the firmware"
                      : base > SERIAL_PORT_MAX ? "I/O BAR beyond the 64 KiB port space" : 0;
        bases[n] = problems[n] ? 0 : (uint16_t)base;
        n++;
    }
    uint32_t command = pci_read32(a, PCI_COMMAND) & 0xffff;
    if (n && !(command & PCI_COMMAND_IO)) /* firmware without a driver for it may leave decoding off */
        pci_write16(a, PCI_COMMAND, (uint16_t)(command | PCI_COMMAND_IO));
    return n;
}

static void add_pci_port(struct pci_address a, uint16_t base, const char *problem, const struct uart_model *m)
{
    struct serial_port *p = add_port(base, "pci", "pci");
    if (!p)
        return;
    p->is_pci = true;
    p->pci = a;
    p->problem = problem;
    p->model = m ? m->name : 0;
    uint32_t clock = pci_clock ? pci_clock : m ? m->clock_hz : UART_STANDARD_CLOCK, baud;
    p->rate = pci_clock ? "set" : m ? "known" : "unverified";
    p->clock_hz = clock;
    p->divisor = (uint16_t)uart_divisor(clock, SERIAL_BAUD, &baud);
    if (!p->divisor && !p->problem) {
        p->base = 0; /* never driven at a rate nobody can read */
        p->problem = "115200 baud is not reachable from its clock (serial_clock=)";
    }
}

static bool visit_pci(void *ctx, struct pci_address a, uint32_t class_rev)
{
    (void)ctx;
    uint8_t cls = (uint8_t)(class_rev >> 24), sub = (uint8_t)(class_rev >> 16), progif = (uint8_t)(class_rev >> 8);
    if (cls != PCI_CLASS_SERIAL || sub != PCI_SUBCLASS_UART || progif > PCI_PROGIF_16950)
        return true;
    uint16_t bases[PCI_BAR_COUNT];
    const char *problems[PCI_BAR_COUNT];
    uint32_t id = pci_read32(a, PCI_VENDOR_ID);
    const struct uart_model *m = uart_model_find((uint16_t)id, (uint16_t)(id >> 16));
    uint32_t n = pci_io_bars(a, bases, problems);
    if (n == 0)
        add_pci_port(a, 0, "no I/O BAR (memory-mapped only: not supported)", m);
    else if (m && m->ports) /* several UARTs behind the first I/O BAR */
        for (uint32_t i = 0; i < m->ports; i++)
            add_pci_port(a, bases[0] ? (uint16_t)(bases[0] + i * m->stride) : 0, problems[0], m);
    else /* one UART per I/O BAR */
        for (uint32_t i = 0; i < n; i++)
            add_pci_port(a, bases[i], problems[i], m);
    return nports < SERIAL_PORTS_MAX;
}

static bool wanted(const struct serial_port *p)
{
    switch (chosen) {
    case SERIAL_AUTO: return true;
    case SERIAL_COM1: case SERIAL_COM2: case SERIAL_COM3: case SERIAL_COM4:
        return !p->is_pci && p->kind == com_names[chosen - SERIAL_COM1];
    case SERIAL_PCI: return p->is_pci;
    case SERIAL_NONE: return false;
    default: return p->base == chosen;
    }
}

void serial_init(uint32_t choice, uint32_t clock_hz)
{
    chosen = choice;
    pci_clock = clock_hz;
    nports = 0;
    if (choice == SERIAL_NONE)
        return; /* told not to touch any UART */
    find_com_ports();
    pci_scanned = pci_present();
    if (pci_scanned)
        pci_each_function(visit_pci, 0);
    if (choice >= SERIAL_PORT_MIN) {
        bool known = false;
        for (uint32_t i = 0; i < nports; i++)
            known |= ports[i].base == choice;
        if (!known)
            add_port((uint16_t)choice, "port", "cmdline");
    }
    for (uint32_t i = 0; i < nports; i++) {
        struct serial_port *p = &ports[i];
        if (!p->base)
            continue;
        p->problem = uart_setup(p->base, p->divisor);
        p->works = !p->problem;
        p->used = p->works && wanted(p);
    }
}

bool serial_present(void)
{
    for (uint32_t i = 0; i < nports; i++)
        if (ports[i].used)
            return true;
    return false;
}

const struct serial_port *serial_ports(uint32_t *count)
{
    *count = nports;
    return ports;
}

uint32_t serial_choice(void) { return chosen; }
bool serial_pci_scanned(void) { return pci_scanned; }

/* One byte to every port in use: each waits for its own transmitter, so
 * ports with FIFOs send side by side rather than one after the other. */
void serial_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < nports; k++) {
            struct serial_port *p = &ports[k];
            if (!p->used)
                continue;
            int polls = 0;
            while (!(reg_read(p->base, REG_LSR) & LSR_THR_EMPTY) && ++polls < POLL_LIMIT)
                ;
            if (polls == POLL_LIMIT) {
                p->used = false; /* wedged: stop waiting for it */
                p->works = false;
                p->problem = "transmitter stopped emptying";
                continue;
            }
            reg_write(p->base, REG_DATA, (uint8_t)s[i]);
        }
    }
}

void serial_drain(void)
{
    for (uint32_t k = 0; k < nports; k++)
        for (int i = 0; ports[k].used && i < POLL_LIMIT; i++)
            if (reg_read(ports[k].base, REG_LSR) & LSR_TX_IDLE)
                break;
}

void serial_report(void)
{
    char text[16];
    struct config c = { .serial = chosen };
    rec_obj_begin("serial");
    rec_str("choice", config_value_name(&c, KEY_SERIAL));
    rec_arr_begin("used");
    for (uint32_t i = 0; i < nports; i++)
        if (ports[i].used) {
            fmt(text, sizeof text, "0x%x", ports[i].base);
            rec_str(0, text);
        }
    rec_arr_end();
    rec_arr_begin("ports");
    for (uint32_t i = 0; i < nports; i++) {
        const struct serial_port *p = &ports[i];
        rec_obj_begin(0);
        rec_str("kind", p->kind);
        if (p->base) {
            fmt(text, sizeof text, "0x%x", p->base);
            rec_str("port", text);
        } else {
            rec_null("port");
        }
        rec_str("source", p->source);
        if (p->is_pci) {
            fmt(text, sizeof text, "%02x:%02x.%x", p->pci.bus, p->pci.dev, p->pci.func);
            rec_str("pci", text);
            rec_str("model", p->model);
        }
        rec_str("rate", p->rate);
        rec_u64("clock_hz", p->clock_hz);
        rec_bool("works", p->works);
        rec_bool("used", p->used);
        if (p->problem)
            rec_str("problem", p->problem);
        rec_obj_end();
    }
    rec_arr_end();
    rec_bool("pci_scanned", pci_scanned);
    rec_obj_end();
}
