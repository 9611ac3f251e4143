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
;   switch_jump    the same frame as switch_callee; `ret` or `jmp`, whichever predicts
;   switch_fxsave  callee + 512-byte FXSAVE image, 16-byte aligned
;   switch_fnsave  callee + 108-byte FNSAVE image (CPUs without FXSR)

; The System V callee-saved registers, in the frame order above (the
; restore is the save's mirror image).
%macro SAVE_CALLEE 0
    push ebp
    push ebx
    push esi
    push edi
%endmacro
%macro RESTORE_CALLEE 0
    pop edi
    pop esi
    pop ebx
    pop ebp
%endmacro

section .text
global switch_pushad, switch_callee, switch_jump, switch_fxsave, switch_fnsave

; The paper's routine, instruction for instruction.
switch_pushad:
    pushad
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    popad
    ret

switch_callee:
    SAVE_CALLEE
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    RESTORE_CALLEE
    ret

; switch_callee's frame and contract, but it does not fight the return
; predictor. A `ret` is predicted by the return-stack buffer, which holds
; the address after our own `call`: right when both fibers call the switch
; from the same place (the paper's pair), wrong on every switch when they
; call it from different places (a driver and a coroutine, the way
; coroutine libraries are used): the other side resumes after *its* call.
; So the routine compares the other side's resume address with its own
; return address. Equal: `ret`, which the buffer predicts, and call and ret
; stay paired. Different: it pops the other side's resume address into a
; register and jumps to it; an indirect jump is predicted from the jump's
; own target history, which learns the alternation (a new fiber's entry
; takes this path too). The jump leaves our `call`'s entry on the buffer;
; it is circular, so the calls and returns after the switch still pair up,
; but an unpaired call is not free: on the development machine (AMD family
; 26) a switch that always jumped cost 14-15 TSC ticks in the paper's pair,
; against 7 for switch_callee's predicted `ret`. Hence `ret` wherever it
; predicts right. The compare-and-branch goes the same way every time in
; either shape, so it predicts right too; the jump falls through it, since
; a taken branch just before the indirect jump cost the asymmetric shape
; about 2 ticks there, which the `ret` side does not notice.
switch_jump:
    SAVE_CALLEE
    mov edx, [esp + 16]         ; our own resume address: what the buffer predicts
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    RESTORE_CALLEE
    cmp edx, [esp]
    je .same_site
    pop ecx                     ; the other side's resume address (or a new fiber's entry)
    jmp ecx
.same_site:
    ret

; Stack while suspended: [esp] = esp before the image, [esp+4..] image
; (16-byte aligned), then edi, esi, ebx, ebp, return address.
switch_fxsave:
    SAVE_CALLEE
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
    RESTORE_CALLEE
    ret

switch_fnsave:
    SAVE_CALLEE
    sub esp, 108
    fnsave [esp]
    mov eax, [ecx]
    mov [ecx], esp
    mov esp, eax
    frstor [esp]
    add esp, 108
    RESTORE_CALLEE
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
