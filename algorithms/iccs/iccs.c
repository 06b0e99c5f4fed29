/* The ICCS auxiliary helpers, written from spec/iccs-helpers.md (section numbers below). */
#include "iccs.h"

#include <string.h>

/* §2: KEY = SM3(ASCII "3.14159265358979") || SM3(ASCII "2.71828182845904"),
 * as given in spec/drng/iccs_helper_vectors.json ("hmac_key"); tests/test_iccs.py
 * checks it against that derivation. One SM3 block long, so HMAC uses it as is. */
static const unsigned char ICCS_MAC_KEY[SM3_BLOCK_BYTES] = {
    0x53, 0x07, 0xf6, 0xd5, 0xeb, 0x6a, 0x3c, 0xed, 0x3d, 0x24, 0xc5, 0x3c, 0xc9, 0xc8, 0x2c, 0xce,
    0x2f, 0x89, 0x36, 0x39, 0x70, 0x23, 0xf0, 0x69, 0x5c, 0x26, 0xc8, 0x0c, 0x1a, 0xb1, 0x82, 0xa7,
    0x1d, 0xb0, 0x2b, 0xa9, 0x2f, 0x54, 0x40, 0x18, 0x11, 0x5a, 0x96, 0xe7, 0x19, 0x66, 0x2c, 0xa3,
    0x2b, 0x7c, 0x7e, 0xfc, 0x0a, 0x6d, 0x24, 0x82, 0x15, 0x07, 0x66, 0xba, 0x6f, 0x65, 0x5b, 0x8e,
};

uint64_t iccs_sm3_length_field(uint64_t bits)
{
    /* §0: the low word is bits mod 2^32; the high word is
     * ((floor(bits/512) >> 32) << 9) mod 2^32, i.e. floor(bits/2^32) with its
     * 9 low bits cleared (0 for every message shorter than 2^41 bits). */
    uint32_t low = (uint32_t)bits;
    uint32_t high = (uint32_t)(((bits >> 9) >> 32) << 9);
    return (uint64_t)high << 32 | low;
}

void iccs_sm3_finish(sm3_context *ctx, unsigned char digest[SM3_DIGEST_BYTES])
{
    sm3_finish(ctx, iccs_sm3_length_field(ctx->total_bits), digest);
}

/* The helpers' SM3 of the bit-string concatenation a || b. */
static void sm3_concat(const unsigned char *a, uint64_t a_bits, const unsigned char *b,
                       uint64_t b_bits, unsigned char digest[SM3_DIGEST_BYTES])
{
    sm3_context ctx;
    sm3_init(&ctx);
    sm3_update_bits(&ctx, a, a_bits);
    sm3_update_bits(&ctx, b, b_bits);
    iccs_sm3_finish(&ctx, digest);
}

/* HMAC in two steps so the MAC input can be absorbed in pieces (§3 needs T || msg). */
static void mac_start(sm3_context *inner)
{
    unsigned char ipad_key[SM3_BLOCK_BYTES];
    unsigned i;

    for (i = 0; i < SM3_BLOCK_BYTES; i++)
        ipad_key[i] = ICCS_MAC_KEY[i] ^ 0x36;
    sm3_init(inner);
    sm3_update_bits(inner, ipad_key, 8 * SM3_BLOCK_BYTES);
}

static void mac_end(sm3_context *inner, unsigned char mac[SM3_DIGEST_BYTES])
{
    unsigned char opad_key[SM3_BLOCK_BYTES], inner_digest[SM3_DIGEST_BYTES];
    unsigned i;

    iccs_sm3_finish(inner, inner_digest);
    for (i = 0; i < SM3_BLOCK_BYTES; i++)
        opad_key[i] = ICCS_MAC_KEY[i] ^ 0x5C;
    sm3_concat(opad_key, 8 * SM3_BLOCK_BYTES, inner_digest, 8 * SM3_DIGEST_BYTES, mac);
}

void iccs_mac(const unsigned char *x, uint64_t x_bits, unsigned char mac[SM3_DIGEST_BYTES])
{
    sm3_context inner;
    mac_start(&inner);
    sm3_update_bits(&inner, x, x_bits);
    mac_end(&inner, mac);
}

int iccs_sm3hash(int d, const unsigned char *msg, uint64_t bits, unsigned char *digest)
{
    sm3_context ctx;

    if (d != 256)
        return ICCS_ERR_LENGTH;
    sm3_init(&ctx);
    sm3_update_bits(&ctx, msg, bits);
    iccs_sm3_finish(&ctx, digest);
    return ICCS_OK;
}

