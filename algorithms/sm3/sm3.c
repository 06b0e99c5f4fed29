/* SM3, GB/T 32905-2016 (sections 4-5: IV, constants, padding, compression). */
#include "sm3.h"

#include <string.h>

static const uint32_t SM3_IV[8] = {
    0x7380166fu, 0x4914b2b9u, 0x172442d7u, 0xda8a0600u,
    0xa96f30bcu, 0x163138aau, 0xe38dee4du, 0xb0fb0e4eu,
};

static uint32_t rotl(uint32_t x, unsigned n)
{
    n &= 31;
    return n ? (x << n) | (x >> (32 - n)) : x;
}

static uint32_t p0(uint32_t x) { return x ^ rotl(x, 9) ^ rotl(x, 17); }
static uint32_t p1(uint32_t x) { return x ^ rotl(x, 15) ^ rotl(x, 23); }

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

/* The compression function CF (GB/T 32905 §5.3): message expansion, 64 rounds. */
static void sm3_compress(uint32_t state[8], const unsigned char block[SM3_BLOCK_BYTES])
{
    uint32_t w[68], a, b, c, d, e, f, g, h;
    int j;

    for (j = 0; j < 16; j++)
        w[j] = load_be32(block + 4 * j);
    for (j = 16; j < 68; j++)
        w[j] = p1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6];

    a = state[0]; b = state[1]; c = state[2]; d = state[3];
    e = state[4]; f = state[5]; g = state[6]; h = state[7];
    for (j = 0; j < 64; j++) {
        uint32_t t = j < 16 ? 0x79cc4519u : 0x7a879d8au;
        uint32_t ss1 = rotl(rotl(a, 12) + e + rotl(t, (unsigned)j), 7);
        uint32_t ss2 = ss1 ^ rotl(a, 12);
        uint32_t ff = j < 16 ? a ^ b ^ c : (a & b) | (a & c) | (b & c);
        uint32_t gg = j < 16 ? e ^ f ^ g : (e & f) | (~e & g);
        uint32_t tt1 = ff + d + ss2 + (w[j] ^ w[j + 4]);
        uint32_t tt2 = gg + h + ss1 + w[j];
        d = c; c = rotl(b, 9); b = a; a = tt1;
        h = g; g = rotl(f, 19); f = e; e = p0(tt2);
    }
    state[0] ^= a; state[1] ^= b; state[2] ^= c; state[3] ^= d;
    state[4] ^= e; state[5] ^= f; state[6] ^= g; state[7] ^= h;
}

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
            sm3_compress(ctx->state, ctx->block);
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
                sm3_compress(ctx->state, data);
                data += SM3_BLOCK_BYTES;
                whole_bytes -= SM3_BLOCK_BYTES;
                continue;
            }
            unsigned room = SM3_BLOCK_BYTES - used;
            unsigned n = whole_bytes < room ? (unsigned)whole_bytes : room;
            memcpy(ctx->block + used, data, n);
            data += n;
            whole_bytes -= n;
            ctx->block_bits += 8 * n;
            if (ctx->block_bits == 8 * SM3_BLOCK_BYTES) {
                sm3_compress(ctx->state, ctx->block);
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
        sm3_compress(ctx->state, ctx->block);
        first_free = 0;
    }
    memset(ctx->block + first_free, 0, 56 - first_free);
    store_be32(ctx->block + 56, (uint32_t)(length_field >> 32));
    store_be32(ctx->block + 60, (uint32_t)length_field);
    sm3_compress(ctx->state, ctx->block);
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
