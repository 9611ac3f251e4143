; Running the user's code and taking it back, whatever it did to the state
; the harness lives on (arch/usercall.h).
;
;   uint32_t usercall(const void *code, void *scratch, struct usercall_seen *seen)
;       saves the callee-saved registers, EFLAGS and the data segments on
;       the stack, notes ESP, SS and DS, sets EAX = EBX = ECX = EDX = 0 and
;       ESI = EDI = EBP = scratch, and jumps to code. The code's buffer ends
;       with usercall_tail's bytes (an absolute indirect jump through CS, so
;       they run wherever they are copied, whatever DS holds), which bring it
;       back to `back`.
;
;   uint32_t usercall_cdecl(void (*fn)(void *, uint32_t), void *a, uint32_t b, struct usercall_seen *seen)
;       the same around a C function of the user's (lib/userabi.h): fn(a, b)
;       is called with EBX, ESI, EDI and EBP set to MARK, which cdecl says it
;       must keep. (A function that moved ESP and then returned went somewhere
;       else: that is a fault, named where it lands.)
;
; Both note the code's ESP, EBP, SS, DS and ES before anything trusts them
; (mov changes no flag, so EFLAGS is still the code's), take the harness's DS
; back through CS (flat and readable, in the kernel and in a Linux process
; alike), and go on at `finish`: the harness's stack and segments come back,
; DF is cleared, EFLAGS (IF with it) is restored, *seen gets what the code
; came back with, and the mask of what it changed that it must leave (ESP,
; EBP, a segment register, IF, DF; usercall_cdecl: EBX, ESI or EDI too) is
; returned.
;
; struct usercall_seen layout (arch/usercall.h): esp, ebp, eflags, ds, es,
; fs, gs, ss.

USERCALL_ESP    equ 1
USERCALL_EBP    equ 2
USERCALL_SEGS   equ 4
USERCALL_IF     equ 8
USERCALL_DF     equ 16
USERCALL_CALLEE equ 32
EFLAGS_IF       equ 0x200
EFLAGS_DF       equ 0x400
MARK            equ 0x5ca1ab1e  ; what EBX, ESI, EDI and EBP hold across a C function of the user's

section .data
align 4
usercall_back_ptr: dd back
saved_esp:   dd 0   ; the harness's stack pointer, the code's expected one at its end
saved_ss:    dd 0
saved_ds:    dd 0
expect_ebp:  dd 0
entry:       dd 0
seen_ptr:    dd 0
back_esp:    dd 0
back_ebp:    dd 0
back_ss:     dd 0
back_ds:     dd 0
back_es:     dd 0
callee_lost: dd 0   ; usercall_cdecl: USERCALL_CALLEE when EBX, ESI or EDI came back changed

section .text
global usercall, usercall_cdecl, usercall_tail, usercall_tail_end

; In `finish` (EBX: seen; EDX's top half zero): on to .segs_bad unless the segment the code came back with
; (seen's word at the offset) is the one the harness has again.
%macro SEG_SAME 2
    mov ecx, [ebx + %1]
    mov dx, %2
    cmp ecx, edx
    jne .segs_bad
%endmacro

; Both entries: the harness's state on its stack (9 words), ESP, SS, DS noted.
%macro SAVE_HARNESS 0
    push ebp
    push ebx
    push esi
    push edi
    pushfd
    push ds
    push es
    push fs
    push gs
    mov [saved_esp], esp
    mov [saved_ss], ss          ; 16-bit stores: `mov r32, sreg` leaves the top half undefined on old CPUs
    mov [saved_ds], ds
%endmacro

usercall:
    SAVE_HARNESS
    mov eax, [esp + 40]         ; code (9 words pushed above the return address)
    mov [entry], eax
    mov eax, [esp + 48]         ; seen
    mov [seen_ptr], eax
    mov esi, [esp + 44]         ; scratch
    mov [expect_ebp], esi
    mov dword [callee_lost], 0
    mov edi, esi
    mov ebp, esi
    xor eax, eax
    xor ebx, ebx
    xor ecx, ecx
    xor edx, edx
    jmp dword [entry]

back:
    mov ecx, esp
    mov edx, ebp
    mov bx, ds
    mov si, ss
    mov di, es
    mov ax, [cs:saved_ds]
    mov ds, ax
    mov [back_esp], ecx
    mov [back_ebp], edx
    mov [back_ds], bx
    mov [back_ss], si
    mov [back_es], di
    jmp finish

usercall_cdecl:
    SAVE_HARNESS
    mov eax, [esp + 52]         ; seen
    mov [seen_ptr], eax
    mov dword [expect_ebp], MARK
    mov ecx, [esp + 40]         ; fn
    push dword [esp + 48]       ; b
    push dword [esp + 48]       ; a (the push above moved it one word down)
    mov ebx, MARK
    mov esi, MARK
    mov edi, MARK
    mov ebp, MARK
    call ecx
    add esp, 8
    mov ecx, ebp
    xor eax, eax                ; what of EBX, ESI, EDI it lost
    cmp ebx, MARK
    jne .lost
    cmp esi, MARK
    jne .lost
    cmp edi, MARK
    je .kept
.lost:
    mov eax, USERCALL_CALLEE
.kept:
    mov dx, ds
    mov bx, ss
    mov si, es
    mov di, [cs:saved_ds]
    mov ds, di
    mov [callee_lost], eax
    mov [back_esp], esp
    mov [back_ebp], ecx
    mov [back_ds], dx
    mov [back_ss], bx
    mov [back_es], si

finish:
    mov ss, [saved_ss]
    mov esp, [saved_esp]
    pushfd
    mov ebx, [seen_ptr]
    pop dword [ebx + 8]         ; eflags as the code left it
    movzx eax, word [back_ds]   ; each segment zero-extended
    mov [ebx + 12], eax
    movzx eax, word [back_es]
    mov [ebx + 16], eax
    xor eax, eax
    mov ax, fs
    mov [ebx + 20], eax
    mov ax, gs
    mov [ebx + 24], eax
    movzx eax, word [back_ss]
    mov [ebx + 28], eax
    mov eax, [back_esp]
    mov [ebx + 0], eax
    mov eax, [back_ebp]
    mov [ebx + 4], eax
    pop gs                      ; the harness's segments again
    pop fs
    pop es
    pop ds
    cld
    mov eax, [callee_lost]      ; what changed that must not
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
    xor edx, edx
    SEG_SAME 12, ds
    SEG_SAME 16, es
    SEG_SAME 20, fs
    SEG_SAME 24, gs
    SEG_SAME 28, ss
    jmp .segs_ok
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
