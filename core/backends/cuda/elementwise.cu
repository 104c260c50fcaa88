// SPDX-License-Identifier: MIT
// The memory-bound ops on the device; the kernels are in elementwise.cuh.
#include "cudakernels.h"
#include "devicelaunch.cuh"

// The device code; needs cuda_runtime.h (devicelaunch.cuh) first.
#include "elementwise.cuh"

namespace switchyard::cuda {

void flow_match_step_generic(const KernelArgs& a) {
    run_flow_match_step(a, false, DeviceLaunch(a, "flow_match_step (generic)"));
}
void flow_match_step_vec4(const KernelArgs& a) {
    run_flow_match_step(a, true, DeviceLaunch(a, "flow_match_step (vec4)"));
}
void flow_sde_step_generic(const KernelArgs& a) {
    run_flow_sde_step(a, false, DeviceLaunch(a, "flow_sde_step (generic)"));
}
void flow_sde_step_vec4(const KernelArgs& a) {
    run_flow_sde_step(a, true, DeviceLaunch(a, "flow_sde_step (vec4)"));
}
void rms_norm_generic(const KernelArgs& a) {
    run_rms_norm(a, false, DeviceLaunch(a, "rms_norm (generic)"));
}
void rms_norm_vec4(const KernelArgs& a) {
    run_rms_norm(a, true, DeviceLaunch(a, "rms_norm (vec4)"));
}

} // namespace switchyard::cuda
