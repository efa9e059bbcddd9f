/* The CUDA 13.0 runtime as far as the tests reach: libcudart.so.13 without the functions of 13.1 and later. */
int cudaRuntimeGetVersion(int* version)
{
    *version = 13000;
    return 0;
}

const char* cudaGetErrorString(int error) { return error == 0 ? "no error" : "error"; }
const char* cudaGetErrorName(int error) { return error == 0 ? "cudaSuccess" : "cudaError"; }
