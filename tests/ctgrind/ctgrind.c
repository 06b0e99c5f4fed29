/* ctgrind: run an ICCS CryptHash library under valgrind memcheck with the
 * message marked undefined, so that memcheck reports every branch and every
 * memory address that depends on the message (the ctgrind method).
 *
 *   valgrind -q --error-exitcode=42 ./ctgrind LIBRARY DIGEST_BITS BITS...
 *
 * For each message length BITS the program fills ceil(BITS/8) bytes, marks
 * them undefined, calls CryptHash, then marks the digest (and the return
 * value) defined again: hashing secret data gives an output that may be
 * used freely, but how the output was computed must not depend on it.
 * Lengths are public, so branches on BITS are allowed. Memcheck's reports
 * ("Conditional jump or move depends on uninitialised value(s)", "Use of
 * uninitialised value of size N" for a load or store address) are what
 * tests/test_constant_time.py fails on. Outside valgrind the client requests
 * do nothing, so the program also runs (and checks return codes) natively.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

typedef int (*crypt_hash_fn)(int, const unsigned char *, unsigned long long, unsigned char *);

/* A fixed, varied message (xorshift), so every run hashes the same bytes. */
static void fill(unsigned char *msg, size_t bytes, unsigned long long bits)
{
    unsigned long long x = 0x9E3779B97F4A7C15ull ^ bits;
    size_t i;
    for (i = 0; i < bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        msg[i] = (unsigned char)(x >> 24);
    }
}

int main(int argc, char **argv)
{
    void *library;
    crypt_hash_fn crypt_hash;
    int digest_bits, i, failed = 0;

    if (argc < 4) {
        fprintf(stderr, "usage: %s LIBRARY DIGEST_BITS BITS...\n", argv[0]);
        return 2;
    }
    library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "ctgrind: cannot load %s: %s\n", argv[1], dlerror());
        return 2;
    }
    *(void **)&crypt_hash = dlsym(library, "CryptHash");
    if (crypt_hash == NULL) {
        fprintf(stderr, "ctgrind: %s exports no CryptHash\n", argv[1]);
        return 2;
    }
    digest_bits = atoi(argv[2]);
    for (i = 3; i < argc; i++) {
        unsigned long long bits = strtoull(argv[i], NULL, 10);
        size_t bytes = (size_t)((bits + 7) / 8);
        unsigned char *msg = malloc(bytes ? bytes : 1);
        unsigned char *digest = malloc((size_t)digest_bits / 8 + 1);
        unsigned errors_before = VALGRIND_COUNT_ERRORS;
        int rc;

        if (msg == NULL || digest == NULL) {
            fprintf(stderr, "ctgrind: out of memory\n");
            return 2;
        }
        fill(msg, bytes, bits);
        VALGRIND_MAKE_MEM_UNDEFINED(msg, bytes);
        rc = crypt_hash(digest_bits, msg, bits, digest);
        VALGRIND_MAKE_MEM_DEFINED(&rc, sizeof rc);
        VALGRIND_MAKE_MEM_DEFINED(digest, (size_t)digest_bits / 8);
        printf("length %llu bits: return %d, %u memcheck errors\n", bits, rc,
               VALGRIND_COUNT_ERRORS - errors_before);
        failed |= rc != 0;
        free(msg);
        free(digest);
    }
    fflush(stdout);
    return failed ? 3 : 0;
}
