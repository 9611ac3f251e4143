#include "app/sysinfo.h"

#include "app/version.h"
#include "arch/acpi.h"
#include "arch/cpu.h"
#include "arch/cpuidlimit.h"
#include "arch/paging.h"
#include "arch/tsc.h"
#include "bench/registry.h"
#include "kernel/console.h"
#include "kernel/exit.h"
#include "kernel/memory.h"
#include "kernel/serial.h"
#include "kernel/smp.h"
#include "lib/clockpick.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/wire.h"

void sysinfo_hello(void)
{
    const struct boot_info *b = boot_info();
    rec_begin(REC_HELLO);
    rec_u64("proto", WIRE_PROTO_VERSION);
    rec_str("kernel", CLEANROOM_VERSION);
    rec_str("cmdline", b->cmdline);
    rec_u64("cmdline_len", b->cut.len);
    rec_bool("cmdline_cut", b->cut.tokens != 0);
    rec_str("platform", exit_environment());
    rec_str("loader", b->loader);
    if (b->protocol)
        rec_u64("multiboot", b->protocol);
    else
        rec_null("multiboot");
    rec_bool("vga", vga_present());
    rec_str("screen", vga_screen_name());
    if (vga_screen_geometry())
        rec_str("fb", vga_screen_geometry());
    else
        rec_null("fb");
    if (vga_screen_access())
        rec_str("fb_access", vga_screen_access());
    if (vga_screen_why())
        rec_str("screen_why", vga_screen_why());
    if (b->aslr)
        rec_str("aslr", b->aslr);
    serial_report();
    rec_end();
    console_say(VGA_WHITE, "cleanroom %s - bare-metal IA-32 measurement kernel", CLEANROOM_VERSION);
    console_say(VGA_GREY, "cmdline: %s", b->cmdline);
    console_serial_summary();
}

void sysinfo_cpu(uint32_t boot_cr0)
{
    const struct cpu_info *c = cpu_info();
    rec_begin(REC_CPU);
    rec_str("vendor", c->vendor);
    rec_u64("family", c->family);
    rec_u64("model", c->model);
    rec_u64("stepping", c->stepping);
    rec_str("brand", c->brand);
    rec_bool("cpuid", c->has_cpuid);
    rec_u64("max_leaf", c->max_leaf);
    rec_u64("max_ext_leaf", c->max_ext_leaf);
    rec_str("cpuid_limit", cpuidlimit_state()); /* IA32_MISC_ENABLE bit 22 */
    rec_arr_begin("features");
    for (int f = 0; f < FEAT_COUNT; f++)
        if (cpu_has((enum cpu_feature)f))
            rec_str(0, cpu_feature_name((enum cpu_feature)f));
    rec_arr_end();
    rec_arr_begin("caches");
    for (uint32_t i = 0; i < c->ncaches; i++) {
        const struct cache_desc *d = &c->caches[i];
        rec_obj_begin(0);
        rec_u64("level", d->level);
        rec_str("type", cpu_cache_type_name(d->type));
        rec_u64("size", d->size);
        rec_u64("ways", d->ways);
        rec_u64("line", d->line);
        rec_obj_end();
    }
    rec_arr_end();
    rec_str("cache_source", c->cache_source);
    rec_str("cache_leaf", c->cache_leaf);
    if (c->hypervisor[0])
        rec_str("hypervisor", c->hypervisor);
    else
        rec_null("hypervisor");
    rec_str("platform", exit_platform_name());
    rec_u64("boot_cr0", boot_cr0);
    rec_end();
    console_say(VGA_GREY, "cpu: %s family %u model %u stepping %u %s", c->vendor, c->family, c->model, c->stepping,
                c->brand);
}

