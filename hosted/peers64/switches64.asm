; cleanroom's switch routines ported to x86-64 (System V ABI), for the
; 64-bit peers helper: the same contract as runtime/switches.asm, so the
; helper's rows measure the routine, not a different design.
;
; Contract: RDI (the first argument) holds the address of a state word that
; contains the stack pointer of the side to run. The routine saves the
; running side's callee-saved registers on its own stack, swaps RSP with the
; state word (which then holds the suspended side's stack pointer), and
; restores the other side's registers from its stack. From C:
;     void switch64_callee(uint64_t *state_word);
;
; Frame while suspended, lowest address first (switch64_frame in
; hosted/peers64/peers64.c builds the same one for a side that has not run yet):
;   r15 r14 r13 r12 rbx rbp, resume address              56 bytes
; The System V callee-saved set is rbx, rbp, r12-r15 (plus MXCSR's and the
; x87 control word's control bits, which nothing here changes: like the
; 32-bit callee routine these do not save them; Boost.Context's
; jump_fcontext does).
;
; switch64_callee returns with `ret`, which the return-stack buffer
; predicts as the address after the caller's own `call`: right when both
; sides call the switch from one call site, wrong on every switch when a
; driver and a coroutine call it from two (the other side resumes after
; *its* call).
;
; switch64_jump is runtime/switches.asm's switch_jump on x86-64: the same
; frame; it compares the other side's resume address with its own return
; address and leaves by `ret` when they are equal (predicted, and call and
; ret stay paired), else pops the resume address and jumps to it (an
; indirect jump is predicted from its own target history, which learns the
; alternation; a new side's first entry takes this path too).
;
; switch64_popjmp always pops and jumps, as Boost.Context's jump_fcontext
; leaves: the unpaired `call` it leaves on the return-stack buffer is what
; switch64_jump's `ret` path avoids.

default rel
section .text
global switch64_callee, switch64_jump, switch64_popjmp, switch64_start

%macro save 0
    push rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
%endmacro

%macro swap_and_restore 0
    mov rax, [rdi]
    mov [rdi], rsp
    mov rsp, rax
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
%endmacro

switch64_callee:
    save
    swap_and_restore
    ret

switch64_jump:
    save
    mov rdx, [rsp + 48]     ; our own resume address (rdx: caller-saved, free here)
    swap_and_restore
    cmp rdx, [rsp]
    jne .elsewhere
    ret
.elsewhere:
    pop rcx                 ; the other side's resume address (or a new side's start)
    jmp rcx

switch64_popjmp:
    save
    swap_and_restore
    pop rcx
    jmp rcx

; Where a new side's first switch lands (its frame's resume address):
; rbx holds the entry function's argument, r12 the function. RSP is
; 16-byte aligned here, as the ABI wants it before a call. The entry must
; never return: it ends by switching away for good.
switch64_start:
    mov rdi, rbx
    call r12
    ud2

section .note.GNU-stack noalloc noexec nowrite progbits
