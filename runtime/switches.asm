; Fiber switch routines. All share one contract, the one of Klimiankou
; 2018, section 3.3: ECX holds the address of a state word that contains
; the stack pointer of the fiber to run. The routine saves the running
; fiber's state on its own stack, swaps ESP with the state word (which then
; holds the suspended fiber's stack pointer), and restores the other fiber's
; state from its stack. Called from C as  fastcall void f(uint32_t *word).
;
; What each saves (its frame, lowest address first; fiber creation in
; runtime/fiber.c builds the same frames):
;   switch_pushad  eight general registers (pushad)                 36 bytes with the return address
;   switch_callee  edi, esi, ebx, ebp (the System V callee-saved)   20 bytes
;   switch_fxsave  callee + 512-byte FXSAVE image, 16-byte aligned
;   switch_fnsave  callee + 108-byte FNSAVE image (CPUs without FXSR)

section .text
global switch_pushad, switch_callee, switch_fxsave, switch_fnsave

; The paper's routine, instruction for instruction.
switch_pushad:
    pushad
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    popad
    ret

switch_callee:
    push ebp
    push ebx
    push esi
    push edi
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    pop edi
    pop esi
    pop ebx
    pop ebp
    ret

; Stack while suspended: [esp] = esp before the image, [esp+4..] image
; (16-byte aligned), then edi, esi, ebx, ebp, return address.
switch_fxsave:
    push ebp
    push ebx
    push esi
    push edi
    mov eax, esp
    sub esp, 512
    and esp, -16
    push eax
    fxsave [esp + 4]
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    fxrstor [esp + 4]
    pop esp
    pop edi
    pop esi
    pop ebx
    pop ebp
    ret

switch_fnsave:
    push ebp
    push ebx
    push esi
    push edi
    sub esp, 108
    fnsave [esp]
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    frstor [esp]
    add esp, 108
    pop edi
    pop esi
    pop ebx
    pop ebp
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
