/* SM3, GB/T 32905-2016 (sections 4-5: IV, constants, padding, compression). */
#include "sm3.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const uint32_t SM3_IV[8] = {
    0x7380166fu, 0x4914b2b9u, 0x172442d7u, 0xda8a0600u,
    0xa96f30bcu, 0x163138aau, 0xe38dee4du, 0xb0fb0e4eu,
};

/* Rotate left by n = 0..31; the masked right shift keeps n = 0 defined. */
static inline uint32_t rotl(uint32_t x, unsigned n)
{
    return (x << (n & 31)) | (x >> ((32 - n) & 31));
}

#define P0(x) ((x) ^ rotl((x), 9) ^ rotl((x), 17))
#define P1(x) ((x) ^ rotl((x), 15) ^ rotl((x), 23))

static uint32_t load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(unsigned char *p, uint32_t x)
{
    p[0] = (unsigned char)(x >> 24);
    p[1] = (unsigned char)(x >> 16);
    p[2] = (unsigned char)(x >> 8);
    p[3] = (unsigned char)x;
}

#ifdef SM3_TEXTBOOK
/* The compression function CF (GB/T 32905 §5.3) as the standard writes it: W and
 * W' expanded in full, then 64 rounds shifting the eight registers, FF_j and GG_j
 * picked per round. The ICCS helpers as shipped (the `ref` variant of ../iccs/)
 * use an SM3 of this plain kind; -DSM3_TEXTBOOK selects it over the fast one below. */
static uint32_t ff(int j, uint32_t x, uint32_t y, uint32_t z)
{
    return j < 16 ? x ^ y ^ z : (x & y) | (x & z) | (y & z);
}

static uint32_t gg(int j, uint32_t x, uint32_t y, uint32_t z)
{
    return j < 16 ? x ^ y ^ z : (x & y) | (~x & z);
}

static void sm3_compress(uint32_t state[8], const unsigned char *data, size_t blocks)
{
    for (; blocks > 0; blocks--, data += SM3_BLOCK_BYTES) {
        uint32_t w[68], w1[64], a, b, c, d, e, f, g, h;
        int j;

        for (j = 0; j < 16; j++)
            w[j] = load_be32(data + 4 * j);
        for (j = 16; j < 68; j++)
            w[j] = P1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6];
        for (j = 0; j < 64; j++)
            w1[j] = w[j] ^ w[j + 4];
        a = state[0]; b = state[1]; c = state[2]; d = state[3];
        e = state[4]; f = state[5]; g = state[6]; h = state[7];
        for (j = 0; j < 64; j++) {
            uint32_t t = j < 16 ? 0x79cc4519u : 0x7a879d8au;
            uint32_t ss1 = rotl(rotl(a, 12) + e + rotl(t, (unsigned)j % 32), 7);
            uint32_t ss2 = ss1 ^ rotl(a, 12);
            uint32_t tt1 = ff(j, a, b, c) + d + ss2 + w1[j];
            uint32_t tt2 = gg(j, e, f, g) + h + ss1 + w[j];
            d = c; c = rotl(b, 9); b = a; a = tt1;
            h = g; g = rotl(f, 19); f = e; e = P0(tt2);
        }
        state[0] ^= a; state[1] ^= b; state[2] ^= c; state[3] ^= d;
        state[4] ^= e; state[5] ^= f; state[6] ^= g; state[7] ^= h;
    }
}
#else
/* The boolean functions (§4.3): XOR in rounds 0..15; majority and choice in
 * 16..63, each written with one operation fewer than the standard's form. */
#define FF_LOW(x, y, z) ((x) ^ (y) ^ (z))
#define GG_LOW(x, y, z) ((x) ^ (y) ^ (z))
#define FF_HIGH(x, y, z) (((x) & (y)) | (((x) | (y)) & (z)))
#define GG_HIGH(x, y, z) ((((y) ^ (z)) & (x)) ^ (z))

/* T_j <<< (j mod 32) (§4.2, §5.3.3), folded to a constant: j is a literal. */
#define T_ROTATED(j) rotl((j) < 16 ? 0x79cc4519u : 0x7a879d8au, (j))

