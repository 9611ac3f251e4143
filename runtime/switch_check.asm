; Self-test helpers for the switch routines: does a switch away and back
; preserve what it promises to (app/selftests.c, fiber tests)?
;
;   uint32_t switch_check(switch_fn sw, uint32_t *word, uint32_t what)
;       loads ebx, esi, edi, ebp with patterns (and, per `what`, a non-default
;       x87 control word (bit 0) and an xmm1 pattern (bit 1)), calls sw(word),
;       and when control comes back returns a mask of what changed:
;       bits 0-3 ebx, esi, edi, ebp; bit 4 x87 control word; bit 5 xmm1.
;   void switch_clobber(switch_fn sw, uint32_t *word, uint32_t what)
;       the other fiber: trashes the same state (fninit, xorps) and switches
;       back. It is never resumed.
; Both call sw from a call site of their own, unless `what` bit 2 says one
; site: then both call it from switch_call_shared, so the switch is
; resumed at the address it was called from (switch_jump's `ret` path; its
; `jmp` path is the other).

section .text
global switch_check, switch_clobber

PAT_EBX equ 0x1b1b1b1b
PAT_ESI equ 0x5e5e5e5e
PAT_EDI equ 0xd1d1d1d1
PAT_EBP equ 0xb9b9b9b9
PAT_FCW equ 0x027f          ; precision control 53 bits; the default (fninit) is 0x037f

switch_check:
    push ebp
    push ebx
    push esi
    push edi
    sub esp, 48                 ; [esp]: control word scratch, [esp+16]: 16-byte aligned xmm area
    mov eax, [esp + 48 + 28]    ; what
    test eax, 1
    jz .no_fpu_set
    mov word [esp], PAT_FCW
    fldcw [esp]
.no_fpu_set:
    test eax, 2
    jz .no_sse_set
    lea edx, [esp + 16 + 15]
    and edx, -16
    mov dword [edx], PAT_EBX
    mov dword [edx + 4], PAT_ESI
    mov dword [edx + 8], PAT_EDI
    mov dword [edx + 12], PAT_EBP
    movups xmm1, [edx]
.no_sse_set:
    mov eax, [esp + 48 + 20]    ; sw
    mov ecx, [esp + 48 + 24]    ; word
    mov edx, [esp + 48 + 28]    ; what
    mov ebx, PAT_EBX
    mov esi, PAT_ESI
    mov edi, PAT_EDI
    mov ebp, PAT_EBP
    test edx, 4
    jz .own_site
    call switch_call_shared
    jmp .back
.own_site:
    call eax
.back:
    xor eax, eax
    cmp ebx, PAT_EBX
    je .ebx_ok
    or eax, 1
.ebx_ok:
    cmp esi, PAT_ESI
    je .esi_ok
    or eax, 2
.esi_ok:
    cmp edi, PAT_EDI
    je .edi_ok
    or eax, 4
.edi_ok:
    cmp ebp, PAT_EBP
    je .ebp_ok
    or eax, 8
.ebp_ok:
    mov edx, [esp + 48 + 28]    ; what
    test edx, 1
    jz .no_fpu_check
    fnstcw [esp]
    cmp word [esp], PAT_FCW
    je .fcw_ok
    or eax, 16
.fcw_ok:
    fninit                      ; leave the FPU as the kernel expects it
.no_fpu_check:
    test edx, 2
    jz .done
    lea edx, [esp + 16 + 15]
    and edx, -16
    movups [edx], xmm1
    cmp dword [edx], PAT_EBX
    jne .xmm_bad
    cmp dword [edx + 12], PAT_EBP
    je .done
.xmm_bad:
    or eax, 32
.done:
    add esp, 48
    pop edi
    pop esi
    pop ebx
    pop ebp
    ret

switch_clobber:
    mov eax, [esp + 4]          ; sw
    mov ecx, [esp + 8]          ; word
    mov edx, [esp + 12]         ; what
    test edx, 1
    jz .no_fpu
    fninit
.no_fpu:
    test edx, 2
    jz .no_sse
    xorps xmm1, xmm1
.no_sse:
    xor ebx, ebx
    xor esi, esi
    xor edi, edi
    xor ebp, ebp
    test edx, 4
    jz .own_site
    call switch_call_shared
    jmp .never
.own_site:
    call eax
.never:
    jmp .never

; The one call site of both sides when `what` bit 2 is set: sw in eax, the
; word in ecx; callee-saved registers untouched.
switch_call_shared:
    call eax
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
