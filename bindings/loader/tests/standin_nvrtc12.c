/* A stand-in for NVRTC of another major version: libnvrtc.so.12 by its soname,
 * with the entry points an application reaches first. The loader must refuse
 * it by its soname before anything calls into it.
 *
 * Built by bindings/loader/tests/CMakeLists.txt (as C++) and by
 * tests/python/test_loader_faults.py (cc -shared -Wl,-soname,libnvrtc.so.12).
 */
#ifdef __cplusplus
extern "C" {
#endif

int nvrtcVersion(int* major, int* minor)
{
    *major = 12;
    *minor = 4;
    return 0;
}

const char* nvrtcGetErrorString(int result) { return result == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR"; }

int nvrtcGetNumSupportedArchs(int* count)
{
    *count = 0;
    return 0;
}

#ifdef __cplusplus
}
#endif
