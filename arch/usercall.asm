; Running the user's code and taking it back, whatever it did to the state
; the harness lives on (arch/usercall.h).
;
;   uint32_t usercall(const void *code, void *scratch, struct usercall_seen *seen)
;       saves the callee-saved registers, EFLAGS and the data segments on
;       the stack, notes ESP, SS and DS, sets EAX = EBX = ECX = EDX = 0 and
;       ESI = EDI = EBP = scratch, and jumps to code. The code's buffer ends
;       with usercall_tail's bytes (an absolute indirect jump through CS, so
;       they run wherever they are copied, whatever DS holds), which bring it
;       back here: the code's ESP, EBP, segments and EFLAGS are noted before
;       anything trusts them, the harness's come back, DF is cleared, EFLAGS
;       (IF with it) is restored, and the mask of what the code changed that
;       it must leave (ESP, EBP, a segment register, IF, DF) is returned;
;       *seen gets the values it came back with.
;
; struct usercall_seen layout (arch/usercall.h): esp, ebp, eflags, ds, es,
; fs, gs, ss.

USERCALL_ESP  equ 1
USERCALL_EBP  equ 2
USERCALL_SEGS equ 4
USERCALL_IF   equ 8
USERCALL_DF   equ 16
EFLAGS_IF     equ 0x200
EFLAGS_DF     equ 0x400

section .data
align 4
usercall_back_ptr: dd back
saved_esp:  dd 0    ; the harness's stack pointer, the code's expected one at its end
saved_ss:   dd 0
saved_ds:   dd 0
expect_ebp: dd 0
entry:      dd 0
seen_ptr:   dd 0
back_esp:   dd 0
back_ebp:   dd 0
back_ss:    dd 0

section .text
global usercall, usercall_tail, usercall_tail_end

usercall:
    push ebp
    push ebx
    push esi
    push edi
    pushfd
    push ds
    push es
    push fs
    push gs
    mov eax, [esp + 40]         ; code (9 words pushed above the return address)
    mov [entry], eax
    mov eax, [esp + 48]         ; seen
    mov [seen_ptr], eax
    mov esi, [esp + 44]         ; scratch
    mov [expect_ebp], esi
    mov [saved_esp], esp
    mov [saved_ss], ss          ; 16-bit stores: `mov r32, sreg` leaves the top half undefined on old CPUs
    mov [saved_ds], ds
    mov edi, esi
    mov ebp, esi
    xor eax, eax
    xor ebx, ebx
    xor ecx, ecx
    xor edx, edx
    jmp dword [entry]

back:
    ; nothing here may trust DS, SS or ESP until they are the harness's again: the code's values go into
    ; registers first (mov changes no flag, so EFLAGS stays the code's), and the harness's DS is read
    ; through CS (flat and readable, in the kernel and in a Linux process alike)
    mov ecx, esp
    mov edx, ebp
    mov bx, ds
    mov si, ss
    mov di, es
    mov ax, [cs:saved_ds]
    mov ds, ax
    mov [back_esp], ecx
    mov [back_ebp], edx
    mov [back_ss], si
    mov ss, [saved_ss]
    mov esp, [saved_esp]
    pushfd
    mov eax, [seen_ptr]
    pop dword [eax + 8]         ; eflags as the code left it
    movzx ebx, bx               ; each segment zero-extended
    mov [eax + 12], ebx
    movzx edi, di
    mov [eax + 16], edi
    xor ecx, ecx
    mov cx, fs
    mov [eax + 20], ecx
    mov cx, gs
    mov [eax + 24], ecx
    movzx ecx, word [back_ss]
    mov [eax + 28], ecx
    mov ecx, [back_esp]
    mov [eax + 0], ecx
    mov ecx, [back_ebp]
    mov [eax + 4], ecx
    mov ebx, eax
    pop gs                      ; the harness's segments again
    pop fs
    pop es
    pop ds
    cld
    xor eax, eax                ; what changed that must not
    mov ecx, [ebx + 0]
    cmp ecx, [saved_esp]
    je .esp_ok
    or eax, USERCALL_ESP
.esp_ok:
    mov ecx, [ebx + 4]
    cmp ecx, [expect_ebp]
    je .ebp_ok
    or eax, USERCALL_EBP
.ebp_ok:
    mov ecx, [ebx + 12]
    xor edx, edx
    mov dx, ds
    cmp ecx, edx
    jne .segs_bad
    mov ecx, [ebx + 16]
    mov dx, es
    cmp ecx, edx
    jne .segs_bad
    mov ecx, [ebx + 20]
    mov dx, fs
    cmp ecx, edx
    jne .segs_bad
    mov ecx, [ebx + 24]
    mov dx, gs
    cmp ecx, edx
    jne .segs_bad
    mov ecx, [ebx + 28]
    mov dx, ss
    cmp ecx, edx
    je .segs_ok
.segs_bad:
    or eax, USERCALL_SEGS
.segs_ok:
    mov ecx, [ebx + 8]
    xor ecx, [esp]              ; the harness's EFLAGS, pushed on entry
    test ecx, EFLAGS_IF
    jz .if_ok
    or eax, USERCALL_IF
.if_ok:
    test dword [ebx + 8], EFLAGS_DF
    jz .df_ok
    or eax, USERCALL_DF
.df_ok:
    popfd
    pop edi
    pop esi
    pop ebx
    pop ebp
    ret

; The buffer's last bytes: back to `back` from anywhere.
usercall_tail:
    jmp dword [cs:usercall_back_ptr]    ; through CS: the code may have loaded DS with anything
usercall_tail_end:

section .note.GNU-stack noalloc noexec nowrite progbits
