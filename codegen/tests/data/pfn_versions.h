/* Shaped like cudaTypedefs.h: one PFN typedef per ABI version of a function. */
#ifndef CUBIND_TEST_PFN_VERSIONS_H
#define CUBIND_TEST_PFN_VERSIONS_H

typedef int (*PFN_cuFoo_v3020)(int);
typedef int (*PFN_cuFoo_v12050)(int, int);
typedef int (*PFN_cuFoo_v13000_ptds)(int, int);

int cuFromPfnHeader(void);

#endif
