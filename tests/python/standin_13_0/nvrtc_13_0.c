/* NVRTC 13.0 as far as the tests reach: libnvrtc.so.13 without the functions of 13.1 and later. */
int nvrtcVersion(int* major, int* minor)
{
    *major = 13;
    *minor = 0;
    return 0;
}

const char* nvrtcGetErrorString(int result) { return result == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR"; }

int nvrtcGetNumSupportedArchs(int* count)
{
    *count = 1;
    return 0;
}
