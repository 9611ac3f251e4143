; The system call stubs of ring-3 code (in the user pages: the file name
; ends in _user, see linker.ld). cdecl:
;   uint32_t usys_int80(nr, a, b, c)  /  usys_sysenter(nr, a, b, c)
; EAX = nr, EBX/ESI/EDI = a/b/c, result in EAX. ECX and EDX are clobbered
; (sysenter carries ESP and the return address in them).

; Saves the callee-saved registers the call uses and loads nr, a, b, c.
%macro load_call 0
    push ebx
    push esi
    push edi
    mov eax, [esp + 16]
    mov ebx, [esp + 20]
    mov esi, [esp + 24]
    mov edi, [esp + 28]
%endmacro

%macro return_call 0
    pop edi
    pop esi
    pop ebx
    ret
%endmacro

section .text
global usys_int80, usys_sysenter

usys_int80:
    load_call
    int 0x80
    return_call

usys_sysenter:
    load_call
    mov ecx, esp
    mov edx, .back
    sysenter
.back:
    return_call

section .note.GNU-stack noalloc noexec nowrite progbits
