#include "lib/bootinfo.h"
#include "unit.h"

#define MIB (1ull << 20)

/* A multiboot2 information structure, built tag by tag as GRUB lays it out. */
static uint8_t mbi[16 + 24 * (BOOT_MAP_MAX + 8) + BOOT_CMDLINE_MAX + 256] __attribute__((aligned(8)));
static uint32_t used;

static uint8_t *tag(uint32_t type, uint32_t size)
{
    uint8_t *t = mbi + used;
    if (used + size > sizeof mbi) {
        printf("FAIL: the test's multiboot2 buffer is too small\n");
        exit(1);
    }
    memcpy(t, &type, 4);
    memcpy(t + 4, &size, 4);
    used += (size + 7) & ~7u;
    return t;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void begin(void)
{
    memset(mbi, 0, sizeof mbi);
    used = 8;
}

static uint32_t end(void)
{
    tag(0, 8);
    put32(mbi, used);
    return (uint32_t)(uintptr_t)mbi;
}

static void mmap_tag(const struct boot_map_entry *e, uint32_t n)
{
    uint8_t *t = tag(6, 16 + 24 * n);
    put32(t + 8, 24);
    for (uint32_t i = 0; i < n; i++) {
        put64(t + 16 + 24 * i, e[i].base);
        put64(t + 24 + 24 * i, e[i].len);
        put32(t + 32 + 24 * i, e[i].type);
    }
}

static void rsdp_tag(uint32_t type, uint32_t len, uint8_t fill)
{
    uint8_t *t = tag(type, 8 + len);
    memset(t + 8, fill, len);
}

static struct bootinfo b;

static void test_multiboot2(void)
{
    begin();
    memcpy(tag(1, 8 + 25) + 8, "suite=selftest exit=auto", 25);
    memcpy(tag(2, 8 + 5) + 8, "GRUB", 5);
    uint8_t *mem = tag(4, 16);
    put32(mem + 8, 639);
    put32(mem + 12, 130048);
    struct boot_map_entry map[] = {
        { 0, 0x9fc00, BOOT_MEM_AVAILABLE }, { MIB, 127 * MIB, BOOT_MEM_AVAILABLE }, { 0xfffc0000, 0x40000, 2 },
    };
    mmap_tag(map, 3);
    uint8_t *fb = tag(8, 38);
    put64(fb + 8, 0x4000000000ull); /* above 4 GiB: the tag's address is 64 bits */
    put32(fb + 16, 7680);
    put32(fb + 20, 1920);
    put32(fb + 24, 1080);
    fb[28] = 32, fb[29] = BOOT_FB_RGB;
    uint8_t colors[6] = { 16, 8, 8, 8, 0, 8 };
    memcpy(fb + 32, colors, 6);
    rsdp_tag(15, 36, 0xa2); /* the new RSDP first: the old one after it must not replace it */
    rsdp_tag(14, 20, 0xa1);
    uint8_t *efi = tag(17, 16 + 2 * 48); /* 48-byte descriptors, as OVMF's */
    put32(efi + 8, 48);
    put32(efi + 16, 7), put64(efi + 24, MIB), put64(efi + 40, 256);        /* conventional, 1 MiB */
    put32(efi + 64, 6), put64(efi + 72, 0x7f000000), put64(efi + 88, 16); /* runtime data, 64 KiB */
    put32(tag(21, 12) + 8, 0x100000);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);

    CHECK(b.protocol == 2);
    CHECK(b.has_cmdline && b.has_loader);
    CHECK_STR(b.cmdline, "suite=selftest exit=auto");
    CHECK_STR(b.loader, "GRUB");
    CHECK(b.has_mem && b.mem_lower == 639 && b.mem_upper == 130048);
    CHECK(b.map.given && b.map.n == 3 && b.map.dropped == 0);
    CHECK(b.map.e[1].base == MIB && b.map.e[1].len == 127 * MIB && b.map.e[1].type == BOOT_MEM_AVAILABLE);
    CHECK(b.map.e[2].base == 0xfffc0000 && b.map.e[2].type == 2);
    CHECK(b.fb.given && b.fb.addr == 0x4000000000ull && b.fb.pitch == 7680 && b.fb.width == 1920);
    CHECK(b.fb.height == 1080 && b.fb.bpp == 32 && b.fb.type == BOOT_FB_RGB);
    CHECK(b.fb.red_pos == 16 && b.fb.red_size == 8 && b.fb.green_pos == 8 && b.fb.blue_pos == 0);
    CHECK(b.rsdp_len == 36 && b.rsdp[0] == 0xa2 && b.rsdp[35] == 0xa2);
    CHECK(b.efi_map.given && b.efi_map.n == 2);
    CHECK(b.efi_map.e[0].type == 7 && b.efi_map.e[0].base == MIB && b.efi_map.e[0].len == MIB);
    CHECK(b.efi_map.e[1].type == 6 && b.efi_map.e[1].len == 64 * 1024);
    CHECK(b.has_load_base && b.load_base == 0x100000);

    /* ACPI 1.0 only: the 20-byte copy */
    begin();
    rsdp_tag(14, 20, 0xa1);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(b.rsdp_len == 20 && b.rsdp[19] == 0xa1 && !b.map.given && !b.fb.given && !b.has_cmdline);
}

