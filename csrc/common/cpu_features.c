/* CPU feature detection by Linux /proc/cpuinfo flag names (see cpu_features.h). */
#include "cpu_features.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#define NGCC_CPUID 1
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define NGCC_HWCAP 1
#endif

#if defined(NGCC_HWCAP)
/* AArch64: the kernel's HWCAP bits (getauxval), by their /proc/cpuinfo Features names. */
typedef struct {
    const char *name;
    unsigned long hwcap;
} feature;

static const feature FEATURES[] = {
    {"fp", HWCAP_FP},
    {"asimd", HWCAP_ASIMD},
    {"aes", HWCAP_AES},       /* AESE, AESD, AESMC, AESIMC */
    {"pmull", HWCAP_PMULL},
    {"sha1", HWCAP_SHA1},
    {"sha2", HWCAP_SHA2},
    {"crc32", HWCAP_CRC32},
    {"atomics", HWCAP_ATOMICS},
    {"sha3", HWCAP_SHA3},
    {"sha512", HWCAP_SHA512},
};

static int has_feature(const feature *f)
{
    return (getauxval(AT_HWCAP) & f->hwcap) == f->hwcap;
}
#else
/* Where CPUID reports a feature, and which XCR0 state bits the OS must enable. */
typedef enum { LEAF1_ECX, LEAF1_EDX, LEAF7_EBX, LEAF7_ECX } cpuid_word;

typedef struct {
    const char *name;
    cpuid_word word;
    unsigned bit;
    uint64_t xcr0;   /* 0: none; 0x6: SSE+AVX state; 0xE6: plus AVX-512 state */
} feature;

#define AVX_STATE 0x6u
#define AVX512_STATE 0xE6u

static const feature FEATURES[] = {
    {"sse2", LEAF1_EDX, 26, 0},
    {"pni", LEAF1_ECX, 0, 0},          /* SSE3 */
    {"pclmulqdq", LEAF1_ECX, 1, 0},
    {"ssse3", LEAF1_ECX, 9, 0},
    {"fma", LEAF1_ECX, 12, AVX_STATE},
    {"sse4_1", LEAF1_ECX, 19, 0},
    {"sse4_2", LEAF1_ECX, 20, 0},
    {"movbe", LEAF1_ECX, 22, 0},
    {"popcnt", LEAF1_ECX, 23, 0},
    {"aes", LEAF1_ECX, 25, 0},
    {"avx", LEAF1_ECX, 28, AVX_STATE},
    {"f16c", LEAF1_ECX, 29, AVX_STATE},
    {"bmi1", LEAF7_EBX, 3, 0},
    {"avx2", LEAF7_EBX, 5, AVX_STATE},
    {"bmi2", LEAF7_EBX, 8, 0},
    {"avx512f", LEAF7_EBX, 16, AVX512_STATE},
    {"avx512dq", LEAF7_EBX, 17, AVX512_STATE},
    {"adx", LEAF7_EBX, 19, 0},
    {"sha_ni", LEAF7_EBX, 29, 0},
    {"avx512bw", LEAF7_EBX, 30, AVX512_STATE},
    {"avx512vl", LEAF7_EBX, 31, AVX512_STATE},
    {"avx512vbmi", LEAF7_ECX, 1, AVX512_STATE},
    {"gfni", LEAF7_ECX, 8, 0},
    {"vaes", LEAF7_ECX, 9, AVX_STATE},
    {"vpclmulqdq", LEAF7_ECX, 10, AVX_STATE},
};

#endif

#define FEATURE_COUNT (sizeof FEATURES / sizeof FEATURES[0])

const char *ngcc_cpu_feature_name(size_t index)
{
    return index < FEATURE_COUNT ? FEATURES[index].name : NULL;
}

#if defined(NGCC_CPUID)
/* XCR0: the register state the OS saves on a context switch (0 without OSXSAVE). */
static uint64_t os_saved_state(unsigned leaf1_ecx)
{
    uint32_t low, high;
    if (!(leaf1_ecx & (1u << 27)))  /* OSXSAVE: XGETBV is usable */
        return 0;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return (uint64_t)high << 32 | low;
}

static int has_feature(const feature *f)
{
    unsigned eax, ebx, ecx, edx, ecx1 = 0, edx1 = 0, word = 0;

    if (__get_cpuid(1, &eax, &ebx, &ecx1, &edx1) == 0)
        return 0;
    switch (f->word) {
    case LEAF1_ECX: word = ecx1; break;
    case LEAF1_EDX: word = edx1; break;
    case LEAF7_EBX:
    case LEAF7_ECX:
        if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0)
            return 0;
        word = f->word == LEAF7_EBX ? ebx : ecx;
        break;
    }
    if (!(word & (1u << f->bit)))
        return 0;
    return (os_saved_state(ecx1) & f->xcr0) == f->xcr0;
}
#elif !defined(NGCC_HWCAP)
static int has_feature(const feature *f)
{
    (void)f;
    return 0;
}
#endif

int ngcc_cpu_has(const char *name)
{
    size_t i;
    if (name == NULL)
        return 0;
    for (i = 0; i < FEATURE_COUNT; i++)
        if (strcmp(FEATURES[i].name, name) == 0)
            return has_feature(&FEATURES[i]);
    return 0;
}

size_t ngcc_cpu_missing(const char *const *names, size_t count, char *out, size_t out_size)
{
    size_t i, missing = 0, used = 0;

    if (out != NULL && out_size > 0)
        out[0] = '\0';
    for (i = 0; i < count; i++) {
        size_t length;
        if (ngcc_cpu_has(names[i]))
            continue;
        missing++;
        if (out == NULL || names[i] == NULL)
            continue;
        length = strlen(names[i]);
        if (used + (used > 0) + length + 1 > out_size)
            continue;  /* no room: the count still tells */
        if (used > 0)
            out[used++] = ',';
        memcpy(out + used, names[i], length + 1);
        used += length;
    }
    return missing;
}
