/* The ICCS hash API: the one entry point every instance library exports.
 *
 * msg_len_bits counts bits; message bit 0 is the most significant bit of msg[0],
 * and the unused low bits of a partial last byte are ignored. At most
 * ceil(msg_len_bits / 8) bytes of msg are read. digest receives
 * digest_len_bits / 8 bytes. Returns 0 on success, nonzero on any error
 * (including a digest_len_bits other than the instance's DIGEST_BIT_LENGTH).
 *
 * Each instance library is compiled with -DDIGEST_BIT_LENGTH=<bits> and
 * -fvisibility=hidden, so CryptHash is its only exported symbol.
 */
#ifndef NGCC_CRYPT_HASH_H
#define NGCC_CRYPT_HASH_H

#if defined(__GNUC__)
#define NGCC_EXPORT __attribute__((visibility("default")))
#else
#define NGCC_EXPORT
#endif

NGCC_EXPORT int CryptHash(int digest_len_bits, const unsigned char *msg,
                          unsigned long long msg_len_bits, unsigned char *digest);

#endif
