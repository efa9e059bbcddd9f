/* Shaped like cudaTypedefs.h: one PFN typedef per ABI version of a function. */
#ifndef CUBIND_TEST_PFN_VERSIONS_H
#define CUBIND_TEST_PFN_VERSIONS_H

typedef int (*PFN_cuFoo_v3020)(int);
typedef int (*PFN_cuFoo_v12050)(int, int);
typedef int (*PFN_cuFoo_v13000_ptds)(int, int);
/* Two ABIs of the same parameters: cuBar and cuBar_v3 (as cuGraphAddNode_v2 and _v3). */
typedef int (*PFN_cuBar_v12030)(int);
typedef int (*PFN_cuBar_v13040)(int);

int cuFromPfnHeader(void);

#endif
