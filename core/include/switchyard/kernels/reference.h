// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/kernel.h>

#include <cstdint>

/// The scalar CPU references: the terminal rung `(op, cpu, generic, reference)` of every
/// fallback chain and the ground truth of every parity check. Written for clarity and
/// accuracy, not speed: each element is computed in double and rounded once; reductions
/// accumulate in double. The formulas are in docs/kernels.md.
namespace switchyard::reference {

/// out[i] = x[i] + dt * v[i]
SWITCHYARD_CORE_EXPORT void flow_match_step(std::int64_t n, const float* x, const float* v,
                                            double dt, float* out);

/// The Flow-GRPO SDE step with log-prob over B rows of D elements.
/// sigma == 1 uses sigma_max in the denominator of s (s = sqrt(sigma / (1 - sigma_max))).
SWITCHYARD_CORE_EXPORT void flow_sde_step(std::int64_t b, std::int64_t d, const float* x,
                                          const float* v, const float* noise, double sigma,
                                          double sigma_prev, double sigma_max, double noise_level,
                                          float* prev, float* log_prob);

/// C[M,N] = alpha * A[M,K] * B[K,N] + beta * C[M,N]
SWITCHYARD_CORE_EXPORT void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                                 const float* b, double alpha, double beta, float* c);

/// y[b,:] = x[b,:] / sqrt(mean(x[b,:]^2) + eps) * w
SWITCHYARD_CORE_EXPORT void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w,
                                     double eps, float* y);

/// The same functions behind the uniform KernelArgs signature (kernel.h's slot table).
SWITCHYARD_CORE_EXPORT void flow_match_step_kernel(const KernelArgs& args);
SWITCHYARD_CORE_EXPORT void flow_sde_step_kernel(const KernelArgs& args);
SWITCHYARD_CORE_EXPORT void gemm_kernel(const KernelArgs& args);
SWITCHYARD_CORE_EXPORT void rms_norm_kernel(const KernelArgs& args);

} // namespace switchyard::reference
