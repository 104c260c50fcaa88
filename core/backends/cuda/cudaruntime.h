// SPDX-License-Identifier: MIT
#pragma once

// What the CUDA runtime says about this machine, shared by the cuda and cuda-cublas
// plugins. Each plugin links its own static copy of the runtime; both talk to the same
// driver and use each device's primary context, so device pointers and streams
// (cudaStream_t is CUstream) pass between them.

#include <cuda_runtime_api.h>

#include <string>

namespace switchyard::cuda {

/// "cudaErrorNoDevice: no CUDA-capable device is detected".
std::string error_text(cudaError_t error);
/// "12.4" for the runtime's and driver's 12040.
std::string version_text(int version);
/// Throws std::runtime_error("<what>: <error_text>") unless error is cudaSuccess.
void check(cudaError_t error, const char* what);

/// The runtime's view of the machine, asked once per process (cudaGetDeviceCount).
struct RuntimeStatus {
    int device_count = 0;
    int max_compute_capability = -1; // 90 for sm_90; -1 without a device
    std::string error;               // the runtime's reason when device_count is 0
};
const RuntimeStatus& runtime_status();

/// Availability for a cell built for compute capability `cc` (0: any CUDA device).
bool has_device_with_cc(int cc);

/// What a cell needs, for `resolve` to explain an unavailable rung: "a CUDA device of
/// compute capability 9.0 or newer", plus the runtime's reason when it reported one.
std::string requirement(int cc);

} // namespace switchyard::cuda
