/* Every inline-asm wrapper of the kernel lives here (xv6's x86.h idea):
 * outside arch/, C code calls these and contains no asm of its own, except
 * a benchmark body's single measured instruction. */
#ifndef ARCH_X86_H
#define ARCH_X86_H

#include <stdint.h>

/* --- CPUID ---------------------------------------------------------------- */
struct cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid"
                     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(subleaf));
    return r;
}

/* --- time stamp counter ------------------------------------------------- */
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdtscp(uint32_t *aux)
{
    uint32_t lo, hi, c;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c));
    if (aux)
        *aux = c;
    return ((uint64_t)hi << 32) | lo;
}

static inline void lfence(void) { __asm__ volatile("lfence" ::: "memory"); }
static inline void mfence(void) { __asm__ volatile("mfence" ::: "memory"); }

/* CPUID as a full serialising instruction (the only one on a Pentium). */
static inline void cpuid_serialize(void)
{
    uint32_t a = 0, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) :: "memory");
}

/* --- flags, control registers ------------------------------------------- */
static inline uint32_t read_eflags(void)
{
    uint32_t f;
    __asm__ volatile("pushfl; popl %0" : "=r"(f));
    return f;
}

static inline void write_eflags(uint32_t f)
{
    __asm__ volatile("pushl %0; popfl" :: "r"(f) : "memory", "cc");
}

