/* The WChain instances through the ICCS CryptHash entry point (spec/wchain.md
 * section 2). Like the submitters' wrapper, every error returns -1 and writes
 * nothing: a digest length other than this instance's, a NULL digest, or a
 * NULL message with a nonzero length (a NULL empty message is fine). */
#include "crypt_hash.h"
#include "wchain.h"

#include <stddef.h>

int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (digest_len_bits != DIGEST_BIT_LENGTH || digest == NULL)
        return -1;
    if (msg == NULL && msg_len_bits != 0)
        return -1;
    wchain_hash(msg, msg_len_bits, digest);
    return 0;
}
