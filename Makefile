# cleanroom — bare-metal IA-32 measurement kernel.
#
#   make run     set up, build, boot the quick suite under QEMU, print the report
#   make test    set up, build, run every test (pytest)
#
# Other targets: test-scale (the multi-CPU runs at 16 and 32 CPUs), all (kernel ELF), iso, hosted (the Linux build and its 64-bit
# peers helper), units, compile (everything but the kernel's link), qemu, qemu-gdb,
# bochs, setup, clean.

# --- toolchain -------------------------------------------------------------
# TOOLPREFIX may be given; else i686-elf- (a bare cross compiler), else
# i686-linux-gnu- (Debian's gcc-i686-linux-gnu + binutils-i686-linux-gnu).
ifndef TOOLPREFIX
TOOLPREFIX := $(shell \
	if i686-elf-gcc --version >/dev/null 2>&1 && i686-elf-ld --version >/dev/null 2>&1; then echo i686-elf-; \
	elif i686-linux-gnu-gcc --version >/dev/null 2>&1 && i686-linux-gnu-ld --version >/dev/null 2>&1; then echo i686-linux-gnu-; \
	fi)
endif

CC   := $(TOOLPREFIX)gcc
LD   := $(TOOLPREFIX)ld
NM   := $(TOOLPREFIX)nm
AR   := $(TOOLPREFIX)ar
OBJCOPY := $(TOOLPREFIX)objcopy
NASM ?= nasm
PYTHON := $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

BUILD := build
KERNEL := $(BUILD)/cleanroom.elf
ISO    := $(BUILD)/cleanroom.iso

# -march=i486: the kernel must boot on a 486 (to say "no TSC") and a Pentium
# (no cmov); no SSE/x87 code may be generated behind our back.
CFLAGS := -std=c11 -O2 -march=i486 -mtune=generic -m32 \
	-ffreestanding -fno-pic -fno-pie -fno-stack-protector -fno-common \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-mgeneral-regs-only -mno-red-zone --param=min-pagesize=0 \
	-Wall -Wextra -Werror -I.
NASMFLAGS := -f elf32 -w+all -w+error
LDFLAGS := -m elf_i386 -T linker.ld -nostdlib -z noexecstack --no-warn-rwx-segments

# The layers, from the bottom (docs/LAYOUT.md; nothing includes a higher
# one or declares what only a higher one defines, tests/test_layers.py
# checks): lib (portable; lib/freestanding is what a C library would give
# the kernel), arch, kernel, runtime, bench, app.
# hosted/ is the Linux build's platform and top.
SRC_DIRS := boot lib lib/freestanding arch kernel runtime bench app
# Benchmark code that needs a C library (glibc ucontext, NPTL, fork): hosted build only.
HOSTED_ONLY_SRCS := bench/peers.c bench/peerloops.c bench/linuxvm.c bench/glibclocks.c
# Benchmark code that needs ring 3, page directories, CR3 or paging switched
# at will: the kernel only (hosted/vmmode.c stands in for bench/vmmode.c).
KERNEL_ONLY_SRCS := bench/aspace.c bench/aspace_user.c bench/vmmode.c
C_SRCS   := $(filter-out $(HOSTED_ONLY_SRCS),$(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)))
ASM_SRCS := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.asm))
OBJS := $(patsubst %.asm,$(BUILD)/obj/%.o,$(ASM_SRCS)) $(patsubst %.c,$(BUILD)/obj/%.o,$(C_SRCS))
DEPS := $(OBJS:.o=.d)
# Ring-3 code (*_user.c, *_user.asm; see linker.ld) may call nothing outside
# its own pages: no memset/memcpy the optimiser invents.
USER_OBJS := $(filter %_user.o,$(OBJS))
$(BUILD)/obj/%_user.o: CFLAGS += -fno-tree-loop-distribute-patterns

# lib/: the kernel's C that touches no hardware, compiled for Linux by the
# same cross compiler and tested on the host (tests/unit).
LIB_SRCS := $(wildcard lib/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/units/%,$(UNIT_SRCS))
UNIT_CFLAGS := -std=c11 -O1 -m32 -static -Wall -Wextra -Werror -I. -DCLEANROOM_HOSTED
# lib/ compiled once for all the unit tests (each links the archive: it takes the objects it uses)
UNIT_LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/units/lib/%.o,$(LIB_SRCS))
UNIT_LIB := $(BUILD)/units/lib/libcleanroom.a