static void test_multiboot2_malformed(void)
{
    /* a tag claiming more than the structure holds ends the reading there */
    begin();
    memcpy(tag(2, 8 + 5) + 8, "GRUB", 5);
    uint8_t *bad = tag(1, 16);
    put32(bad + 4, 4096);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(b.has_loader && !b.has_cmdline);

    /* a command line without its terminator inside the tag: not read */
    begin();
    memcpy(tag(1, 8 + 4) + 8, "abcd", 4);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(!b.has_cmdline && b.cmdline[0] == 0);

    /* a command line longer than the kernel keeps: cut before a whole token, and said */
    begin();
    static char long_line[BOOT_CMDLINE_MAX + 64];
    memset(long_line, 'x', sizeof long_line - 1);
    memcpy(long_line, "suite=quick ", 12);
    long_line[sizeof long_line - 1] = 0;
    memcpy(tag(1, 8 + sizeof long_line) + 8, long_line, sizeof long_line);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(b.has_cmdline && strcmp(b.cmdline, "suite=quick ") == 0 && b.cut.len == sizeof long_line - 1);
    CHECK(b.cut.tokens == 1);

    /* memory map entries smaller than the specification's 24 bytes: none read */
    begin();
    uint8_t *t = tag(6, 16 + 40);
    put32(t + 8, 20);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(b.map.given && b.map.n == 0);

    /* a map longer than BOOT_MAP_MAX: the rest counted, never read */
    begin();
    static struct boot_map_entry many[BOOT_MAP_MAX + 3];
    for (uint32_t i = 0; i < BOOT_MAP_MAX + 3; i++)
        many[i] = (struct boot_map_entry){ i * 2 * MIB, MIB, BOOT_MEM_AVAILABLE };
    mmap_tag(many, BOOT_MAP_MAX + 3);
    bootinfo_read(MULTIBOOT2_LOADER_MAGIC, end(), &b);
    CHECK(b.map.n == BOOT_MAP_MAX && b.map.dropped == 3);

    /* neither magic: nothing but that */
    bootinfo_read(0x12345678, (uint32_t)(uintptr_t)mbi, &b);
    CHECK(b.protocol == 0 && !b.map.given && !b.has_loader);
}

/* Multiboot v1: pointers to the command line, the name and the map. */
static void test_multiboot1(void)
{
    static uint8_t info[120] __attribute__((aligned(4)));
    static uint8_t map[2 * 24];
    static const char cmdline[] = "/boot/cleanroom.elf suite=quick", loader[] = "qemu";
    memset(info, 0, sizeof info);
    put32(info, (1u << 0) | (1u << 2) | (1u << 6) | (1u << 9) | (1u << 12));
    put32(info + 4, 639), put32(info + 8, 130048);
    put32(info + 16, (uint32_t)(uintptr_t)cmdline);
    put32(info + 64, (uint32_t)(uintptr_t)loader);
    for (int i = 0; i < 2; i++) {
        put32(map + 24 * i, 20);
        put64(map + 24 * i + 4, i ? MIB : 0);
        put64(map + 24 * i + 12, i ? 127 * MIB : 0x9fc00);
        put32(map + 24 * i + 20, BOOT_MEM_AVAILABLE);
    }
    put32(info + 44, sizeof map), put32(info + 48, (uint32_t)(uintptr_t)map);
    put64(info + 88, 0x80000000u), put32(info + 96, 3200), put32(info + 100, 800), put32(info + 104, 600);
    info[108] = 32, info[109] = BOOT_FB_RGB;
    info[112] = 16, info[113] = 8, info[114] = 8, info[115] = 8, info[116] = 0, info[117] = 8; /* where GRUB writes them */
    bootinfo_read(MULTIBOOT1_LOADER_MAGIC, (uint32_t)(uintptr_t)info, &b);
    CHECK(b.protocol == 1);
    CHECK_STR(b.cmdline, cmdline);
    CHECK_STR(b.loader, "qemu");
    CHECK(b.has_mem && b.mem_upper == 130048);
    CHECK(b.map.n == 2 && b.map.e[1].base == MIB && b.map.e[1].len == 127 * MIB);
    CHECK(b.fb.given && b.fb.addr == 0x80000000u && b.fb.width == 800 && b.fb.red_pos == 16 && b.fb.blue_size == 8);
    CHECK(!b.efi_map.given && b.rsdp_len == 0 && !b.has_load_base);

    /* flags say what is there: without bit 6 there is no map */
    put32(info, 1u << 0);
    bootinfo_read(MULTIBOOT1_LOADER_MAGIC, (uint32_t)(uintptr_t)info, &b);
    CHECK(!b.map.given && b.has_mem && !b.has_cmdline && !b.fb.given);
}

