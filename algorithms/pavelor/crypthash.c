/* The ICCS entry point of one Pavelor instance (spec 2). The instance is fixed
 * at compile time by -DDIGEST_BIT_LENGTH=512, 768 or 1024. */
#include "crypt_hash.h"
#include "pavelor.h"

#include <stddef.h>

#if !defined(DIGEST_BIT_LENGTH) \
    || (DIGEST_BIT_LENGTH != 512 && DIGEST_BIT_LENGTH != 768 && DIGEST_BIT_LENGTH != 1024)
#error "compile with -DDIGEST_BIT_LENGTH=512, 768 or 1024"
#endif

/* Return codes follow the submitters' AES-NI code: 1 for a NULL argument,
 * 2 for a digest length other than this instance's; nothing is written then. */
int CryptHash(int digest_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *digest)
{
    if (digest == NULL || (msg == NULL && msg_len_bits != 0))
        return 1;
    if (digest_len_bits != DIGEST_BIT_LENGTH)
        return 2;
    pavelor_hash(DIGEST_BIT_LENGTH, msg, msg_len_bits, digest);
    return 0;
}