/* Round j of CF (§5.3.3). Rather than shifting eight registers per round, the
 * callers rename them: after a round the new A is in D's variable and the new
 * E in H's, and the arguments of the next round are rotated by one place. */
#define ROUND(A, B, C, D, E, F, G, H, j, FF, GG) { \
        uint32_t a12 = rotl(A, 12); \
        uint32_t ss1 = rotl(a12 + E + T_ROTATED(j), 7); \
        uint32_t tt1 = FF(A, B, C) + D + (ss1 ^ a12) + (w[j] ^ w[(j) + 4]); \
        uint32_t tt2 = GG(E, F, G) + H + ss1 + w[j]; \
        B = rotl(B, 9); \
        F = rotl(F, 19); \
        D = tt1; \
        H = P0(tt2); }

#define ROUNDS_4(j, FF, GG) \
    ROUND(a, b, c, d, e, f, g, h, (j), FF, GG) \
    ROUND(d, a, b, c, h, e, f, g, (j) + 1, FF, GG) \
    ROUND(c, d, a, b, g, h, e, f, (j) + 2, FF, GG) \
    ROUND(b, c, d, a, f, g, h, e, (j) + 3, FF, GG)

/* Message expansion (§5.3.2): W[j] for j = 16..67. */
#define EXPAND(j) \
    w[j] = P1(w[(j) - 16] ^ w[(j) - 9] ^ rotl(w[(j) - 3], 15)) ^ rotl(w[(j) - 13], 7) ^ w[(j) - 6];
#define EXPAND_4(j) EXPAND(j) EXPAND((j) + 1) EXPAND((j) + 2) EXPAND((j) + 3)

/* The compression function CF (GB/T 32905 §5.3) on `blocks` consecutive blocks:
 * the whole of it unrolled, so every W index and round constant is a constant. */
static void sm3_compress(uint32_t state[8], const unsigned char *data, size_t blocks)
{
    for (; blocks > 0; blocks--, data += SM3_BLOCK_BYTES) {
        uint32_t w[68];
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        int j;

        for (j = 0; j < 16; j++)
            w[j] = load_be32(data + 4 * j);
        /* Each W[j + 4] is expanded just before round j needs it, so the expansion
         * fills the gaps in the rounds' dependency chain. */
        ROUNDS_4(0, FF_LOW, GG_LOW) ROUNDS_4(4, FF_LOW, GG_LOW)
        ROUNDS_4(8, FF_LOW, GG_LOW)
        EXPAND_4(16) ROUNDS_4(12, FF_LOW, GG_LOW)
        EXPAND_4(20) ROUNDS_4(16, FF_HIGH, GG_HIGH) EXPAND_4(24) ROUNDS_4(20, FF_HIGH, GG_HIGH)
        EXPAND_4(28) ROUNDS_4(24, FF_HIGH, GG_HIGH) EXPAND_4(32) ROUNDS_4(28, FF_HIGH, GG_HIGH)
        EXPAND_4(36) ROUNDS_4(32, FF_HIGH, GG_HIGH) EXPAND_4(40) ROUNDS_4(36, FF_HIGH, GG_HIGH)
        EXPAND_4(44) ROUNDS_4(40, FF_HIGH, GG_HIGH) EXPAND_4(48) ROUNDS_4(44, FF_HIGH, GG_HIGH)
        EXPAND_4(52) ROUNDS_4(48, FF_HIGH, GG_HIGH) EXPAND_4(56) ROUNDS_4(52, FF_HIGH, GG_HIGH)
        EXPAND_4(60) ROUNDS_4(56, FF_HIGH, GG_HIGH) EXPAND_4(64) ROUNDS_4(60, FF_HIGH, GG_HIGH)

        state[0] ^= a; state[1] ^= b; state[2] ^= c; state[3] ^= d;
        state[4] ^= e; state[5] ^= f; state[6] ^= g; state[7] ^= h;
    }
}
#endif

