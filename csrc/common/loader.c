/* dlopen an instance library; RTLD_LOCAL keeps two instances' symbols apart. */
#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>

int library_open(instance_library *lib, const char *path, char *error, size_t error_size)
{
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    lib->hash = NULL;
    if (lib->handle == NULL) {
        const char *why = dlerror();
        snprintf(error, error_size, "cannot load instance library %s: %s", path,
                 why ? why : "unknown dlopen error");
        return -1;
    }
    /* ISO C forbids casting void* to a function pointer; copy the bits instead. */
    void *symbol = dlsym(lib->handle, "CryptHash");
    if (symbol == NULL) {
        snprintf(error, error_size,
                 "%s is not an ICCS instance library: it does not export CryptHash", path);
        dlclose(lib->handle);
        lib->handle = NULL;
        return -1;
    }
    *(void **)(&lib->hash) = symbol;
    return 0;
}

void library_close(instance_library *lib)
{
    if (lib->handle != NULL)
        dlclose(lib->handle);
    lib->handle = NULL;
    lib->hash = NULL;
}
