/* The ICCS SM3 DRNG (spec/drng.md §§2-4). */
#include "drng.h"

#include <string.h>

#include "sm3.h"

/* Hash_df's "number of bits to return" field: 440, 4 bytes big-endian (drng.md §1). */
static const unsigned char DF_RETURN_BITS[4] = {0x00, 0x00, 0x01, 0xB8};

/* Tell the progress callback about every 2^15 SM3 blocks = 1 MiB of output. */
#define PROGRESS_BLOCKS ((uint64_t)1 << 15)

/* df(X) = first 55 bytes of SM3(01 || 000001B8 || X) || SM3(02 || 000001B8 || X). */
static void hash_df(const unsigned char *input, size_t input_bytes,
                    unsigned char out[DRNG_SEED_BYTES])
{
    unsigned char t[2 * SM3_DIGEST_BYTES];
    unsigned counter;

    for (counter = 1; counter <= 2; counter++) {
        unsigned char head[5] = {(unsigned char)counter, DF_RETURN_BITS[0], DF_RETURN_BITS[1],
                                 DF_RETURN_BITS[2], DF_RETURN_BITS[3]};
        sm3_context ctx;
        sm3_init(&ctx);
        sm3_update_bits(&ctx, head, 8 * sizeof head);
        sm3_update_bits(&ctx, input, 8 * (uint64_t)input_bytes);
        sm3_final(&ctx, t + SM3_DIGEST_BYTES * (counter - 1));
    }
    memcpy(out, t, DRNG_SEED_BYTES);
}

/* acc = (acc + x) mod 2^440, x a big-endian number of x_bytes <= 55 bytes. */
static void add_be(unsigned char acc[DRNG_SEED_BYTES], const unsigned char *x, size_t x_bytes)
{
    unsigned carry = 0;
    size_t i;

    for (i = 0; i < DRNG_SEED_BYTES; i++) {
        unsigned sum = acc[DRNG_SEED_BYTES - 1 - i] + carry;
        if (i < x_bytes)
            sum += x[x_bytes - 1 - i];
        acc[DRNG_SEED_BYTES - 1 - i] = (unsigned char)sum;
        carry = sum >> 8;
    }
}

/* x = (x + 1) mod 2^440. */
static void increment_be(unsigned char x[DRNG_SEED_BYTES])
{
    int i;
    for (i = DRNG_SEED_BYTES - 1; i >= 0; i--)
        if (++x[i] != 0)
            break;
}

void drng_init(sm3_drng *drng, const unsigned char *seed, size_t seed_bytes)
{
    unsigned char zero_v[1 + DRNG_SEED_BYTES];

    memset(drng, 0, sizeof *drng);
    hash_df(seed, seed_bytes, drng->v);
    zero_v[0] = 0x00;
    memcpy(zero_v + 1, drng->v, DRNG_SEED_BYTES);
    hash_df(zero_v, sizeof zero_v, drng->c);
    drng->reseed_counter[DRNG_SEED_BYTES - 1] = 1;
}

/* Hashgen: SM3(V), SM3(V+1), ... concatenated; out_bytes of it go to out. */
static int hashgen(const unsigned char v[DRNG_SEED_BYTES], uint64_t out_bytes,
                   unsigned char *out, drng_progress_fn progress, void *progress_ctx)
{
    unsigned char data[DRNG_SEED_BYTES], last[SM3_DIGEST_BYTES];
    uint64_t whole_blocks = out_bytes / SM3_DIGEST_BYTES, block;
    size_t rest = (size_t)(out_bytes % SM3_DIGEST_BYTES);

    memcpy(data, v, DRNG_SEED_BYTES);
    for (block = 0; block < whole_blocks; block++) {
        sm3_digest(data, 8 * DRNG_SEED_BYTES, out + (size_t)block * SM3_DIGEST_BYTES);
        increment_be(data);
        if (progress != NULL && (block + 1) % PROGRESS_BLOCKS == 0
            && progress(progress_ctx, (block + 1) * SM3_DIGEST_BYTES) != 0)
            return -1;
    }
    if (rest != 0) {
        /* A partial last block: never write past out_bytes. */
        sm3_digest(data, 8 * DRNG_SEED_BYTES, last);
        memcpy(out + (size_t)whole_blocks * SM3_DIGEST_BYTES, last, rest);
    }
    return 0;
}

int drng_generate(sm3_drng *drng, uint64_t bits, unsigned char *out,
                  drng_progress_fn progress, void *progress_ctx)
{
    uint64_t out_bytes = bits / 8 + (bits % 8 != 0);
    unsigned char prefixed_v[1 + DRNG_SEED_BYTES], h[SM3_DIGEST_BYTES];

    if (hashgen(drng->v, out_bytes, out, progress, progress_ctx) != 0)
        return -1;
    if (bits % 8 != 0)  /* keep the (bits mod 8) most significant bits of the last byte */
        out[out_bytes - 1] &= (unsigned char)(0xFFu << (8 - bits % 8));

    /* State update, also after a 0-bit call: V = V + SM3(03 || V) + C + reseed_counter. */
    prefixed_v[0] = 0x03;
    memcpy(prefixed_v + 1, drng->v, DRNG_SEED_BYTES);
    sm3_digest(prefixed_v, 8 * sizeof prefixed_v, h);
    add_be(drng->v, h, sizeof h);
    add_be(drng->v, drng->c, DRNG_SEED_BYTES);
    add_be(drng->v, drng->reseed_counter, DRNG_SEED_BYTES);
    increment_be(drng->reseed_counter);
    return 0;
}
