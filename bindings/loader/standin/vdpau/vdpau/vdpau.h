/* Stand-in for <vdpau/vdpau.h>: the types CUDA's VDPAU-interop headers use (see ../../README.md). */
#ifndef CUBIND_STANDIN_VDPAU_VDPAU_H
#define CUBIND_STANDIN_VDPAU_VDPAU_H
#include <stdint.h>

/* An enum of int size, named VdpStatus for linkage as in the real header. */
typedef enum {
  VDP_STATUS_OK = 0
} VdpStatus;

typedef uint32_t VdpDevice;
typedef uint32_t VdpFuncId;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;

typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id, void **function_pointer);

#endif