static inline uint32_t read_cr0(void) { uint32_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline uint32_t read_cr2(void) { uint32_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint32_t read_cr3(void) { uint32_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint32_t read_cr4(void) { uint32_t v; __asm__ volatile("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr0(uint32_t v) { __asm__ volatile("mov %0, %%cr0" :: "r"(v) : "memory"); }
static inline void write_cr3(uint32_t v) { __asm__ volatile("mov %0, %%cr3" :: "r"(v) : "memory"); }
static inline void write_cr4(uint32_t v) { __asm__ volatile("mov %0, %%cr4" :: "r"(v) : "memory"); }

/* --- model-specific registers -------------------------------------------- */
static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* --- port I/O ------------------------------------------------------------ */
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

/* --- atomics (lock-prefixed: what a spinlock on a multiprocessor pays) --- */
static inline uint32_t xchg32(volatile uint32_t *p, uint32_t v)
{
    __asm__ volatile("xchgl %0, %1" : "+r"(v), "+m"(*p) :: "memory");
    return v;
}

static inline uint32_t xadd32(volatile uint32_t *p, uint32_t v)
{
    __asm__ volatile("lock xaddl %0, %1" : "+r"(v), "+m"(*p) :: "memory", "cc");
    return v;
}

/* Compare-and-swap: if *p == expected, *p = desired. Returns the old *p
 * (486 and later; the ring-3 mutex fast path and the sub-heaps' remote
 * free lists use it). */
static inline uint32_t cmpxchg32(volatile uint32_t *p, uint32_t expected, uint32_t desired)
{
    __asm__ volatile("lock cmpxchgl %2, %1" : "+a"(expected), "+m"(*p) : "r"(desired) : "memory", "cc");
    return expected;
}

/* A compiler barrier: keeps loads and stores on their side of it. */
static inline void compiler_barrier(void) { __asm__ volatile("" ::: "memory"); }

/* --- TLB, interrupts, halting -------------------------------------------- */
static inline void invlpg(uintptr_t va) { __asm__ volatile("invlpg (%0)" :: "r"(va) : "memory"); }
static inline void clts(void) { __asm__ volatile("clts" ::: "memory"); }
static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
/* Whoever runs this code may want a say at each turn of a busy wait: a build
 * that defines CPU_WAIT_TURN() before this header (a statement) has it run
 * after every cpu_pause and busy_turn. The kernel defines none, and its
 * turns are the instruction alone. */
#ifndef CPU_WAIT_TURN
#define CPU_WAIT_TURN() ((void)0)
#endif
static inline void cpu_pause(void)
{
    __asm__ volatile("pause" ::: "memory");
    CPU_WAIT_TURN();
}
/* One turn of a busy wait that does not pause (a spinlock measured without
 * it): nothing but a compiler barrier, and the build's turn as cpu_pause's. */
static inline void busy_turn(void)
{
    __asm__ volatile("" ::: "memory");
    CPU_WAIT_TURN();
}
/* A short wait of `turns` turns of an empty loop: it touches no device and
 * gives no build its turn (a delay, not a busy wait on something). */
static inline void spin_turns(uint32_t turns)
{
    for (volatile uint32_t i = 0; i < turns; i++)
        compiler_barrier();
}
/* Interrupts on / off (only where a CPU takes IPIs on purpose: kernel/smp.h). */
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void ud2(void) { __asm__ volatile("ud2" ::: "memory"); }
static inline void int3(void) { __asm__ volatile("int3" ::: "memory"); }
static inline void fninit(void) { __asm__ volatile("fninit" ::: "memory"); }
/* Write back and invalidate every cache (changing the MTRRs needs it). */
static inline void wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }
/* `int 18`: enters the machine-check handler through the IDT as a real #MC
 * would (provoke=mc tests the fault path; no MCA register says "error"). */
static inline void int18(void) { __asm__ volatile("int $18" ::: "memory"); }

/* Halts until an interrupt, with IF=1 for the halt alone: an interrupt
 * already pending is not taken between sti and hlt (sti's one-instruction
 * shadow) but ends the halt at once, and IF is 0 again when this returns
 * (an idle CPU until its wake-up IPI; the QR pager, after done, until the
 * APIC timer's). */
static inline void halt_until_interrupt(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }

static inline __attribute__((noreturn)) void halt_forever(void)
{
    for (;;)
        __asm__ volatile("cli; hlt" ::: "memory");
}

/* --- descriptor tables ---------------------------------------------------- */
struct __attribute__((packed)) table_pointer {
    uint16_t limit;
    uint32_t base;
};

static inline void lgdt(const struct table_pointer *p) { __asm__ volatile("lgdt (%0)" :: "r"(p) : "memory"); }
static inline void lidt(const struct table_pointer *p) { __asm__ volatile("lidt (%0)" :: "r"(p) : "memory"); }
static inline void sgdt(struct table_pointer *p) { __asm__ volatile("sgdt (%0)" :: "r"(p) : "memory"); }
static inline void ltr(uint16_t sel) { __asm__ volatile("ltr %0" :: "r"(sel) : "memory"); }
static inline uint16_t str(void) { uint16_t s; __asm__ volatile("str %0" : "=r"(s)); return s; }

/* Reload CS with a far return and the data segment registers after lgdt. */
static inline void load_segments(uint16_t code, uint16_t data)
{
    __asm__ volatile("pushl %0\n\t"
                     "pushl $1f\n\t"
                     "lretl\n"
                     "1:\n\t"
                     "movw %w1, %%ds\n\t"
                     "movw %w1, %%es\n\t"
                     "movw %w1, %%fs\n\t"
                     "movw %w1, %%gs\n\t"
                     "movw %w1, %%ss\n\t"
                     :: "r"((uint32_t)code), "r"((uint32_t)data) : "memory");
}

/* --- FPU/SSE state (fiber creation captures a clean image) -------------- */
static inline void fxsave(void *area512) { __asm__ volatile("fxsave (%0)" :: "r"(area512) : "memory"); }
static inline void fxrstor(const void *area512) { __asm__ volatile("fxrstor (%0)" :: "r"(area512) : "memory"); }
static inline void fnsave(void *area108) { __asm__ volatile("fnsave (%0)" :: "r"(area108) : "memory"); }
static inline void frstor(const void *area108) { __asm__ volatile("frstor (%0)" :: "r"(area108) : "memory"); }

/* From a task entered through a task gate: back to the interrupted task. */
static inline void task_return(void) { __asm__ volatile("iret" ::: "memory"); }

/* Loads DS; a bad selector raises #GP (used to test fault reporting). */
static inline void load_ds(uint16_t sel) { __asm__ volatile("movw %0, %%ds" :: "r"(sel) : "memory"); }

/* --- the repeatable fill kernels (used by benchmarks and self-tests) ------ */
static inline void rep_stosd(void *dst, uint32_t value, uint32_t dwords)
{
    __asm__ volatile("rep stosl" : "+D"(dst), "+c"(dwords) : "a"(value) : "memory");
}

/* Page copies (twins, working copies, forked stacks). */
static inline void rep_movsd(void *dst, const void *src, uint32_t dwords)
{
    __asm__ volatile("rep movsl" : "+D"(dst), "+S"(src), "+c"(dwords) :: "memory");
}

/* The stack pointer: ring-3 code finds its thread's block from it (runtime/uabi.h). */
static inline uint32_t read_esp(void)
{
    uint32_t v;
    __asm__ volatile("movl %%esp, %0" : "=r"(v));
    return v;
}

/* One 32-bit store per iteration: in asm so the compiler can neither drop
 * nor vectorise it (the paper's "refill the buffer with zeroes"). */
static inline void store_loop_dwords(void *dst, uint32_t dwords)
{
    if (!dwords)
        return;
    __asm__ volatile("1:\n\t"
                     "movl $0, (%0)\n\t"
                     "addl $4, %0\n\t"
                     "decl %1\n\t"
                     "jnz 1b"
                     : "+r"(dst), "+r"(dwords)::"memory", "cc");
}

/* 16-byte SSE stores of zero; dst 16-byte aligned; needs SSE and CR4.OSFXSR. */
#ifdef __SSE__
#define XMM0_CLOBBER , "xmm0"
#else
#define XMM0_CLOBBER /* the kernel's C never uses SSE registers */
#endif
static inline void sse_store_blocks(void *dst, uint32_t blocks)
{
    if (!blocks)
        return;
    __asm__ volatile("xorps %%xmm0, %%xmm0\n"
                     "1:\n\t"
                     "movaps %%xmm0, (%0)\n\t"
                     "addl $16, %0\n\t"
                     "decl %1\n\t"
                     "jnz 1b"
                     : "+r"(dst), "+r"(blocks)::"memory", "cc" XMM0_CLOBBER);
}

#endif
