/* Stand-in for <GL/gl.h>: the types CUDA's OpenGL-interop headers use (see ../../README.md). */
#ifndef CUBIND_STANDIN_GL_GL_H
#define CUBIND_STANDIN_GL_GL_H

typedef unsigned int GLenum;
typedef unsigned int GLuint;

#endif
