/* The ICCS entry point of a Wish instance (spec/wish.md §2).
 *
 * Unlike the submitted reference, which silently runs Wish1024 (and over-reads)
 * for any digest length but 512, only the instance's own length is accepted. */
#include "crypt_hash.h"
#include "wish.h"

#include <stddef.h>

int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL)
        return -4;
    if (msg == NULL && msg_len_bits != 0)
        return -1;
    wish_hash(msg, msg_len_bits, digest);
    return 0;
}
