/* The user's code as the host hands it over (docs/USERCODE.md): a blob the
 * host tool assembles or compiles (tools/cleanroom_host/machines/usercode.py
 * writes the same layout) and the loader places as a module, or the hosted
 * build maps from a file. The kernel reads it in place, never trusting it:
 * every offset and length is checked against the blob before use.
 *
 * Layout, little-endian 32-bit words:
 *   0  magic USERCODE_MAGIC      4  version USERCODE_VERSION
 *   8  kind (enum usercode_kind) 12 size of the whole blob
 *  16  name, USERCODE_NAME_MAX bytes, zero-padded (the user's label)
 *  48  the kind's own words (below), then the code they point into.
 * A snippet: setup offset, setup length, variants (1, or
 * USERCODE_VARIANTS: the body assembled once per register the host put for
 * its {r}), then a body offset and length per variant. A primitive: below.
 *
 * Portable: the unit tests (tests/unit/test_usercode.c) hand it blobs they
 * built. */
#ifndef LIB_USERCODE_H
#define LIB_USERCODE_H

#include <stdbool.h>
#include <stdint.h>

#define USERCODE_MAGIC 0x43555243u /* "CRUC" */
#define USERCODE_VERSION 1u
#define USERCODE_NAME_MAX 32
#define USERCODE_HEADER 48
#define USERCODE_VARIANTS 6 /* {r}: eax, ecx, edx, ebx, esi, edi in turn */

enum usercode_kind { USERCODE_SNIPPET = 1, USERCODE_SWITCH = 2, USERCODE_LOCK = 3 };

struct usercode_piece {
    const uint8_t *code;
    uint32_t len;
};

struct usercode_snippet {
    char name[USERCODE_NAME_MAX + 1];
    struct usercode_piece setup;
    uint32_t nvariants; /* 1: as written; USERCODE_VARIANTS: one per register of {r} */
    struct usercode_piece body[USERCODE_VARIANTS];
};

/* The kind a blob says it is (enum usercode_kind), or 0 when it is not the
 * user's code (no magic, or too short to say). */
uint32_t usercode_kind(const void *p, uint32_t len);

/* The snippet in blob [p, p+len), or false with why it is not one (a
 * constant string naming the first thing wrong). */
bool usercode_snippet(const void *p, uint32_t len, struct usercode_snippet *out, const char **why);

/* A primitive (a switch routine, a lock): its words after the header are the
 * built-in it stands in for (USERCODE_AS_MAX bytes, zero-padded; empty: a
 * case of its own), the code's offset and length, USERCODE_ENTRIES entry
 * points as offsets into the code (USERCODE_NO_ENTRY: none), and the lock's
 * size in bytes. The code runs where the kernel copies it (position-
 * independent: the host refused absolute addresses in it). Entries:
 *   switch: 0 the routine (runtime/switch.h's contract, ECX the state word),
 *           1 the optional frame builder (lib/userabi.h);
 *   lock:   0 init, 1 lock, 2 unlock (lib/userabi.h). */
#define USERCODE_AS_MAX 16
#define USERCODE_ENTRIES 4
#define USERCODE_NO_ENTRY 0xffffffffu
#define USERCODE_LOCK_MAX 65536 /* bytes of a lock object (its per-CPU nodes included) */

struct usercode_primitive {
    char name[USERCODE_NAME_MAX + 1];
    char as[USERCODE_AS_MAX + 1];
    struct usercode_piece code;
    uint32_t entry[USERCODE_ENTRIES]; /* offsets into code, or USERCODE_NO_ENTRY */
    uint32_t lock_size;
};

/* The primitive of this kind in blob [p, p+len), or false with why not.
 * Every entry a kind needs is checked to lie inside the code. */
bool usercode_primitive(const void *p, uint32_t len, enum usercode_kind kind, struct usercode_primitive *out,
                        const char **why);

/* Where a byte of an unrolled buffer lies: the setup, copy k of the body
 * (its variant: k mod the variants the buffer rotates through), or the
 * harness's own tail. The buffer is setup, then `copies` bodies, the
 * variants in turn (rotate) or variant `fixed` throughout, then the tail. */
struct usercode_layout {
    uint32_t setup_len;
    uint32_t nvariants;   /* variants rotated through; 1: `fixed` only */
    uint32_t fixed;       /* the one variant when nvariants is 1 */
    uint32_t body_len[USERCODE_VARIANTS];
    uint32_t copies;
};

enum usercode_part { USERCODE_IN_SETUP, USERCODE_IN_BODY, USERCODE_IN_TAIL };

struct usercode_place {
    enum usercode_part part;
    uint32_t copy;    /* USERCODE_IN_BODY: which copy, from 0 */
    uint32_t variant; /* USERCODE_IN_BODY: which of the body's variants */
    uint32_t offset;  /* from the start of the setup, of that copy's body, or of the tail */
};

/* Bytes of the setup and the copies (the tail follows). */
uint32_t usercode_code_len(const struct usercode_layout *l);
struct usercode_place usercode_locate(const struct usercode_layout *l, uint32_t offset);
/* "setup", "body", "tail" */
const char *usercode_part_name(enum usercode_part part);

#endif
