; Multiboot v1 header and entry point.
;
; GRUB (or QEMU -kernel) jumps here in 32-bit protected mode with paging off,
; EAX = multiboot magic and EBX = physical address of the multiboot info.
; We only give ourselves a stack and hand both to kmain, which never returns.

MB_MAGIC      equ 0x1BADB002
MB_PAGE_ALIGN equ 1 << 0        ; modules page aligned
MB_MEMINFO    equ 1 << 1        ; we want mem_* and the memory map
MB_VIDEO      equ 1 << 2        ; we want a screen: the mode fields below
MB_FLAGS      equ MB_PAGE_ALIGN | MB_MEMINFO | MB_VIDEO

; Mode type 1 (EGA text) rather than 0 (linear graphics): GRUB then keeps
; text mode where the machine has one (BIOS: the VGA text mirror goes on
; working) and, where it has none (UEFI), still sets a linear framebuffer
; and reports it in the multiboot info, which kernel/fbcon.c draws on.
; Mode type 0 would make GRUB switch a BIOS machine to VBE graphics too.
MB_MODE_EGA_TEXT equ 1

BOOT_STACK_SIZE equ 64 * 1024

section .multiboot
align 4
    dd MB_MAGIC
    dd MB_FLAGS
    dd -(MB_MAGIC + MB_FLAGS)
    ; Address fields: present because the mode fields follow them, unused
    ; (flag bit 16 is clear: loaders take the addresses from the ELF).
    dd 0, 0, 0, 0, 0            ; header, load, load_end, bss_end, entry
    dd MB_MODE_EGA_TEXT
    dd 0, 0, 0                  ; width, height, depth: no preference

section .bss
; The page below the stack stays unmapped once paging is on (arch/paging.c),
; so a kernel stack overflow faults instead of corrupting what lies below.
align 4096
global boot_stack_guard, boot_stack_bottom, boot_stack_top
boot_stack_guard:
    resb 4096
boot_stack_bottom:
    resb BOOT_STACK_SIZE
boot_stack_top:

section .text
global _start
extern kmain
_start:
    cli
    cld
    mov esp, boot_stack_top
    xor ebp, ebp                ; terminates frame-pointer walks
    push 0                      ; keep the stack 16-byte aligned at the call
    push 0
    push ebx                    ; multiboot info
    push eax                    ; multiboot magic
    call kmain
.hang:
    cli
    hlt
    jmp .hang

section .note.GNU-stack noalloc noexec nowrite progbits
