/* The ICCS helpers as baseline instances through the ICCS CryptHash entry point.
 *
 * instances.json picks the helper with one define: ICCS_SM3HASH, ICCS_PSEUDOHASH
 * or ICCS_PSEUDOXOF; DIGEST_BIT_LENGTH is the helper's d (or n for pseudoXOF).
 */
#include "crypt_hash.h"
#include "iccs.h"

#include <stddef.h>

int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL)
        return ICCS_ERR_LENGTH;
    if (msg == NULL && msg_len_bits != 0)
        return -1;
#if defined(ICCS_SM3HASH)
    return iccs_sm3hash(digest_len_bits, msg, msg_len_bits, digest);
#elif defined(ICCS_PSEUDOHASH)
    return iccs_pseudohash(digest_len_bits, msg, msg_len_bits, digest);
#elif defined(ICCS_PSEUDOXOF)
    return iccs_pseudoXOF((uint64_t)digest_len_bits, msg, msg_len_bits, digest);
#else
#error "define one of ICCS_SM3HASH, ICCS_PSEUDOHASH, ICCS_PSEUDOXOF"
#endif
}