int iccs_pseudohash(int d, const unsigned char *msg, uint64_t bits, unsigned char *digest)
{
    enum { H = SM3_DIGEST_BYTES, H_BITS = 8 * SM3_DIGEST_BYTES };
    unsigned char tag[2], *h1 = digest, *h2 = digest + H, *h3 = digest + 2 * H;
    unsigned char k1[H], k2[H], k3[H], k4[H];
    sm3_context ctx;

    if (d != 512 && d != 768 && d != 1024)
        return ICCS_ERR_LENGTH;
    tag[0] = (unsigned char)(d / 256); /* T = the 16-bit string t || 0x00 */
    tag[1] = 0x00;

    sm3_concat(msg, bits, tag, 16, h1);          /* h1 = SM3(msg || T) */
    mac_start(&ctx);                             /* k1 = MAC(T || msg) */
    sm3_update_bits(&ctx, tag, 16);
    sm3_update_bits(&ctx, msg, bits);
    mac_end(&ctx, k1);
    sm3_concat(k1, H_BITS, h1, H_BITS, h2);      /* h2 = SM3(k1 || h1) */
    if (d == 512)
        return ICCS_OK;

    iccs_mac(h1, H_BITS, k2);                    /* k2 = MAC(h1) */
    sm3_concat(h2, H_BITS, k2, H_BITS, h3);      /* h3 = SM3(h2 || k2) */
    if (d == 768)
        return ICCS_OK;

    iccs_mac(h2, H_BITS, k3);                    /* k3 = MAC(h2) */
    iccs_mac(h3, H_BITS, k4);                    /* k4 = MAC(h3) */
    sm3_init(&ctx);                              /* h4 = SM3(k3 || h3 || k4) */
    sm3_update_bits(&ctx, k3, H_BITS);
    sm3_update_bits(&ctx, h3, H_BITS);
    sm3_update_bits(&ctx, k4, H_BITS);
    iccs_sm3_finish(&ctx, digest + 3 * H);
    return ICCS_OK;
}

/* Block i of §4: SM3(msg || ct_i). As the ICCS auxfunc.c computes it, every block
 * hashes the message from scratch; with ICCS_XOF_ABSORB_ONCE (the `absorb` variant)
 * each block instead continues from a copy of `absorbed`, the state after the
 * message, which gives the same block with one pass over the message in all. */
static void xof_block(const sm3_context *absorbed, const unsigned char *msg, uint64_t bits,
                      uint32_t counter, unsigned char block[SM3_DIGEST_BYTES])
{
    unsigned char ct[4];
    sm3_context ctx;

#ifdef ICCS_XOF_ABSORB_ONCE
    (void)msg;
    (void)bits;
    ctx = *absorbed;
#else
    (void)absorbed;
    sm3_init(&ctx);
    sm3_update_bits(&ctx, msg, bits);
#endif
    ct[0] = (unsigned char)(counter >> 24);
    ct[1] = (unsigned char)(counter >> 16);
    ct[2] = (unsigned char)(counter >> 8);
    ct[3] = (unsigned char)counter;
    sm3_update_bits(&ctx, ct, 32);
    iccs_sm3_finish(&ctx, block);
}

int iccs_pseudoXOF(uint64_t n, const unsigned char *msg, uint64_t bits, unsigned char *out)
{
    sm3_context absorbed;
    uint64_t done;     /* output bits written so far, a multiple of 256 */
    uint32_t counter;  /* ct_i: block i = SM3(msg || ct_i), i = 1, 2, ... */

    sm3_init(&absorbed);
#ifdef ICCS_XOF_ABSORB_ONCE
    sm3_update_bits(&absorbed, msg, bits);
#endif
    for (done = 0, counter = 1; done < n; done += 256, counter++) {
        unsigned char block[SM3_DIGEST_BYTES];
        uint64_t left = n - done;

        xof_block(&absorbed, msg, bits, counter, block);
        if (left >= 256) {
            memcpy(out + done / 8, block, SM3_DIGEST_BYTES);
        } else {
            size_t bytes = (size_t)(left + 7) / 8;
            memcpy(out + done / 8, block, bytes);
            if (left % 8)
                out[done / 8 + bytes - 1] &= (unsigned char)(0xFFu << (8 - left % 8));
        }
    }
    return ICCS_OK;
}
