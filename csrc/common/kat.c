/* The official NGCC CryptHash KAT file generator (spec/kat-format.md §§2-8). */
#include "kat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm3_drng.h"

#define SEED_BYTES 64              /* the 8-character tag, 8 times (§2) */
#define MAX_NAME_CHARS 64          /* §1 */
#define MAX_DIGEST_BYTES 1024      /* KAT_Loop XORs the digest into a 1024-byte message */
#define SHORT_MAX_BITS 4096        /* KAT_2_12: messages of 0..4096 bits (§4) */
#define LOOP_MESSAGE_BITS 8192     /* KAT_Loop: one 2^13-bit message (§6) */
#define LOOP_MESSAGE_BYTES (LOOP_MESSAGE_BITS / 8)
#define LOOP_STEPS 1000000
#define LOOP_PROGRESS_STEPS 1000
#define EXP_BYTES 8                /* Msg_Exp shows the first and last 8 bytes (§3.2) */

/* What one file's writer needs: the generator, the open file, the error sink. */
typedef struct {
    const kat_generator *gen;
    FILE *file;
    unsigned char seed[SEED_BYTES];
    unsigned char *digest;  /* gen->digest_area, or own_digest */
    unsigned char own_digest[MAX_DIGEST_BYTES];
    char *error;
    size_t error_size;
} kat_writer;

const char *kat_file_tag(kat_file_kind kind)
{
    switch (kind) {
    case KAT_FILE_2_12: return "2_12";
    case KAT_FILE_2_23: return "2_23";
    case KAT_FILE_2_33: return "2_33";
    case KAT_FILE_LOOP: return "Loop";
    }
    return "?";
}

/* §1: at most 64 characters, each a letter, digit, '-' or '_' (we also refuse ""). */
static int instance_name_ok(const char *name)
{
    size_t n;
    for (n = 0; name[n] != '\0'; n++) {
        char c = name[n];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                 || c == '-' || c == '_';
        if (!ok || n >= MAX_NAME_CHARS)
            return 0;
    }
    return n > 0;
}

static int report(const kat_writer *w, uint64_t done, uint64_t total)
{
    const kat_generator *gen = w->gen;
    return gen->progress != NULL && gen->progress(gen->progress_ctx, done, total) != 0;
}

static void put_hex(FILE *file, const unsigned char *bytes, size_t n)
{
    static const char digits[] = "0123456789ABCDEF";
    char text[512];
    size_t i, used = 0;

    for (i = 0; i < n; i++) {
        text[used++] = digits[bytes[i] >> 4];
        text[used++] = digits[bytes[i] & 15];
        if (used == sizeof text) {
            fwrite(text, 1, used, file);
            used = 0;
        }
    }
    fwrite(text, 1, used, file);
}

static int no_memory(kat_writer *w, uint64_t bytes, const char *what)
{
    snprintf(w->error, w->error_size,
             "cannot allocate the %llu-byte message buffer (%llu MiB) for %s: "
             "this file needs that much free memory",
             (unsigned long long)bytes, (unsigned long long)(bytes >> 20), what);
    return KAT_ERR_MEMORY;
}

/* A buffer of `bytes` bytes for a message: the generator's guarded one if it has
 * one, else `own` (a buffer of the writer's, or NULL: malloc). */
static unsigned char *message_area(const kat_writer *w, size_t bytes, unsigned char *own)
{
    if (w->gen->message_buffer != NULL)
        return w->gen->message_buffer(w->gen->message_ctx, bytes);
    return own != NULL ? own : malloc(bytes);
}

/* Hash the message (moved into the guarded buffer first, if there is one); on
 * failure name the record, as the ICCS generator stops there. */
static int hash_record(kat_writer *w, const unsigned char *msg, uint64_t bits,
                       unsigned record)
{
    size_t bytes = (size_t)((bits + 7) / 8);
    unsigned char *at = (unsigned char *)msg;
    int status;

    if (w->gen->message_buffer != NULL) {
        at = w->gen->message_buffer(w->gen->message_ctx, bytes);
        if (at == NULL)
            return no_memory(w, bytes, "a KAT record");
        if (at != msg && bytes > 0)
            memmove(at, msg, bytes);
    }
    status = w->gen->hash(w->gen->digest_bits, at, bits, w->digest);
    if (status != 0) {
        snprintf(w->error, w->error_size,
                 "CryptHash returned %d for record %u (Msg_Len = %llu) of KAT file for %s",
                 status, record, (unsigned long long)bits, w->gen->instance);
        return KAT_ERR_HASH;
    }
    return KAT_OK;
}

/* The Dst_Len and Dst lines and the empty line that closes every record. */
static void put_digest(kat_writer *w)
{
    fprintf(w->file, "Dst_Len = %d\nDst = ", w->gen->digest_bits);
    if (!w->gen->blank_digests)
        put_hex(w->file, w->digest, (size_t)w->gen->digest_bits / 8);
    fputs("\n\n", w->file);
}

