// Built by nvcc at build time into scale.cubin (-cubin -arch=sm_90), which
// load_cubin loads and launches: a precompiled kernel, as libraries ship them.
extern "C" __global__ void scale(float* data, float factor, unsigned int n) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
