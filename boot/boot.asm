; Multiboot v1 and multiboot2 headers and the entry point.
;
; The loader jumps here in 32-bit protected mode with paging off, EAX = its
; magic (multiboot v1's or multiboot2's) and EBX = the physical address of
; its information. QEMU's -kernel speaks v1 only and puts the image at its
; link address; GRUB's `multiboot2` reads the multiboot2 header, which says
; the image is relocatable, and puts it wherever its memory map has room
; (linker.ld says why). Before anything uses an absolute address, the entry
; fixes up every one of them by how far the image was moved (the table of
; where they are is written into the image after the link by
; tools/cleanroom_host/relocs.py); then it gives itself a stack and hands
; EAX and EBX to kmain, which never returns.

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

; Multiboot2 (the specification's section 3.1): a header of tags.
MB2_MAGIC           equ 0xE85250D6
MB2_ARCH_I386       equ 0
MB2_TAG_OPTIONAL    equ 1
MB2_TAG_END         equ 0
MB2_TAG_INFO_REQUEST equ 1
MB2_TAG_CONSOLE     equ 4
MB2_TAG_FRAMEBUFFER equ 5
MB2_TAG_RELOCATABLE equ 10
MB2_CONSOLE_EGA_TEXT equ 1 << 1 ; "EGA text supported"
MB2_PREFER_LOWEST   equ 1
; Information tags asked for: command line, loader name, memory map,
; framebuffer, ACPI old and new RSDP, EFI memory map, image load base.
MB2_INFO_CMDLINE    equ 1
MB2_INFO_LOADER     equ 2
MB2_INFO_MMAP       equ 6
MB2_INFO_FB         equ 8
MB2_INFO_ACPI_OLD   equ 14
MB2_INFO_ACPI_NEW   equ 15
MB2_INFO_EFI_MMAP   equ 17
MB2_INFO_LOAD_BASE  equ 21
MB2_LOADER_MAGIC    equ 0x36D76289

; Where GRUB may put the image: above the first MiB (real-mode and BIOS
; data), ending below 4 MiB (arch/paging.c maps the kernel through the
; first page table), on a page boundary (the sections are page aligned).
RELOC_MIN   equ 0x100000
RELOC_MAX   equ 0x400000
RELOC_ALIGN equ 4096

; Room for tools/cleanroom_host/relocs.py's table: one 16-bit step per
; absolute address in the image (about 4600 today: 9 KiB); the build
; fails, naming this, if it outgrows it.
RELOC_TABLE_BYTES equ 24576
RELOC_SKIP        equ 0xFFFF    ; a step of 0 means: advance this far, fix nothing

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

align 8
mb2_header:
    dd MB2_MAGIC, MB2_ARCH_I386, mb2_header_end - mb2_header
    dd 0x100000000 - (MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
align 8
.info:                          ; optional: GRUB gives what it has, and says so by the tags
    dw MB2_TAG_INFO_REQUEST, MB2_TAG_OPTIONAL
    dd .info_end - .info
    dd MB2_INFO_CMDLINE, MB2_INFO_LOADER, MB2_INFO_MMAP, MB2_INFO_FB
    dd MB2_INFO_ACPI_OLD, MB2_INFO_ACPI_NEW, MB2_INFO_EFI_MMAP, MB2_INFO_LOAD_BASE
.info_end:
align 8
; The screen, as v1's mode type 1 asks: EGA text where there is text mode,
; a framebuffer of any mode where there is none. Multiboot2 has no mode
; type: this tag pair says both are fine, and GRUB then asks for graphics
; on a BIOS too unless grub.cfg sets gfxpayload=text there (iso/grub.cfg,
; the tool's generated one).
    dw MB2_TAG_CONSOLE, 0
    dd 12, MB2_CONSOLE_EGA_TEXT
align 8
    dw MB2_TAG_FRAMEBUFFER, MB2_TAG_OPTIONAL
    dd 20, 0, 0, 0              ; width, height, depth: no preference
align 8
    dw MB2_TAG_RELOCATABLE, 0
    dd 24, RELOC_MIN, RELOC_MAX, RELOC_ALIGN, MB2_PREFER_LOWEST
align 8
    dw MB2_TAG_END, 0
    dd 8
mb2_header_end:

; Written after the link (tools/cleanroom_host/relocs.py): the number of steps, then one
; 16-bit step per absolute address, each from the previous one (the first
; from the image's start).
section .reloc progbits alloc noexec nowrite align=4
global reloc_table
reloc_table:
    dd 0
    times RELOC_TABLE_BYTES db 0

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
extern kmain, _kernel_start
_start:
    cli
    cld
    ; How far the loader moved the image: multiboot2's load-base tag (21)
    ; says where it put it. No stack yet (the loader leaves ESP undefined),
    ; so only registers; EAX and EBX are kept for kmain.
    xor ebp, ebp
    cmp eax, MB2_LOADER_MAGIC
    jne .placed
    lea esi, [ebx + 8]          ; the first tag
    mov edi, [ebx]              ; the information's total size
    add edi, ebx
.tag:
    cmp esi, edi                ; no end tag within it: take it as not moved
    jae .placed
    mov ecx, [esi]
    test ecx, ecx               ; the end tag: no load base, not moved
    jz .placed
    cmp ecx, MB2_INFO_LOAD_BASE
    je .load_base
    mov ecx, [esi + 4]          ; tags are 8-byte aligned
    add ecx, 7
    and ecx, ~7
    add esi, ecx
    jmp .tag
.load_base:
    mov ebp, [esi + 8]
    sub ebp, _kernel_start      ; (its own address, as linked: nothing is fixed up yet)
    jz .placed
    ; Add the distance to every absolute address in the image. The table
    ; and the image are where they were loaded: their linked addresses
    ; plus the distance.
    lea esi, [reloc_table + ebp]
    mov ecx, [esi]
    add esi, 4
    lea edi, [_kernel_start + ebp]
.fix:
    jecxz .placed
    dec ecx
    movzx edx, word [esi]
    add esi, 2
    test edx, edx
    jz .skip
    add edi, edx
    add [edi], ebp
    jmp .fix
.skip:
    add edi, RELOC_SKIP
    jmp .fix
.placed:
    ; From here on absolute addresses are right (a 486 refetches after the
    ; jumps above; later CPUs watch for stores into code).
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
