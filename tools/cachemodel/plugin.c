/*
 * libcachemodel.so: a QEMU TCG plugin (API v1, QEMU 7.2) that feeds every
 * data access of the guest into the cache/TLB model of model.c and writes
 * per-sample counts for the host tool (docs/MODEL.md).
 *
 *   qemu-system-i386 -icount shift=0,sleep=off \
 *     -plugin build/cachemodel/libcachemodel.so,mailbox=0xADDR,out=PATH[,model=NAME] ...
 *
 * Instructions are counted one by one (an inline add before each), not per
 * translation block: a block left early (a page fault, an I/O access that
 * QEMU's icount retranslates) would otherwise count instructions that never
 * ran. So a mark or an rdtsc checkpoint sees the count exactly to the
 * instruction. Whether QEMU runs an instruction's callback before or after
 * its inline add does not matter: a sample is the difference of two
 * checkpoints of the same kind (two rdtsc, or the BEGIN and END marks).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "qemu_plugin_api.h"

QPLUGIN_EXPORT int qemu_plugin_version = QPLUGIN_API_VERSION;

static struct cm_model model;
static FILE *out_file;
static char out_buffer[1 << 16];

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)vcpu;
    (void)udata;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    bool io = hw && qemu_plugin_hwaddr_is_io(hw);
    uint64_t pa = hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
    cm_access(&model, vaddr, pa, qemu_plugin_mem_size_shift(info), qemu_plugin_mem_is_store(info), io, 0);
}

static void on_rdtsc(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    cm_rdtsc(&model, 0);
}

/* 0F 31 = rdtsc, 0F 01 F9 = rdtscp (the timed region's bounds). */
static bool reads_tsc(const struct qemu_plugin_insn *insn)
{
    const uint8_t *b = qemu_plugin_insn_data(insn);
    size_t n = qemu_plugin_insn_size(insn);
    return (n >= 2 && b[0] == 0x0f && b[1] == 0x31) || (n >= 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &model.c.instructions, 1);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
        if (reads_tsc(insn))
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_rdtsc, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    if (!out_file)
        return;
    cm_finish(&model, out_file);
    fclose(out_file);
    out_file = NULL;
}

static int refuse(const char *what, const char *detail)
{
    fprintf(stderr, "cachemodel: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return -1;
}

/*
 * Arguments: mailbox=0xADDR and out=PATH (both required), model=prestonia|
 * modern|custom:SPEC (default prestonia). QEMU splits its -plugin option at
 * commas, so a custom SPEC arrives either whole (commas doubled on QEMU's
 * command line) or as further arguments (l2=2M/8/64/7 ...) after
 * model=custom:...; both are read, in order.
 */
QPLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    const char *out_path = NULL, *model_name = "prestonia";
    uint64_t mailbox = 0;
    bool have_mailbox = false;
    char err[256];
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mailbox=", 8) == 0) {
            char *end;
            mailbox = strtoull(argv[i] + 8, &end, 0);
            if (end == argv[i] + 8 || *end || (mailbox & 0xfff))
                return refuse("mailbox must be a page-aligned address (0x...)", argv[i]);
            have_mailbox = true;
        } else if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = argv[i] + 4;
        } else if (strncmp(argv[i], "model=", 6) == 0) {
            model_name = argv[i] + 6;
        } else if (!cm_config_is_spec_key(argv[i])) {
            return refuse("unknown argument (mailbox=, out=, model=, or a custom SPEC item)", argv[i]);
        }
    }
    if (!have_mailbox || !out_path)
        return refuse("mailbox=0xADDR and out=PATH are required", NULL);
    struct cm_config cfg;
    if (cm_config_from_name(&cfg, model_name, err, sizeof err) != 0)
        return refuse(err, NULL);
    bool custom = strcmp(cfg.preset, "custom") == 0;
    for (int i = 0; i < argc; i++) {
        if (!cm_config_is_spec_key(argv[i]))
            continue;
        if (!custom)
            return refuse("a SPEC item needs model=custom:...", argv[i]);
        if (cm_config_apply(&cfg, argv[i], err, sizeof err) != 0)
            return refuse(err, NULL);
    }
    if (cm_config_check(&cfg, err, sizeof err) != 0)
        return refuse(err, NULL);

    out_file = fopen(out_path, "w");
    if (!out_file)
        return refuse("cannot write", out_path);
    setvbuf(out_file, out_buffer, _IOFBF, sizeof out_buffer);
    if (cm_model_init(&model, &cfg, mailbox, out_file) != 0)
        return refuse("out of memory", NULL);
    cm_write_header(&model, out_file);

    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
    return 0;
}