/* §4: 4097 random messages of 0..4096 bits, successive calls on one DRNG. */
static int write_2_12(kat_writer *w)
{
    unsigned char msg[SHORT_MAX_BITS / 8];
    sm3_drng drng;
    unsigned bits;
    int status;

    drng_init(&drng, w->seed, SEED_BYTES);
    for (bits = 0; bits <= SHORT_MAX_BITS; bits++) {
        memset(msg, 0, sizeof msg);
        drng_generate(&drng, bits, msg, NULL, NULL);
        fprintf(w->file, "Msg_Len = %u\nMsg = ", bits);
        put_hex(w->file, msg, (bits + 7) / 8);
        fputc('\n', w->file);
        if ((status = hash_record(w, msg, bits, bits)) != KAT_OK)
            return status;
        put_digest(w);
        if (report(w, bits + 1, SHORT_MAX_BITS + 1))
            return KAT_ERR_STOPPED;
    }
    return KAT_OK;
}

/* Progress of the DRNG inside the random record of KAT_2_23 / KAT_2_33. */
typedef struct {
    const kat_writer *w;
    uint64_t before, total;
} long_progress;

static int drng_progress(void *ctx, uint64_t bytes_done)
{
    const long_progress *p = ctx;
    return report(p->w, p->before + bytes_done, p->total);
}

/* One record of KAT_2_23 / KAT_2_33 (§3.2); the message is already in msg. */
static int long_record(kat_writer *w, const unsigned char *msg, uint64_t bytes, int with_seed,
                       unsigned record)
{
    int status;

    fprintf(w->file, "Msg_Len = %llu\nMsg_Seed = ", (unsigned long long)(8 * bytes));
    if (with_seed)
        put_hex(w->file, w->seed, SEED_BYTES);
    fputs("\nMsg_Exp = ", w->file);
    put_hex(w->file, msg, EXP_BYTES);
    fputs(" .... ", w->file);
    put_hex(w->file, msg + bytes - EXP_BYTES, EXP_BYTES);
    fputc('\n', w->file);
    if ((status = hash_record(w, msg, 8 * bytes, record)) != KAT_OK)
        return status;
    put_digest(w);
    return KAT_OK;
}

/* §5: all-zero, all-one and one DRNG message of bits bits (2^23 or 2^33). */
static int write_long(kat_writer *w, uint64_t bits)
{
    uint64_t bytes = bits / 8, total = 4 * bytes;  /* progress: 3 hashes + 1 DRNG output */
    long_progress p = {w, 2 * bytes, total};
    unsigned char *msg;
    sm3_drng drng;
    int status;

    drng_init(&drng, w->seed, SEED_BYTES);
    msg = message_area(w, (size_t)bytes, NULL);
    if (msg == NULL)
        return no_memory(w, bytes, bits == ((uint64_t)1 << 33) ? "KAT_2_33" : "KAT_2_23");
    memset(msg, 0x00, (size_t)bytes);
    status = long_record(w, msg, bytes, 0, 0);
    if (status == KAT_OK && report(w, bytes, total))
        status = KAT_ERR_STOPPED;
    if (status == KAT_OK) {
        memset(msg, 0xFF, (size_t)bytes);
        status = long_record(w, msg, bytes, 0, 1);
    }
    if (status == KAT_OK && report(w, 2 * bytes, total))
        status = KAT_ERR_STOPPED;
    if (status == KAT_OK) {
        memset(msg, 0x00, (size_t)bytes);
        if (drng_generate(&drng, bits, msg, drng_progress, &p) != 0)
            status = KAT_ERR_STOPPED;
    }
    if (status == KAT_OK)
        status = long_record(w, msg, bytes, 1, 2);
    if (status == KAT_OK && report(w, total, total))
        status = KAT_ERR_STOPPED;
    if (w->gen->message_buffer == NULL)
        free(msg);
    return status;
}

