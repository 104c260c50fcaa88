// SPDX-License-Identifier: MIT
// gemm on the device; the kernels are in gemm.cuh.
#include "cudakernels.h"
#include "devicelaunch.cuh"

// The device code; needs cuda_runtime.h (devicelaunch.cuh) first.
#include "gemm.cuh"

namespace switchyard::cuda {

void gemm_generic(const KernelArgs& a) {
    run_gemm_generic(a, DeviceLaunch(a, "gemm (generic)"));
}
void gemm_sm80(const KernelArgs& a) {
    run_gemm_sm80(a, DeviceLaunch(a, "gemm (sm_80)"));
}
void gemm_sm90(const KernelArgs& a) {
    run_gemm_sm90(a, DeviceLaunch(a, "gemm (sm_90)"));
}

} // namespace switchyard::cuda