void sm3_init(sm3_context *ctx)
{
    memcpy(ctx->state, SM3_IV, sizeof SM3_IV);
    memset(ctx->block, 0, sizeof ctx->block);
    ctx->block_bits = 0;
    ctx->total_bits = 0;
}

/* Append the nbits most significant bits of byte (its other bits are zero). */
static void append_bits(sm3_context *ctx, unsigned byte, unsigned nbits)
{
    while (nbits > 0) {
        unsigned offset = ctx->block_bits & 7, index = ctx->block_bits >> 3;
        unsigned take = 8 - offset < nbits ? 8 - offset : nbits;
        if (offset == 0)
            ctx->block[index] = 0;
        ctx->block[index] |= (unsigned char)(byte >> offset);
        ctx->block_bits += take;
        if (ctx->block_bits == 8 * SM3_BLOCK_BYTES) {
            sm3_compress(ctx->state, ctx->block, 1);
            ctx->block_bits = 0;
        }
        byte = (byte << take) & 0xFFu;
        nbits -= take;
    }
}

void sm3_update_bits(sm3_context *ctx, const unsigned char *data, uint64_t bits)
{
    uint64_t whole_bytes = bits >> 3;
    unsigned tail_bits = (unsigned)(bits & 7);

    ctx->total_bits += bits;
    if ((ctx->block_bits & 7) == 0) {
        /* Byte-aligned: copy into the block, compress full blocks straight from data. */
        while (whole_bytes > 0) {
            unsigned used = ctx->block_bits >> 3;
            if (used == 0 && whole_bytes >= SM3_BLOCK_BYTES) {
                uint64_t all = whole_bytes / SM3_BLOCK_BYTES;
                size_t blocks = all > SIZE_MAX / SM3_BLOCK_BYTES
                                ? SIZE_MAX / SM3_BLOCK_BYTES : (size_t)all;
                sm3_compress(ctx->state, data, blocks);
                data += blocks * SM3_BLOCK_BYTES;
                whole_bytes -= (uint64_t)blocks * SM3_BLOCK_BYTES;
                continue;
            }
            unsigned room = SM3_BLOCK_BYTES - used;
            unsigned n = whole_bytes < room ? (unsigned)whole_bytes : room;
            memcpy(ctx->block + used, data, n);
            data += n;
            whole_bytes -= n;
            ctx->block_bits += 8 * n;
            if (ctx->block_bits == 8 * SM3_BLOCK_BYTES) {
                sm3_compress(ctx->state, ctx->block, 1);
                ctx->block_bits = 0;
            }
        }
    } else {
        for (; whole_bytes > 0; whole_bytes--)
            append_bits(ctx, *data++, 8);
    }
    if (tail_bits)
        append_bits(ctx, *data & (0xFFu << (8 - tail_bits)) & 0xFFu, tail_bits);
}

void sm3_finish(sm3_context *ctx, uint64_t length_field, unsigned char digest[SM3_DIGEST_BYTES])
{
    unsigned i, first_free;

    append_bits(ctx, 0x80, 1);
    first_free = (ctx->block_bits + 7) >> 3;
    if (ctx->block_bits > 448) {
        memset(ctx->block + first_free, 0, SM3_BLOCK_BYTES - first_free);
        sm3_compress(ctx->state, ctx->block, 1);
        first_free = 0;
    }
    memset(ctx->block + first_free, 0, 56 - first_free);
    store_be32(ctx->block + 56, (uint32_t)(length_field >> 32));
    store_be32(ctx->block + 60, (uint32_t)length_field);
    sm3_compress(ctx->state, ctx->block, 1);
    for (i = 0; i < 8; i++)
        store_be32(digest + 4 * i, ctx->state[i]);
    ctx->block_bits = 0;
}

void sm3_final(sm3_context *ctx, unsigned char digest[SM3_DIGEST_BYTES])
{
    sm3_finish(ctx, ctx->total_bits, digest);
}

void sm3_digest(const unsigned char *msg, uint64_t bits, unsigned char digest[SM3_DIGEST_BYTES])
{
    sm3_context ctx;
    sm3_init(&ctx);
    sm3_update_bits(&ctx, msg, bits);
    sm3_final(&ctx, digest);
}
