; setjmp/longjmp for expected faults (kernel/fault.c).
;
;   int catch_call(void (*fn)(void *), void *arg, struct catch_frame *f)
;       saves the callee-saved registers, the stack pointer and a resume
;       address in *f, calls fn(arg) and returns 0 when it returns.
;   void catch_resume(const struct catch_frame *f)
;       called from an exception handler: abandons the exception's stack
;       frames and makes the pending catch_call return 1.
;
; struct catch_frame layout (arch/catch.h): ebx, esi, edi, ebp, esp, eip.

section .text
global catch_call, catch_resume

catch_call:
    mov eax, [esp + 12]         ; f
    mov [eax + 0], ebx
    mov [eax + 4], esi
    mov [eax + 8], edi
    mov [eax + 12], ebp
    mov [eax + 16], esp         ; points at our return address
    mov dword [eax + 20], .resumed
    push dword [esp + 8]        ; arg
    call [esp + 8]              ; fn (shifted by the push)
    add esp, 4
    xor eax, eax
    ret
.resumed:
    mov eax, 1
    ret

catch_resume:
    mov eax, [esp + 4]
    mov ebx, [eax + 0]
    mov esi, [eax + 4]
    mov edi, [eax + 8]
    mov ebp, [eax + 12]
    mov esp, [eax + 16]
    jmp [eax + 20]

section .note.GNU-stack noalloc noexec nowrite progbits