# The hosted build: bench/ and runtime/ as a static 32-bit Linux program
# (hosted/ supplies the platform); real caches on a development machine.
HOSTED := $(BUILD)/hosted/cleanroom-hosted
# What a process can share with the kernel, layer by layer; hosted/*.c
# implements the rest of the interfaces for Linux.
HOSTED_SHARED := $(LIB_SRCS) \
	arch/cpu.c arch/tsc.c arch/exc_names.c arch/memtype.c arch/modelmark.c \
	kernel/fault_record.c kernel/error_record.c kernel/smp_report.c kernel/smp_cores.c kernel/counters_record.c kernel/evidence_record.c kernel/finish.c \
	runtime/switch.c runtime/stack.c runtime/fiber.c runtime/pair.c runtime/overflow.c \
	runtime/spinlock.c runtime/sync.c runtime/stackpool.c runtime/pingpong.c runtime/smplock.c runtime/userprims.c \
	$(filter-out $(KERNEL_ONLY_SRCS),$(wildcard bench/*.c)) \
	app/startup.c app/suite.c app/sysinfo.c
HOSTED_SRCS := $(wildcard hosted/*.c) $(HOSTED_SHARED)
HOSTED_ASM := runtime/switches.asm runtime/switch_check.asm arch/usercall.asm
HOSTED_OBJ := $(BUILD)/obj-hosted
HOSTED_OBJS := $(patsubst %.c,$(HOSTED_OBJ)/%.o,$(HOSTED_SRCS)) $(patsubst %.asm,$(HOSTED_OBJ)/%.o,$(HOSTED_ASM))
HOSTED_DEPS := $(HOSTED_OBJS:.o=.d)
# hosted/smp.h ahead of every file: its busy waits yield when the workers
# outnumber the CPUs (arch/x86.h's CPU_WAIT_TURN; the kernel has none).
HOSTED_CFLAGS := -std=c11 -O2 -m32 -march=i686 -msse2 -static -fno-omit-frame-pointer \
	--param=min-pagesize=0 -Wall -Wextra -Werror -I. -DCLEANROOM_HOSTED -include hosted/smp.h

# The 64-bit peers helper (hosted/peers64/), started by bench=peers from beside
# cleanroom-hosted: Boost.Context and the 64-bit ports of the switches, which
# a 32-bit program cannot link. Built by the host's own gcc against Debian's
# static libboost_context.a (only its assembly objects get linked).
HOST_CC ?= gcc
PEERS64 := $(BUILD)/hosted/cleanroom-peers64
PINGPONG := $(BUILD)/hosted/pingpong
PEERS64_SRCS := hosted/peers64/peers64.c bench/peerloops.c
PEERS64_ASM := hosted/peers64/switches64.asm
PEERS64_CFLAGS := -std=c11 -O2 -m64 -static -fno-omit-frame-pointer -Wall -Wextra -Werror -I.
ALL_HEADERS := $(wildcard */*.h */*/*.h)

.PHONY: all iso units run test test-scale test-lab qemu qemu-gdb bochs setup clean toolchain hosted compile

all: $(KERNEL)

toolchain:
	@if [ -z "$(TOOLPREFIX)" ]; then \
	  echo "error: no i686 cross toolchain found (tried i686-elf-gcc, i686-linux-gnu-gcc)." >&2; \
	  echo "       install Debian packages: gcc-i686-linux-gnu binutils-i686-linux-gnu (or run tools/setup.sh)" >&2; \
	  echo "       or set TOOLPREFIX=<prefix-> to your own cross compiler" >&2; exit 1; fi
	@command -v $(NASM) >/dev/null 2>&1 || { \
	  echo "error: nasm not found: install the Debian package nasm (or run tools/setup.sh)" >&2; exit 1; }

# V=1 shows the full commands.
Q := $(if $(V),,@)

# The kernel is linked once with its relocations kept (--emit-relocs), then
# without them, and tools/cleanroom_host/machines/relocs.py writes the table of its
# absolute addresses into the image: boot/boot.asm fixes them up when GRUB's
# multiboot2 loaded it elsewhere than its link address (linker.ld says why).
$(KERNEL): $(OBJS) linker.ld tools/cleanroom_host/machines/relocs.py | toolchain
	@echo "  LD      $@"
	$(Q)$(LD) $(LDFLAGS) --emit-relocs -o $(BUILD)/cleanroom.relocs.elf $(OBJS)
	$(Q)$(OBJCOPY) --remove-section='.rel.*' $(BUILD)/cleanroom.relocs.elf $@
	$(Q)PYTHONPATH=tools $(PYTHON) -m cleanroom_host.machines.relocs $(BUILD)/cleanroom.relocs.elf $@ || { rm -f $@; exit 1; }
	$(Q)tools/check_user_objects.sh $(NM) $(USER_OBJS)
	@if command -v grub-file >/dev/null 2>&1; then \
	  grub-file --is-x86-multiboot $@ || { echo "error: $@ is not multiboot v1" >&2; rm -f $@; exit 1; }; \
	  grub-file --is-x86-multiboot2 $@ || { echo "error: $@ is not multiboot2" >&2; rm -f $@; exit 1; }; fi

$(BUILD)/obj/%.o: %.c | toolchain
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.asm | toolchain
	@mkdir -p $(dir $@)
	@echo "  NASM    $<"
	$(Q)$(NASM) $(NASMFLAGS) -MD $(@:.o=.d) -I. $< -o $@

-include $(DEPS)

iso: $(ISO)

$(ISO): $(KERNEL) iso/grub.cfg
	@command -v grub-mkrescue >/dev/null 2>&1 || { \
	  echo "error: grub-mkrescue not found: install grub-common grub-pc-bin grub-efi-ia32-bin grub-efi-amd64-bin xorriso mtools (or run tools/setup.sh)" >&2; exit 1; }
	@echo "  ISO     $@"
	$(Q)rm -rf $(BUILD)/isodir && mkdir -p $(BUILD)/isodir/boot/grub
	$(Q)cp $(KERNEL) $(BUILD)/isodir/boot/cleanroom.elf
	$(Q)cp iso/grub.cfg $(BUILD)/isodir/boot/grub/grub.cfg
	$(Q)grub-mkrescue -o $@ $(BUILD)/isodir 2>$(BUILD)/grub-mkrescue.log || { cat $(BUILD)/grub-mkrescue.log >&2; exit 1; }

hosted: $(HOSTED) $(PEERS64) $(PINGPONG)

# An independent check of bench coherence (tools/smp-scale-check.sh): a plain 64-bit CAS ping-pong.
$(PINGPONG): tools/probes/pingpong.c
	@mkdir -p $(dir $@)
	@echo "  PROBE   $@"
	$(Q)$(HOST_CC) -std=c11 -O2 -static -pthread -Wall -Wextra -Werror -o $@ $<

$(HOSTED): $(HOSTED_OBJS) | toolchain
	@mkdir -p $(dir $@)
	@echo "  HOSTED  $@"
	$(Q)$(CC) $(HOSTED_CFLAGS) -o $@ $(HOSTED_OBJS) -pthread

# One object a source (make -j compiles them side by side; a change, or a
# planted bug in a copy of the tree, recompiles its own files only).
$(HOSTED_OBJ)/%.o: %.c | toolchain
	@mkdir -p $(dir $@)
	@echo "  CC      $< (hosted)"
	$(Q)$(CC) $(HOSTED_CFLAGS) -MMD -MP -c $< -o $@

$(HOSTED_OBJ)/%.o: %.asm | toolchain
	@mkdir -p $(dir $@)
	@echo "  NASM    $< (hosted)"
	$(Q)$(NASM) $(NASMFLAGS) -MD $(@:.o=.d) -I. $< -o $@

-include $(HOSTED_DEPS)

$(PEERS64): $(PEERS64_SRCS) $(PEERS64_ASM) bench/peerloops.h | toolchain
	@command -v $(HOST_CC) >/dev/null 2>&1 || { \
	  echo "error: $(HOST_CC) not found: install the Debian packages gcc libc6-dev (or run tools/setup.sh)" >&2; exit 1; }
	@boost=$$($(HOST_CC) -print-file-name=libboost_context.a); [ -f "$$boost" ] || { \
	  echo "error: libboost_context.a not found: install the Debian package libboost-context-dev (or run tools/setup.sh)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@echo "  PEERS64 $@"
	$(Q)$(NASM) -f elf64 -w+all -w+error $(PEERS64_ASM) -o $(BUILD)/hosted/switches64.o
	$(Q)$(HOST_CC) $(PEERS64_CFLAGS) -o $@ $(PEERS64_SRCS) $(BUILD)/hosted/switches64.o \
	  $$($(HOST_CC) -print-file-name=libboost_context.a) -pthread

# A test double, never a measurement: the hosted build with hosted/counters.c
# (perf_event) replaced by tests/doubles/counters.c, whose events count
# synthetic amounts a test predicts, so that the harness's counters path runs
# on any machine, PMU or not (tests/test_hosted.py).
HOSTED_FAKE_COUNTERS := $(BUILD)/units/cleanroom-hosted-fakecounters
HOSTED_FAKE_COUNTERS_OBJS := $(filter-out $(HOSTED_OBJ)/hosted/counters.o,$(HOSTED_OBJS)) \
	$(HOSTED_OBJ)/tests/doubles/counters.o

units: $(UNIT_BINS) $(HOSTED_FAKE_COUNTERS)

$(HOSTED_FAKE_COUNTERS): $(HOSTED_FAKE_COUNTERS_OBJS) | toolchain
	@mkdir -p $(dir $@)
	@echo "  UNIT    $@"
	$(Q)$(CC) $(HOSTED_CFLAGS) -o $@ $(HOSTED_FAKE_COUNTERS_OBJS) -pthread

# The tests of arch/ code include the file they test (arch/modelmark.c, to
# log the stores; arch/memtype.c, the MTRR/PAT lookup; arch/madt.c, the CPUs;
# arch/acpi.c, the tables' walk over tables the test builds; arch/pse36.c,
# the entries that reach above 4 GiB).
$(BUILD)/units/test_modelmark: arch/modelmark.c arch/modelmark.h
$(BUILD)/units/test_memtype: arch/memtype.c arch/memtype.h
$(BUILD)/units/test_madt: arch/madt.c arch/madt.h
$(BUILD)/units/test_acpi: arch/acpi.c arch/acpi.h
$(BUILD)/units/test_pse36: arch/pse36.c arch/pse36.h

$(BUILD)/units/lib/%.o: lib/%.c | toolchain
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(UNIT_CFLAGS) -MMD -MP -c $< -o $@

$(UNIT_LIB): $(UNIT_LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/units/%: tests/unit/%.c tests/unit/unit.h $(UNIT_LIB) | toolchain
	@mkdir -p $(dir $@)
	@echo "  UNIT    $@"
	$(Q)$(CC) $(UNIT_CFLAGS) -MMD -MP -o $@ $< $(UNIT_LIB)

-include $(UNIT_LIB_OBJS:.o=.d) $(UNIT_BINS:=.d)

# The cache/TLB model: a QEMU TCG plugin built by the host's gcc (it runs
# inside qemu-system-i386, not in the guest); docs/MODEL.md.
CACHEMODEL := $(BUILD)/cachemodel/libcachemodel.so
CACHEMODEL_SRCS := tools/cachemodel/plugin.c tools/cachemodel/model.c
CACHEMODEL_CFLAGS := -std=c11 -O2 -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror
all: $(CACHEMODEL)

$(CACHEMODEL): $(CACHEMODEL_SRCS) $(wildcard tools/cachemodel/*.h)
	@mkdir -p $(dir $@)
	@echo "  PLUGIN  $@"
	$(Q)$(HOST_CC) $(CACHEMODEL_CFLAGS) -o $@ $(CACHEMODEL_SRCS)

setup:
	@tools/setup.sh

# The two commands a new user runs. Each re-enters make after set-up so the
# toolchain detection above sees what set-up installed.
# Two runs a case and no warm-up: under qemu-icount every run of a case counts
# the same instructions, the first one too (370 of 370 quick-suite results
# had the same samples and median as with the suite's 3 runs and a warm-up;
# tests/test_boot.py checks every sample agrees). Two agreeing samples make
# each interval exact from the data (one would leave it unknown); the third
# run and the warm-up measured nothing new and took twice the time.
CMDLINE ?= suite=quick runs=2 warmup=0
# make run: the kernel's quick suite under qemu-icount (deterministic: the
# TSC counts instructions), then the hosted build's quick workset, ctxsw and
# peers on one CPU of this machine (real caches, counters where perf allows),
# five processes, then processes added to the sweep's sizes still open until
# each is decided or 18 s are spent (budget=18s: the whole hosted part's),
# then false sharing and a line's trip between CPUs on every CPU of this
# machine, then the three summaries (`tools/cleanroom make-run`, which
# tests/test_make_run.py runs on small command lines). RUN_DIR/kernel,
# RUN_DIR/hosted and RUN_DIR/smp keep everything; results/latest points at it.
HOSTED_CMDLINE ?= bench=workset,ctxsw,peers pages=both budget=18s
HOSTED_SMP_CMDLINE ?= bench=coherence,falseshare cpus=all runs=5
# once per make (a recursive variable would run date at every use); the PID
# keeps two make runs started in the same second apart
RUN_DIR ?= results/$(RUN_STAMP)-make-run
RUN_STAMP := $(shell date -u +%Y%m%d-%H%M%S)-$(shell echo $$PPID)
# Set-up and the C compilation: the Debian packages first (the part of tools/setup.sh named by the
# argument: packages, or test-packages, which adds the tests' Chromium), then the .venv's installation
# (pip: one core) beside the compilation of everything that does not need it (the other cores).
define setup_and_compile
	@tools/setup.sh $(1)
	@tools/setup.sh venv & venv=$$!; \
	$(MAKE) --no-print-directory -j$$(nproc) compile; built=$$?; wait $$venv && exit $$built
endef

run:
	$(call setup_and_compile,packages)
	@$(MAKE) --no-print-directory -j$$(nproc) all hosted
	tools/cleanroom make-run --out $(RUN_DIR) --kernel-cmdline "$(CMDLINE)" --hosted-cmdline "$(HOSTED_CMDLINE)" \
	  --smp-cmdline "$(HOSTED_SMP_CMDLINE)"

# What builds without the .venv (all but the kernel's link, which runs relocs.py with pyelftools).
compile: $(OBJS) $(UNIT_BINS) $(HOSTED) $(PEERS64) $(CACHEMODEL)

test:
	$(call setup_and_compile,test-packages)
	@# Beside the link: the host tool's bytecode and pytest's rewritten test modules, written even
	@# where PYTHONDONTWRITEBYTECODE is set, so that no worker (and no tool the tests start)
	@# compiles them again (a worker's collection: 3.5 s compiling, 0.8 s reading them)
	@(PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q tools/cleanroom_host; \
	  PYTHONDONTWRITEBYTECODE= .venv/bin/python -m pytest --collect-only -q tests >/dev/null 2>&1) & \
	$(MAKE) --no-print-directory -j$$(nproc) all iso units hosted; built=$$?; wait; exit $$built
	@# two workers a CPU: a worker often waits (a run throttled on purpose, a QR page the kernel
	@# holds on screen, a silence limit, a shared boot another worker is making); 2 CPUs here:
	@# 177 s with 4 workers, 190 s with 3, one after the other on one build; the tests marked early
	@# (long waits, long work) start first, at the heads of the workers' shares (tests/conftest.py)
	PYTHONDONTWRITEBYTECODE= .venv/bin/python -m pytest -n $$((2 * $$(nproc))) --dist worksteal --durations=15 -m "not scale and not lab" tests

# The multi-CPU runs at full size (tests marked `scale`): suite=smp on 16 vCPUs, the self-tests on 32,
# the hosted suite=smp oversubscribed at its default repetitions; a few minutes on 2 host cores.
test-scale:
	$(call setup_and_compile,packages)
	@$(MAKE) --no-print-directory -j$$(nproc) all hosted
	.venv/bin/python -m pytest -n $$(nproc) --durations=5 -m scale tests/test_smp_scale.py

# The lab without a LAVA server (docs/LAB.md): LAVA's own dispatcher (lava-run of Debian's lava-dispatcher,
# unpacked into .venv/lava by `tools/setup.sh lab-packages`) runs lava-job's jobs on this machine, as root:
# a qemu-icount job, whose records must be a direct run's, and the ISO six times (the level LAVA logs the
# done record at is a race; lava-fetch must keep it every time); tests/test_lab.py, marked `lab`.
test-lab:
	@start=$$(date +%s); \
	tools/setup.sh lab-packages && $(MAKE) --no-print-directory -j$$(nproc) all iso && \
	.venv/bin/python -m pytest -n $$(nproc) --durations=5 -m lab tests/test_lab.py; status=$$?; \
	echo "make test-lab: $$(( $$(date +%s) - start )) s (status $$status)"; exit $$status

QEMU := qemu-system-i386
QEMU_FLAGS := -m 128 -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04

qemu: $(KERNEL)
	$(QEMU) $(QEMU_FLAGS) -nographic -kernel $(KERNEL) -append "$(CMDLINE)"

qemu-gdb: $(KERNEL)
	@echo "*** QEMU waits for gdb: gdb $(KERNEL) -ex 'target remote :1234'"
	$(QEMU) $(QEMU_FLAGS) -nographic -s -S -kernel $(KERNEL) -append "$(CMDLINE)"

bochs: $(ISO)
	tools/cleanroom run --emulator bochs --cmdline "$(CMDLINE)"

clean:
	rm -rf $(BUILD)