static void tsc_acpi_evidence(void)
{
    const struct acpi_tables *a = acpi_tables();
    rec_obj_begin("acpi");
    if (a->rsdp)
        rec_u64("rsdp", a->rsdp);
    else
        rec_null("rsdp"); /* none, or the loader passed a copy (where: multiboot2) */
    if (a->rsdp_where) {
        rec_str("where", a->rsdp_where);
        rec_u64("revision", a->revision);
        rec_str("root", a->xsdt ? "xsdt" : "rsdt");
    } else {
        rec_null("where");
    }
    if (a->pm_timer_port || a->pm_timer_mem) {
        rec_u64("pm_timer", a->pm_timer_port ? a->pm_timer_port : a->pm_timer_mem);
        rec_str("pm_timer_space", a->pm_timer_port ? "io" : "memory");
        rec_u64("pm_timer_bits", a->pm_timer_bits);
    } else {
        rec_null("pm_timer");
    }
    if (a->hpet_base)
        rec_u64("hpet", a->hpet_base);
    else
        rec_null("hpet");
    if (a->why)
        rec_str("why", a->why);
    rec_obj_end();
}

/* Every source's figure, the choice, and what the run must not hide: no
 * figure at all, or figures that disagree. */
void sysinfo_tsc(void)
{
    const struct tsc_info *t = tsc_info();
    uint32_t figures = 0, disagreeing = 0;
    rec_begin(REC_TSC);
    rec_u64("hz", t->hz);
    rec_str("method", t->method);
    rec_str("serialize", tsc_serialize_name(t->serialize));
    rec_u64("overhead", t->overhead);
    rec_obj_begin("sources");
    for (int s = TSC_SRC_AUTO + 1; s < TSC_SRC_COUNT; s++) {
        if (t->sources[s].hz) {
            rec_u64(t->sources[s].name, t->sources[s].hz);
            figures++;
        } else {
            rec_null(t->sources[s].name);
        }
    }
    rec_obj_end();
    rec_obj_begin("why");
    for (int s = TSC_SRC_AUTO + 1; s < TSC_SRC_COUNT; s++)
        if (!t->sources[s].hz)
            rec_str(t->sources[s].name, t->sources[s].why);
    rec_obj_end();
    rec_obj_begin("spread_ppm"); /* each measured source's windows: (max - min) / median */
    for (int s = TSC_SRC_AUTO + 1; s < TSC_SRC_COUNT; s++)
        if (t->sources[s].hz && s != TSC_SRC_CPUID15 && s != TSC_SRC_CPUID16)
            rec_u64(t->sources[s].name, t->sources[s].spread_ppm);
    rec_obj_end();
    rec_bool("agree", t->agree);
    rec_arr_begin("pair");
    for (int i = 0; i < 2; i++)
        if (t->pair[i])
            rec_str(0, t->pair[i]);
    rec_arr_end();
    rec_u64("pair_ppm", t->pair_ppm);
    rec_u64("tolerance_ppm", t->tolerance_ppm);
    rec_arr_begin("disagree");
    for (int s = TSC_SRC_AUTO + 1; s < TSC_SRC_COUNT && t->hz; s++)
        if (t->sources[s].hz && clock_ppm(t->hz, t->sources[s].hz) > t->tolerance_ppm) {
            rec_str(0, t->sources[s].name);
            disagreeing++;
        }
    rec_arr_end();
    rec_bool("forced", t->forced);
    rec_bool("invariant", t->invariant);
    rec_str("lfence", t->lfence);
    rec_u64("cost", t->cost);
    tsc_acpi_evidence();
    rec_end();
    console_say(VGA_GREY, "tsc: %llu kHz (%s), serialise with %s (lfence %s), empty region %llu cycles",
                (unsigned long long)(t->hz / 1000), t->method, tsc_serialize_name(t->serialize), t->lfence,
                (unsigned long long)t->overhead);
    if (!t->hz) {
        rec_begin(REC_ERROR);
        rec_str("code", "tsc_uncalibrated");
        rec_str("msg", t->forced ? "the source tsc= names gave no figure: the TSC is not calibrated (hz 0)"
                                 : "no source gave a TSC frequency: the TSC is not calibrated (hz 0)");
        rec_end();
        console_say(VGA_RED, "tsc: could not be calibrated%s: its frequency is unknown (hz 0)",
                    t->forced ? " by the source tsc= names" : " (no working source)");
    } else if (!t->agree && disagreeing) {
        rec_begin(REC_ERROR);
        rec_str("code", "tsc_disagree");
        rec_str("msg", "the TSC's sources disagree by more than 0.5 %: hz is one source's figure, unconfirmed");
        rec_end();
        console_say(VGA_RED, "tsc: sources disagree by more than 0.5 %%: %llu kHz from %s is unconfirmed",
                    (unsigned long long)(t->hz / 1000), t->method);
    } else if (!t->agree) {
        console_say(VGA_YELLOW, "tsc: only %s gave a figure: not confirmed by a second source", t->method);
    }
}

