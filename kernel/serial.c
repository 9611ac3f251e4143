#include "kernel/serial.h"

#include "arch/x86.h"

#define REG_DATA 0
#define REG_IER 1
#define REG_FCR 2
#define REG_LCR 3
#define REG_MCR 4
#define REG_LSR 5
#define REG_SCRATCH 7
#define LSR_THR_EMPTY 0x20
#define LSR_TX_IDLE 0x40
#define LCR_DLAB 0x80
#define MCR_LOOPBACK 0x10

/* At 115200 baud a byte takes ~87 us; a port read takes ~1 us on real
 * hardware. 100000 polls is far more than any working UART needs. */
#define POLL_LIMIT 100000

static bool present;

static void reg_write(int reg, uint8_t v) { outb(COM1_PORT + reg, v); }
static uint8_t reg_read(int reg) { return inb(COM1_PORT + reg); }

bool serial_init(void)
{
    /* The scratch register holds what we write on any 16450/16550. */
    reg_write(REG_SCRATCH, 0x5a);
    if (reg_read(REG_SCRATCH) != 0x5a) {
        present = false;
        return false;
    }
    reg_write(REG_IER, 0x00);            /* no UART interrupts */
    reg_write(REG_LCR, LCR_DLAB);
    reg_write(REG_DATA, (uint8_t)(115200 / SERIAL_BAUD)); /* divisor low */
    reg_write(REG_IER, 0x00);            /* divisor high */
    reg_write(REG_LCR, 0x03);            /* 8N1 */
    reg_write(REG_FCR, 0xc7);            /* FIFO on, cleared, 14-byte threshold */
    /* Loopback check: a byte sent must come back. */
    reg_write(REG_MCR, MCR_LOOPBACK | 0x0b);
    reg_write(REG_DATA, 0xae);
    bool echoed = false;
    for (int i = 0; i < POLL_LIMIT && !echoed; i++)
        echoed = (reg_read(REG_LSR) & 1) && reg_read(REG_DATA) == 0xae;
    reg_write(REG_MCR, 0x0b);            /* normal operation, DTR+RTS+OUT2 */
    present = echoed;
    return present;
}

bool serial_present(void) { return present; }

void serial_write(const char *s, size_t n)
{
    if (!present)
        return;
    for (size_t i = 0; i < n; i++) {
        int polls = 0;
        while (!(reg_read(REG_LSR) & LSR_THR_EMPTY)) {
            if (++polls == POLL_LIMIT) {
                present = false; /* wedged: stop waiting for it */
                return;
            }
        }
        reg_write(REG_DATA, (uint8_t)s[i]);
    }
}

void serial_drain(void)
{
    for (int i = 0; present && i < POLL_LIMIT; i++)
        if (reg_read(REG_LSR) & LSR_TX_IDLE)
            return;
}
