/* nvJitLink 13.0 as far as the tests reach: its versioned symbols end in _13_0
 * (a 13.5 header calls __nvJitLinkCreate_13_5), and it lacks
 * nvJitLinkGetLinkedLTOIR{,Size}, which came in 13.3. */
#include <stdint.h>
#include <stdlib.h>

int nvJitLinkVersion(unsigned int* major, unsigned int* minor)
{
    *major = 13;
    *minor = 0;
    return 0;
}

static int handles;

int __nvJitLinkCreate_13_0(void** handle, uint32_t numOptions, const char** options)
{
    (void)numOptions; (void)options;
    *handle = &handles;
    ++handles;
    return 0;
}

int __nvJitLinkDestroy_13_0(void** handle)
{
    *handle = NULL;
    --handles;
    return 0;
}

int nvJitLinkCreate(void** handle, uint32_t numOptions, const char** options)
{
    /* Reached only if the loader skipped the versioned symbol. */
    (void)handle; (void)numOptions; (void)options;
    return 99;
}