static void test_overlap(void)
{
    struct boot_overlap o;
    memset(&b, 0, sizeof b);
    b.map.given = true;
    /* the reserved entry first: order must not matter */
    b.map.e[0] = (struct boot_map_entry){ 2 * MIB, 2 * MIB, BOOT_MEM_BAD };
    b.map.e[1] = (struct boot_map_entry){ MIB, 127 * MIB, BOOT_MEM_AVAILABLE };
    b.map.n = 2;
    /* `cutmem 2M 4M` under GRUB's multiboot v1: the image at 2 MiB on bad memory */
    CHECK(bootinfo_overlap(&b, 2 * MIB, 2 * MIB + 500 * 1024, &o));
    CHECK(o.base == 2 * MIB && o.end == 2 * MIB + 500 * 1024 && o.type == BOOT_MEM_BAD);
    CHECK_STR(o.map, "multiboot");
    CHECK_STR(o.what, "bad memory");
    /* straddling: only the part on bad memory */
    CHECK(bootinfo_overlap(&b, MIB + 768 * 1024, 2 * MIB + 256 * 1024, &o));
    CHECK(o.base == 2 * MIB && o.end == 2 * MIB + 256 * 1024);
    /* where multiboot2 put it: free */
    CHECK(!bootinfo_overlap(&b, MIB, MIB + 500 * 1024, &o));
    /* past the map's end: no entry covers it */
    CHECK(bootinfo_overlap(&b, 127 * MIB, 129 * MIB, &o));
    CHECK(o.base == 128 * MIB && o.end == 129 * MIB && o.type == 0);
    CHECK_STR(o.what, "not in the map");

    /* the firmware's own map is checked too: GRUB's may not say what it holds */
    b.efi_map.given = true;
    b.efi_map.e[0] = (struct boot_map_entry){ 0, 128 * MIB, 7 };
    b.efi_map.e[1] = (struct boot_map_entry){ MIB + 64 * 1024, 8192, 9 };
    b.efi_map.n = 2;
    CHECK(bootinfo_overlap(&b, MIB, MIB + 500 * 1024, &o));
    CHECK(o.base == MIB + 64 * 1024 && o.end == MIB + 72 * 1024 && o.type == 9);
    CHECK_STR(o.map, "efi");
    CHECK_STR(o.what, "EfiACPIReclaimMemory");
    b.efi_map.e[1].type = 4; /* boot-services data is free once the loader exited them */
    CHECK(!bootinfo_overlap(&b, MIB, MIB + 500 * 1024, &o));

    CHECK(boot_efi_type_usable(1) && boot_efi_type_usable(2) && boot_efi_type_usable(3));
    CHECK(!boot_efi_type_usable(5) && !boot_efi_type_usable(6) && !boot_efi_type_usable(10));
    CHECK_STR(boot_mem_type_name(6, true), "EfiRuntimeServicesData");
    CHECK_STR(boot_mem_type_name(0x80000000u, true), "an OEM type");
    CHECK_STR(boot_mem_type_name(3, false), "ACPI reclaimable");
}

int main(void)
{
    test_multiboot2();
    test_multiboot2_malformed();
    test_multiboot1();
    test_overlap();
    printf("%d passed, %d failed\n", unit_passed, unit_failed);
    return unit_failed != 0;
}
