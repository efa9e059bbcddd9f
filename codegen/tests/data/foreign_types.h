/* Shaped like vdpau.h and eglext.h: another library's types, which an owned
   header uses and the bindings name. */
#ifndef CUBIND_TEST_FOREIGN_TYPES_H
#define CUBIND_TEST_FOREIGN_TYPES_H

typedef unsigned int ForeignDevice;
typedef void *ForeignImage;
typedef int ForeignStatus;
typedef ForeignStatus ForeignGetProcAddress(ForeignDevice device, void **function);
typedef int ForeignUnused;

#endif
