// Built by nvcc at build time (-cubin -arch=sm_90) for the GPU tests, which
// load the cubin with cubind::ObjectCode::from_file: the path a library takes
// when it ships precompiled kernels.
extern "C" __global__ void scale(float* data, float factor, unsigned int n) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
