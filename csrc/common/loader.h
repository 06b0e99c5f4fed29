/* Loading an ICCS instance library and resolving its CryptHash entry point. */
#ifndef NGCC_LOADER_H
#define NGCC_LOADER_H

#include <stddef.h>

typedef int (*crypt_hash_fn)(int digest_len_bits, const unsigned char *msg,
                             unsigned long long msg_len_bits, unsigned char *digest);

typedef struct {
    void *handle;          /* dlopen handle, NULL when closed */
    crypt_hash_fn hash;    /* the library's CryptHash */
} instance_library;

/* Open path and resolve CryptHash. On failure returns nonzero and writes a
 * message naming the file into error (error_size bytes, NUL-terminated). */
int library_open(instance_library *lib, const char *path, char *error, size_t error_size);
void library_close(instance_library *lib);

#endif
