/* The record writer: builds one protocol-v1 record at a time as
 *     @cr1 <json> ~<crc32>\r\n
 * streaming the JSON to a sink while checksumming it, so a record of any
 * length (raw samples) needs no buffer. JSON values are integers, strings,
 * booleans, null, arrays and objects only; strings leave as printable ASCII.
 *
 * Calls go to the current writer (rec_attach); inside an array pass a NULL
 * key. Every record gets "t" and the next "seq" automatically. */
#ifndef LIB_RECORD_H
#define LIB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAX_DEPTH 8

typedef void (*rec_sink_fn)(void *ctx, const char *s, size_t n);

struct rec_writer {
    rec_sink_fn sink;
    void *ctx;
    uint32_t seq;   /* seq of the next record */
    uint32_t crc;   /* running CRC state of the open record */
    int depth;      /* 0 = no record open */
    bool need_comma[REC_MAX_DEPTH + 1];
    char closer[REC_MAX_DEPTH + 1]; /* '}' or ']' of each open container */
};

void rec_writer_init(struct rec_writer *w, rec_sink_fn sink, void *ctx);
/* Make w the current writer; returns the previous one (may be NULL). */
struct rec_writer *rec_attach(struct rec_writer *w);
struct rec_writer *rec_current(void);

void rec_begin(const char *type);
void rec_end(void);
/* Terminates a record left open (e.g. by a fault inside a writer call); the
 * host then counts it as corrupt. No-op when no record is open. */
void rec_abort(void);
bool rec_is_open(void);
/* Number of records written so far = the seq the next one will get. */
uint32_t rec_count(void);

void rec_str(const char *key, const char *value);
void rec_strn(const char *key, const char *value, size_t n);
void rec_u64(const char *key, uint64_t value);
void rec_i64(const char *key, int64_t value);
void rec_bool(const char *key, bool value);
void rec_null(const char *key);
void rec_obj_begin(const char *key);
void rec_obj_end(void);
void rec_arr_begin(const char *key);
void rec_arr_end(void);

#endif
