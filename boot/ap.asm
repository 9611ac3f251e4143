; The other CPUs' way in (cpus=N, kernel/smp.c). A SIPI starts a CPU in
; real mode at CS = page >> 4, IP = 0: kernel/smp.c copies the 16-bit part
; below (ap_trampoline .. ap_trampoline_end, position-independent: it
; addresses only itself, through CS) to a free page under 1 MiB and fills
; in ap_gdtr (the CPU's own GDT, arch/gdt.h) before each start. The CPU
; loads that GDT, turns on protection and jumps to ap_entry32 at its
; linked address in the kernel, which takes the stack kernel/smp.c left
; in ap_boot_stack (atomically: a CPU that comes up late, after the boot
; CPU gave up on it, finds 0 there and halts) and calls ap_main.

%include "arch/selectors.inc"

CR0_PE equ 1

section .text
bits 16
global ap_trampoline, ap_trampoline_end, ap_gdtr
ap_trampoline:
    cli
    cld
    mov ax, cs
    mov ds, ax
    o32 lgdt [ap_gdtr - ap_trampoline]
    mov eax, cr0
    or eax, CR0_PE
    mov cr0, eax
    jmp dword SEL_KCODE:ap_entry32
align 4
    dw 0                        ; so that ap_gdtr's base is 4-byte aligned
ap_gdtr:
    dw 0                        ; limit
    dd 0                        ; base
ap_trampoline_end:

bits 32
extern ap_boot_stack, ap_main
ap_entry32:
    mov ax, SEL_KDATA
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov fs, ax
    mov gs, ax
    xor eax, eax
    xchg eax, [ap_boot_stack]   ; xchg with memory is locked
    test eax, eax
    jz .park
    mov esp, eax
    xor ebp, ebp
    call ap_main
.park:
    cli
    hlt
    jmp .park

section .note.GNU-stack noalloc noexec nowrite progbits
