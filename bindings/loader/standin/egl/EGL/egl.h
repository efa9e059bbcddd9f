/* Stand-in for <EGL/egl.h>: the types CUDA's EGL-interop headers use (see ../../README.md). */
#ifndef CUBIND_STANDIN_EGL_EGL_H
#define CUBIND_STANDIN_EGL_EGL_H
#include <stdint.h>

typedef int32_t EGLint; /* khronos_int32_t */

#endif