/* §6: m_{i+1} = (m_i <<< d) XOR (h_i || 0...), h_{i+1} = H(m_{i+1}); print m_0, h_1000000. */
static int write_loop(kat_writer *w)
{
    size_t d_bytes = (size_t)w->gen->digest_bits / 8;
    unsigned char own_msg[LOOP_MESSAGE_BYTES], head[MAX_DIGEST_BYTES];
    unsigned char *msg = message_area(w, LOOP_MESSAGE_BYTES, own_msg), *digest = w->digest;
    sm3_drng drng;
    long step;
    size_t i;
    int status;

    if (msg == NULL)
        return no_memory(w, LOOP_MESSAGE_BYTES, "KAT_Loop");
    drng_init(&drng, w->seed, SEED_BYTES);
    drng_generate(&drng, LOOP_MESSAGE_BITS, msg, NULL, NULL);
    fprintf(w->file, "Msg_Len = %d\nMsg = ", LOOP_MESSAGE_BITS);
    put_hex(w->file, msg, LOOP_MESSAGE_BYTES);
    fputc('\n', w->file);
    if ((status = hash_record(w, msg, LOOP_MESSAGE_BITS, 0)) != KAT_OK)
        return status;
    for (step = 1; step <= LOOP_STEPS; step++) {
        memcpy(head, msg, d_bytes);                    /* rotate left by d bits ... */
        memmove(msg, msg + d_bytes, LOOP_MESSAGE_BYTES - d_bytes);
        memcpy(msg + LOOP_MESSAGE_BYTES - d_bytes, head, d_bytes);
        for (i = 0; i < d_bytes; i++)                  /* ... then XOR h into the front */
            msg[i] ^= digest[i];
        /* The ICCS generator ignores CryptHash's status inside the chain. */
        (void)w->gen->hash(w->gen->digest_bits, msg, LOOP_MESSAGE_BITS, digest);
        if (step % LOOP_PROGRESS_STEPS == 0 && report(w, (uint64_t)step, LOOP_STEPS))
            return KAT_ERR_STOPPED;
    }
    put_digest(w);
    return KAT_OK;
}

static int write_kind(kat_writer *w, kat_file_kind kind)
{
    switch (kind) {
    case KAT_FILE_2_12: return write_2_12(w);
    case KAT_FILE_2_23: return write_long(w, (uint64_t)1 << 23);
    case KAT_FILE_2_33: return write_long(w, (uint64_t)1 << 33);
    case KAT_FILE_LOOP: return write_loop(w);
    }
    return KAT_ERR_STOPPED;
}

/* Check the generator's name and digest length, and derive the file's seed. */
static int start_writer(kat_writer *w, kat_file_kind kind)
{
    const kat_generator *gen = w->gen;
    const char *tag = kat_file_tag(kind);
    int i;

    if (!instance_name_ok(gen->instance)) {
        snprintf(w->error, w->error_size, "instance name \"%.80s\" is not 1 to 64 letters, "
                 "digits, '-' or '_' (the ICCS generator refuses it)", gen->instance);
        return KAT_ERR_NAME;
    }
    if (gen->digest_bits < 8 || gen->digest_bits > 8 * MAX_DIGEST_BYTES
        || gen->digest_bits % 8 != 0) {
        snprintf(w->error, w->error_size, "digest_bits must be a multiple of 8 from 8 to %d, "
                 "got %d", 8 * MAX_DIGEST_BYTES, gen->digest_bits);
        return KAT_ERR_DIGEST_BITS;
    }
    for (i = 0; i < SEED_BYTES / 8; i++) {  /* e.g. "KAT_2_12" x 8 */
        memcpy(w->seed + 8 * i, "KAT_", 4);
        memcpy(w->seed + 8 * i + 4, tag, 4);
    }
    w->digest = gen->digest_area != NULL ? gen->digest_area : w->own_digest;
    return KAT_OK;
}

int kat_write_stream(const kat_generator *gen, kat_file_kind kind, FILE *file,
                     const char *where, char *error, size_t error_size)
{
    kat_writer w;
    int status;

    w.gen = gen;
    w.file = file;
    w.error = error;
    w.error_size = error_size;
    if ((status = start_writer(&w, kind)) != KAT_OK)
        return status;
    status = write_kind(&w, kind);
    if (status == KAT_ERR_STOPPED)
        snprintf(error, error_size, "generation of KAT_%s for %s was stopped",
                 kat_file_tag(kind), gen->instance);
    if ((fflush(file) != 0 || ferror(file)) && status == KAT_OK) {
        snprintf(error, error_size, "writing %s failed: %s", where,
                 errno != 0 ? strerror(errno) : "write error");
        status = KAT_ERR_FILE;
    }
    return status;
}

int kat_write_file(const kat_generator *gen, kat_file_kind kind, const char *path,
                   char *error, size_t error_size)
{
    kat_writer check = {gen, NULL, {0}, NULL, {0}, error, error_size};
    FILE *file;
    int status;

    if ((status = start_writer(&check, kind)) != KAT_OK)  /* refuse before creating */
        return status;
    file = fopen(path, "wb");  /* binary: LF line ends on every platform */
    if (file == NULL) {
        snprintf(error, error_size, "cannot create %s: %s", path, strerror(errno));
        return KAT_ERR_FILE;
    }
    setvbuf(file, NULL, _IOFBF, 1 << 16);
    errno = 0;
    status = kat_write_stream(gen, kind, file, path, error, error_size);
    if (fclose(file) != 0 && status == KAT_OK) {
        snprintf(error, error_size, "writing %s failed: %s", path, strerror(errno));
        status = KAT_ERR_FILE;
    }
    return status;
}
