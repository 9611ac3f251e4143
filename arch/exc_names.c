#include "arch/exc_names.h"

const char *exc_sdm_name(uint32_t vector)
{
    static const char *const names[32] = {
        "divide_error", "debug", "nmi", "breakpoint", "overflow", "bound_range",
        "invalid_opcode", "device_not_available", "double_fault", "coprocessor_segment_overrun",
        "invalid_tss", "segment_not_present", "stack_fault", "general_protection", "page_fault",
        "reserved_15", "x87_fpu_error", "alignment_check", "machine_check", "simd_fp_exception",
        "virtualization", "control_protection", "reserved_22", "reserved_23", "reserved_24",
        "reserved_25", "reserved_26", "reserved_27", "hypervisor_injection", "vmm_communication",
        "security", "reserved_31",
    };
    return vector < 32 ? names[vector] : "unknown";
}
