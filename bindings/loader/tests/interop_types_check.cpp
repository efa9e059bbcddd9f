// The EGL, OpenGL and VDPAU types that CUDA's interop headers use are the same
// whether they come from the installed headers or from cubind's stand-ins
// (bindings/loader/standin). Built twice, once against each
// (bindings/loader/tests/CMakeLists.txt): the assertions are the check, and
// main() reports which headers it saw.
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "cubind/raw/driver.hpp"
#include "cubind/raw/runtime.hpp"

static_assert(std::is_same_v<EGLint, std::int32_t>);
static_assert(std::is_same_v<EGLImageKHR, void*>);
static_assert(std::is_same_v<EGLStreamKHR, void*>);
static_assert(std::is_same_v<EGLSyncKHR, void*>);
static_assert(std::is_same_v<GLenum, unsigned int>);
static_assert(std::is_same_v<GLuint, unsigned int>);
static_assert(std::is_same_v<VdpDevice, std::uint32_t>);
static_assert(std::is_same_v<VdpVideoSurface, std::uint32_t>);
static_assert(std::is_same_v<VdpOutputSurface, std::uint32_t>);
static_assert(std::is_enum_v<VdpStatus> && sizeof(VdpStatus) == sizeof(int));
static_assert(std::is_same_v<VdpGetProcAddress, VdpStatus(std::uint32_t, std::uint32_t, void**)>);
// What the raw layer declares with them.
static_assert(std::is_same_v<decltype(&cubind::raw::cuVDPAUGetDevice), CUresult (*)(CUdevice*, VdpDevice, VdpGetProcAddress*)>);
static_assert(std::is_same_v<decltype(&cubind::raw::cuGraphicsEGLRegisterImage),
                             CUresult (*)(CUgraphicsResource*, EGLImageKHR, unsigned int)>);

int main() {
#if defined(CUBIND_STANDIN_EGL_EGL_H) && defined(CUBIND_STANDIN_GL_GL_H) && defined(CUBIND_STANDIN_VDPAU_VDPAU_H)
  std::puts("interop types agree (cubind's stand-ins)");
#else
  std::puts("interop types agree (the headers this build found)");
#endif
  return 0;
}