/* The loader put the kernel on memory a map does not call free: whatever
 * the firmware kept there (ACPI tables, runtime data) was overwritten before
 * the kernel's first instruction. Nothing can undo that; the run goes on,
 * saying so. */
static void image_overlap_error(uint32_t image_base, uint32_t image_end)
{
    const struct boot_overlap *o = memory_image_overlap();
    if (!o)
        return;
    char msg[200], said[64];
    if (o->type)
        fmt(said, sizeof said, "calls %s", o->what);
    else
        fmt(said, sizeof said, "does not list");
    fmt(msg, sizeof msg, "the kernel image [0x%x, 0x%x) lies on [0x%llx, 0x%llx), which the %s map %s: "
                         "what the firmware kept there was overwritten",
        image_base, image_end, (unsigned long long)o->base, (unsigned long long)o->end, o->map, said);
    rec_begin(REC_ERROR);
    rec_str("code", "image_overlap");
    rec_arr_begin("image");
    rec_u64(0, image_base);
    rec_u64(0, image_end - image_base);
    rec_arr_end();
    rec_arr_begin("overlap");
    rec_u64(0, o->base);
    rec_u64(0, o->end - o->base);
    rec_arr_end();
    rec_str("map", o->map);
    if (o->type)
        rec_u64("map_type", o->type);
    else
        rec_null("map_type");
    rec_str("what", o->what);
    rec_str("msg", msg);
    rec_end();
    console_say(VGA_RED, "memory: the kernel sits on [0x%llx, 0x%llx), %s in the %s map: firmware data there was "
                         "overwritten (see docs/HARDWARE.md)",
                (unsigned long long)o->base, (unsigned long long)o->end, o->what, o->map);
}

void sysinfo_mem(void)
{
    const struct region_set *r = memory_regions();
    rec_begin(REC_MEM);
    rec_u64("usable", memory_usable());
    rec_u64("largest", memory_largest_free());
    rec_str("source", boot_info()->mem_source);
    rec_u64("top", memory_top());
    rec_u64("page_tables", paging_table_bytes());
    rec_u64("reserved_overlap", memory_reserved_overlap());
    rec_u64("dropped_regions", r->dropped);
    rec_u64("dropped_bytes", r->dropped_bytes);
    uint32_t image_base, image_end;
    memory_image(&image_base, &image_end);
    rec_arr_begin("image");
    rec_u64(0, image_base);
    rec_u64(0, image_end - image_base);
    rec_arr_end();
    rec_arr_begin("free");
    for (uint32_t i = 0; i < r->n; i++) {
        rec_arr_begin(0);
        rec_u64(0, r->r[i].base);
        rec_u64(0, r->r[i].end - r->r[i].base);
        rec_arr_end();
    }
    rec_arr_end();
    rec_end();
    if (r->dropped) {
        rec_begin(REC_ERROR);
        rec_str("code", "regions");
        rec_str("msg", "the memory map has more free pieces than REGIONS_MAX (lib/regions.h): the smallest were "
                       "dropped (mem.dropped_regions, mem.dropped_bytes) and are never used");
        rec_end();
        console_say(VGA_YELLOW, "memory: %u small free regions dropped (%llu KiB): see the mem record", r->dropped,
                    (unsigned long long)(r->dropped_bytes >> 10));
    }
    if (memory_map_dropped()) {
        rec_begin(REC_ERROR);
        rec_str("code", "boot_map");
        rec_u64("dropped", memory_map_dropped());
        rec_str("msg", "the loader's memory map has more entries than BOOT_MAP_MAX (lib/bootinfo.h): the rest "
                       "were not read, so their memory is never used and the image check may name them");
        rec_end();
    }
    image_overlap_error(image_base, image_end);
    console_say(VGA_GREY, "memory: %llu KiB usable, largest free block %llu KiB",
                (unsigned long long)(memory_usable() >> 10), (unsigned long long)(memory_largest_free() >> 10));
}

