; The system call stubs of ring-3 code (in the user pages: the file name
; ends in _user, see linker.ld). cdecl:
;   uint32_t usys_int80(nr, a, b, c)  /  usys_sysenter(nr, a, b, c)
; EAX = nr, EBX/ESI/EDI = a/b/c, result in EAX. ECX and EDX are clobbered
; (sysenter carries ESP and the return address in them).

section .text
global usys_int80, usys_sysenter

usys_int80:
    push ebx
    push esi
    push edi
    mov eax, [esp + 16]
    mov ebx, [esp + 20]
    mov esi, [esp + 24]
    mov edi, [esp + 28]
    int 0x80
    pop edi
    pop esi
    pop ebx
    ret

usys_sysenter:
    push ebx
    push esi
    push edi
    mov eax, [esp + 16]
    mov ebx, [esp + 20]
    mov esi, [esp + 24]
    mov edi, [esp + 28]
    mov ecx, esp
    mov edx, .back
    sysenter
.back:
    pop edi
    pop esi
    pop ebx
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
