// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// Op names: the stable identifiers the registries dispatch on.
inline constexpr std::string_view kFlowMatchStep = "flow_match_step";
inline constexpr std::string_view kFlowSdeStep = "flow_sde_step";
inline constexpr std::string_view kGemm = "gemm";
inline constexpr std::string_view kRmsNorm = "rms_norm";

/// The arguments of one kernel launch. fp32, contiguous, row-major. The meaning of
/// each slot is fixed per op (docs/kernels.md):
///
// clang-format off
/// | op              | dims      | in             | scalars                                      | out                |
/// |-----------------|-----------|----------------|----------------------------------------------|--------------------|
/// | flow_match_step | {N}       | {x, v}         | {dt}                                         | {out}              |
/// | flow_sde_step   | {B, D}    | {x, v, noise}  | {sigma, sigma_prev, sigma_max, noise_level}  | {prev, log_prob}   |
/// | gemm            | {M, N, K} | {A, B}         | {alpha, beta}                                | {C} (read + write) |
/// | rms_norm        | {B, D}    | {x, w}         | {eps}                                        | {y}                |
// clang-format on
///
/// On the CPU the pointers are host pointers. A device kernel receives the device's
/// own handles (CUDA device pointers; OpenCL cl_mem cast to a pointer) and its queue in
/// `stream`; `workspace` is at least the cell's declared `workspace_bytes`.
struct SWITCHYARD_CORE_EXPORT KernelArgs {
    std::array<std::int64_t, 3> dims{};
    std::array<const float*, 3> in{};
    std::array<float*, 2> out{};
    std::array<double, 4> scalars{};
    void* stream = nullptr;
    void* workspace = nullptr;
    std::size_t workspace_bytes = 0;
};

/// A kernel: stateless, same signature for every variant of every op.
using KernelFn = std::function<void(const KernelArgs&)>;

} // namespace switchyard