static void id_list(const char *key, const uint32_t *ids, uint32_t n)
{
    rec_arr_begin(key);
    for (uint32_t i = 0; i < n && i < SMP_MAX_CPUS; i++)
        rec_u64(0, ids[i]);
    rec_arr_end();
}

void sysinfo_smp(void)
{
    const struct smp_summary *s = smp_summary();
    if (s->wanted == 1)
        return;
    rec_begin(REC_SMP);
    if (s->wanted)
        rec_u64("wanted", s->wanted);
    else
        rec_str("wanted", "all");
    rec_u64("found", s->found);
    id_list("found_ids", s->found_ids, s->found);
    rec_u64("used", s->used);
    id_list("used_ids", s->used_ids, s->used);
    id_list("failed_ids", s->failed_ids, s->failed);
    rec_u64("failed", s->failed);
    rec_str("apic", s->apic);
    rec_u64("trampoline", s->trampoline);
    rec_u64("start_ticks", s->start_ticks);
    rec_str("why", s->why);
    rec_str("cores", s->cores);
    if (s->cores)
        id_list("core_ids", s->core_ids, s->used);
    else
        rec_null("core_ids");
    rec_u64("shared_cpus", s->shared_cpus);
    rec_end();
    if (s->shared_cpus)
        console_say(VGA_YELLOW, "cpus: %u workers sharing %u CPUs (oversubscribe=1: logic, not timing)", s->used,
                    s->shared_cpus);
    else
        console_say(VGA_GREY, "cpus: %u of %u found in use", s->used, s->found);
}

void sysinfo_config(const struct config *cfg)
{
    rec_begin(REC_CONFIG);
    rec_obj_begin("cfg");
    for (int k = 0; k < KEY_COUNT; k++) {
        const struct key_spec *spec = &config_keys[k];
        switch (spec->kind) {
        case KIND_ENUM:
        case KIND_ENUM_OR_PORT:
            rec_str(spec->name, config_value_name(cfg, (enum config_key)k));
            break;
        case KIND_FLAG:
            rec_bool(spec->name, *config_field_u32((struct config *)cfg, (enum config_key)k) != 0);
            break;
        case KIND_COUNT:
            if (k == KEY_REPS && !cfg->given[k])
                rec_null(spec->name); /* each benchmark's own default */
            else
                rec_u64(spec->name, *config_field_u32((struct config *)cfg, (enum config_key)k));
            break;
        case KIND_COUNT_OR_WORD:
            if (*config_field_u32((struct config *)cfg, (enum config_key)k) == 0)
                rec_str(spec->name, spec->values[0]);
            else
                rec_u64(spec->name, *config_field_u32((struct config *)cfg, (enum config_key)k));
            break;
        case KIND_COUNT_OR_SECONDS: {
            uint32_t v = *config_field_u32((struct config *)cfg, (enum config_key)k);
            if (v & CFG_SECONDS) {
                char text[16];
                fmt(text, sizeof text, "%us", v & ~CFG_SECONDS);
                rec_str(spec->name, text);
            } else {
                rec_u64(spec->name, v);
            }
            break;
        }
        case KIND_SIZE:
            rec_u64(spec->name, *(const uint64_t *)((const char *)cfg + spec->offset));
            break;
        case KIND_SIZE_LIST:
            rec_arr_begin(spec->name);
            for (uint32_t i = 0; i < cfg->nsizes; i++)
                rec_u64(0, cfg->sizes[i]);
            rec_arr_end();
            break;
        case KIND_NAME_LIST:
            rec_arr_begin(spec->name);
            for (uint32_t i = 0; i < cfg->nbenches; i++)
                rec_str(0, bench_registry[cfg->benches[i]]->name);
            rec_arr_end();
            break;
        }
    }
    rec_obj_end();
    rec_arr_begin("given");
    for (int k = 0; k < KEY_COUNT; k++)
        if (cfg->given[k])
            rec_str(0, config_keys[k].name);
    rec_arr_end();
    rec_str("exit_method", exit_method_name());
    rec_bool("serial", serial_present());
    rec_end();
}
