/* The SM3 baseline instance through the ICCS CryptHash entry point. */
#include "crypt_hash.h"
#include "sm3.h"

#include <stddef.h>

int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL)
        return -4;
    if (msg == NULL && msg_len_bits != 0)
        return -1;
    sm3_digest(msg, msg_len_bits, digest);
    return 0;
}
