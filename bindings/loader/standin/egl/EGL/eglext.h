/* Stand-in for <EGL/eglext.h>: the types CUDA's EGL-interop headers use (see ../../README.md). */
#ifndef CUBIND_STANDIN_EGL_EGLEXT_H
#define CUBIND_STANDIN_EGL_EGLEXT_H
#include "EGL/egl.h"

typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;

#endif
