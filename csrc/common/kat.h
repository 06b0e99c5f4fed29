/* The official NGCC CryptHash KAT file generator (spec/kat-format.md).
 *
 * Writes KAT_2_12, KAT_2_23, KAT_2_33 and KAT_Loop files byte for byte as the
 * ICCS generator does, driving any instance library through its CryptHash.
 * Messages come from the SM3 DRNG (algorithms/drng/sm3_drng.h), seeded with the file's tag.
 */
#ifndef NGCC_KAT_H
#define NGCC_KAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loader.h"

typedef enum { KAT_FILE_2_12, KAT_FILE_2_23, KAT_FILE_2_33, KAT_FILE_LOOP } kat_file_kind;

/* Status codes: the official generator's own (kat-format.md §8), then ours. */
enum {
    KAT_OK = 0,
    KAT_ERR_FILE = -1,         /* the output file cannot be opened or written */
    KAT_ERR_MEMORY = -2,       /* the message buffer (1 GiB for KAT_2_33) cannot be allocated */
    KAT_ERR_HASH = -3,         /* CryptHash returned nonzero */
    KAT_ERR_NAME = -4,         /* instance name not 1..64 of [A-Za-z0-9_-] */
    KAT_ERR_STOPPED = -5,      /* the progress callback asked to stop */
    KAT_ERR_DIGEST_BITS = -6,  /* digest_bits not a multiple of 8 in 8..8192 */
};

/* Called now and then with the work done so far out of total (units depend on
 * the file: records, chain steps or message bytes); nonzero stops generation. */
typedef int (*kat_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Where CryptHash finds a message of `bytes` bytes: a buffer that ends right
 * before an unreadable page, so a read past the message faults. The buffer stays
 * valid until the next call; NULL if it cannot be had (out of memory). */
typedef unsigned char *(*kat_message_fn)(void *ctx, size_t bytes);

typedef struct {
    crypt_hash_fn hash;        /* the instance's CryptHash */
    const char *instance;      /* ALGORITHM_INSTANCE, e.g. "Pavelor-512" */
    int digest_bits;           /* DIGEST_BIT_LENGTH */
    int blank_digests;         /* OUTPUT_BLANK_TEST_VECTORS: write every Dst empty */
    kat_progress_fn progress;  /* may be NULL */
    void *progress_ctx;
    /* Guarded buffers (the trial driver's guard pages), or NULL for the generator's
     * own: the messages are copied to (or built in) message_buffer's, and
     * CryptHash writes each digest to digest_area (digest_bits / 8 bytes). */
    kat_message_fn message_buffer;
    void *message_ctx;
    unsigned char *digest_area;
} kat_generator;

/* The tag in the file name and seed: "2_12", "2_23", "2_33" or "Loop". */
const char *kat_file_tag(kat_file_kind kind);

/* Generate one KAT file at path. Returns KAT_OK, or a KAT_ERR_* code with a
 * message in error (error_size bytes, NUL-terminated); the file may then be
 * incomplete and is left for the caller to remove. */
int kat_write_file(const kat_generator *gen, kat_file_kind kind, const char *path,
                   char *error, size_t error_size);

/* The same, writing to an open stream (flushed, not closed); `where` names it in
 * error messages. A stream whose writes fail gives KAT_ERR_FILE. */
int kat_write_stream(const kat_generator *gen, kat_file_kind kind, FILE *file,
                     const char *where, char *error, size_t error_size);

#endif
