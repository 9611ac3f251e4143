/* Bit layouts of IA-32 control registers, descriptors and page tables. */
#ifndef ARCH_MMU_H
#define ARCH_MMU_H

#define CR0_PE (1u << 0)
#define CR0_MP (1u << 1)
#define CR0_EM (1u << 2)
#define CR0_TS (1u << 3)
#define CR0_NE (1u << 5)
#define CR0_WP (1u << 16)
#define CR0_NW (1u << 29)
#define CR0_CD (1u << 30)
#define CR0_PG (1u << 31)

#define CR4_PSE (1u << 4)
#define CR4_MCE (1u << 6) /* machine checks raise #MC instead of shutting the CPU down */
#define CR4_PGE (1u << 7)
#define CR4_OSFXSR (1u << 9)
#define CR4_OSXMMEXCPT (1u << 10)

#define EFLAGS_IF (1u << 9)
#define EFLAGS_ID (1u << 21)

/* Segment selectors of our GDT (index << 3 | RPL). */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UCODE 0x1b
#define SEL_UDATA 0x23
#define SEL_TSS 0x28
#define SEL_DF_TSS 0x30 /* the double-fault task */

/* Page directory / table entry bits. */
#define PTE_P (1u << 0)
#define PTE_W (1u << 1)
#define PTE_U (1u << 2)
#define PTE_PWT (1u << 3)
#define PTE_PCD (1u << 4)
#define PTE_A (1u << 5)
#define PTE_D (1u << 6)
#define PTE_PS (1u << 7) /* in a PDE: this entry maps a 4 MiB page */
#define PTE_G (1u << 8)
#define PTE_ADDR_MASK 0xfffff000u

#define PAGE_SIZE 4096u
#define LARGE_PAGE_SIZE (4u << 20)

/* Software bit of a PTE (bits 9-11 are the OS's): the frame came from the
 * threads' frame pool and goes back to it with the address space. */
#define PTE_OWNED (1u << 9)
#define PTE_FLAGS_MASK 0xfffu

/* sysenter/sysexit MSRs: sysenter loads CS from SYSENTER_CS, SS = CS + 8;
 * sysexit loads CS = SYSENTER_CS + 16 | 3 and SS = SYSENTER_CS + 24 | 3,
 * which is why the user selectors follow the kernel ones in our GDT. */
#define MSR_SYSENTER_CS 0x174
#define MSR_SYSENTER_ESP 0x175
#define MSR_SYSENTER_EIP 0x176

/* EFLAGS of ring-3 threads: only the reserved bit; interrupts stay off in
 * ring 3 too (IOPL 0: a thread cannot turn them on). */
#define EFLAGS_USER 0x2u

/* Page-fault error code bits. */
#define PF_PRESENT (1u << 0)
#define PF_WRITE (1u << 1)
#define PF_USER (1u << 2)

#endif
