// SPDX-License-Identifier: MIT
#pragma once

// The cuda plugin's kernels: host launchers with the KernelArgs signature. They launch on
// args.stream, on the current device, and throw std::runtime_error when a launch fails.
// Compiled by nvcc as C++17: this header pulls in nothing from the core but kernel.h.

#include <switchyard/sdk/kernel.h>

namespace switchyard::cuda {

// Portable kernels (any compute capability): one element (or one row) per thread step.
void flow_match_step_generic(const KernelArgs& args);
void flow_sde_step_generic(const KernelArgs& args);
void rms_norm_generic(const KernelArgs& args);
void gemm_generic(const KernelArgs& args);

// float4 loads and stores with a scalar tail (rows whose length is not a multiple of 4
// take the scalar path); registered at sm_80.
void flow_match_step_vec4(const KernelArgs& args);
void flow_sde_step_vec4(const KernelArgs& args);
void rms_norm_vec4(const KernelArgs& args);

// Tiled gemm: 128x128x8 tiles, 8x8 per thread, cp.async double buffering (sm_80) and
// 128x256x8 tiles with 512 threads (sm_90).
void gemm_sm80(const KernelArgs& args);
void gemm_sm90(const KernelArgs& args);

} // namespace switchyard::cuda
