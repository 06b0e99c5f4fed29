/* The ICCS SM3 DRNG (spec/drng.md §§2-4). */
#include "sm3_drng.h"

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

/* ---------------------------------------------- Hashgen, many blocks at once
 *
 * Hashgen hashes V, V+1, V+2, ...: independent 55-byte messages, each exactly one
 * SM3 block once padded (55 bytes, 0x80, 64-bit length 440). KAT_2_33 needs 2^25 of
 * them, so they are hashed LANES at a time with GCC/Clang vector extensions (one
 * 32-bit lane per message), which keeps the DRNG well ahead of the hashes it feeds.
 * Elsewhere, or for a last partial group, the plain SM3 of sm3.c does it.
 */
#if defined(__GNUC__)
#define DRNG_LANES 8

typedef uint32_t lanes_u32 __attribute__((vector_size(4 * DRNG_LANES)));

/* SM3's initial value (GB/T 32905-2016 §4.1) and round constants T_j (§4.2). */
static const uint32_t SM3_IV[8] = {
    0x7380166fu, 0x4914b2b9u, 0x172442d7u, 0xda8a0600u,
    0xa96f30bcu, 0x163138aau, 0xe38dee4du, 0xb0fb0e4eu,
};
#define SM3_T_LOW 0x79cc4519u   /* rounds 0..15 */
#define SM3_T_HIGH 0x7a879d8au  /* rounds 16..63 */

static uint32_t rotl32(uint32_t x, unsigned n)
{
    n &= 31;
    return n ? (x << n) | (x >> (32 - n)) : x;
}

/* n must be 1..31 here: every call site passes a constant in that range. */
#define VROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define P0(x) ((x) ^ VROTL(x, 9) ^ VROTL(x, 17))
#define P1(x) ((x) ^ VROTL(x, 15) ^ VROTL(x, 23))

/* Every lane set to x (GCC and Clang widen a scalar operand to a vector). */
#define BROADCAST(x) ((lanes_u32){0} + (uint32_t)(x))

static uint32_t load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The 16 message words of SM3(data + lane) in every lane; data advances by DRNG_LANES. */
static void load_lanes(unsigned char data[DRNG_SEED_BYTES], lanes_u32 w[16])
{
    int lane, j;
    for (lane = 0; lane < DRNG_LANES; lane++) {
        for (j = 0; j < 13; j++)
            w[j][lane] = load_be32(data + 4 * j);
        w[13][lane] = (uint32_t)data[52] << 24 | (uint32_t)data[53] << 16
                      | (uint32_t)data[54] << 8 | 0x80u;  /* the padding's 1 bit */
        w[14][lane] = 0;                                  /* length field: 440 bits */
        w[15][lane] = 8 * DRNG_SEED_BYTES;
        increment_be(data);
    }
}

/* SM3 of DRNG_LANES one-block messages (CF of GB/T 32905 §5.3 from the IV). */
#if defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void sm3_lanes(unsigned char data[DRNG_SEED_BYTES], unsigned char *out)
{
    lanes_u32 w[68], a, b, c, d, e, f, g, h;
    int j, lane;

    load_lanes(data, w);
    for (j = 16; j < 68; j++)
        w[j] = P1(w[j - 16] ^ w[j - 9] ^ VROTL(w[j - 3], 15)) ^ VROTL(w[j - 13], 7) ^ w[j - 6];
    a = BROADCAST(SM3_IV[0]); b = BROADCAST(SM3_IV[1]);
    c = BROADCAST(SM3_IV[2]); d = BROADCAST(SM3_IV[3]);
    e = BROADCAST(SM3_IV[4]); f = BROADCAST(SM3_IV[5]);
    g = BROADCAST(SM3_IV[6]); h = BROADCAST(SM3_IV[7]);
    for (j = 0; j < 64; j++) {
        lanes_u32 a12 = VROTL(a, 12);
        uint32_t t = rotl32(j < 16 ? SM3_T_LOW : SM3_T_HIGH, (unsigned)j);
        lanes_u32 ss1 = a12 + e + BROADCAST(t);
        lanes_u32 ff, gg, tt1, tt2;
        ss1 = VROTL(ss1, 7);
        if (j < 16) {
            ff = a ^ b ^ c;
            gg = e ^ f ^ g;
        } else {
            ff = (a & b) | (a & c) | (b & c);
            gg = (e & f) | (~e & g);
        }
        tt1 = ff + d + (ss1 ^ a12) + (w[j] ^ w[j + 4]);
        tt2 = gg + h + ss1 + w[j];
        d = c; c = VROTL(b, 9); b = a; a = tt1;
        h = g; g = VROTL(f, 19); f = e; e = P0(tt2);
    }
    {
        lanes_u32 state[8] = {a, b, c, d, e, f, g, h};
        for (lane = 0; lane < DRNG_LANES; lane++)
            for (j = 0; j < 8; j++) {
                uint32_t word = state[j][lane] ^ SM3_IV[j];
                unsigned char *p = out + SM3_DIGEST_BYTES * lane + 4 * j;
                p[0] = (unsigned char)(word >> 24);
                p[1] = (unsigned char)(word >> 16);
                p[2] = (unsigned char)(word >> 8);
                p[3] = (unsigned char)word;
            }
    }
}
#else
#define DRNG_LANES 1
#endif

/* Hashgen: SM3(V), SM3(V+1), ... concatenated; out_bytes of it go to out. */
static int hashgen(const unsigned char v[DRNG_SEED_BYTES], uint64_t out_bytes,
                   unsigned char *out, drng_progress_fn progress, void *progress_ctx)
{
    unsigned char data[DRNG_SEED_BYTES], last[SM3_DIGEST_BYTES];
    uint64_t whole_blocks = out_bytes / SM3_DIGEST_BYTES, block = 0;
    size_t rest = (size_t)(out_bytes % SM3_DIGEST_BYTES);

    memcpy(data, v, DRNG_SEED_BYTES);
#if DRNG_LANES > 1
    /* PROGRESS_BLOCKS is a multiple of DRNG_LANES, so no report is skipped. */
    for (; block + DRNG_LANES <= whole_blocks; block += DRNG_LANES) {
        sm3_lanes(data, out + (size_t)block * SM3_DIGEST_BYTES);
        if (progress != NULL && (block + DRNG_LANES) % PROGRESS_BLOCKS == 0
            && progress(progress_ctx, (block + DRNG_LANES) * SM3_DIGEST_BYTES) != 0)
            return -1;
    }
#endif
    for (; block < whole_blocks; block++) {
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
