// SPDX-License-Identifier: MIT
#pragma once

// The memory-bound ops' device code and launch geometry (docs/kernels.md), shared by
// elementwise.cu (nvcc) and the host-side emulation in tests/core/tst_cuda.cpp
// (cudaemu.h): only CUDA built-ins that cudaemu.h provides may appear here.

#include <switchyard/sdk/kernel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace switchyard::cuda {
namespace {
constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1 << 30; // grid-stride loops cover the rest

unsigned blocks_for(std::int64_t items, int per_block = kThreads) {
    return unsigned(std::clamp<std::int64_t>((items + per_block - 1) / per_block, 1, kMaxBlocks));
}

bool aligned16(const void* p) {
    return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// The sum of `v` over the block, returned to every thread. Safe to call repeatedly.
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    __shared__ float total;
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x >> 5) ? partial[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0)
            total = v;
    }
    __syncthreads();
    const float r = total;
    __syncthreads();
    return r;
}

// ---- flow_match_step: out = x + dt * v ----------------------------------------------

__global__ void flow_match_scalar(std::int64_t begin, std::int64_t n, const float* __restrict__ x,
                                  const float* __restrict__ v, float dt, float* __restrict__ out) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = begin + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        out[i] = fmaf(dt, v[i], x[i]);
}

__global__ void flow_match_float4(std::int64_t n4, const float4* __restrict__ x,
                                  const float4* __restrict__ v, float dt,
                                  float4* __restrict__ out) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
         i += stride) {
        const float4 a = x[i], b = v[i];
        out[i] = make_float4(fmaf(dt, b.x, a.x), fmaf(dt, b.y, a.y), fmaf(dt, b.z, a.z),
                             fmaf(dt, b.w, a.w));
    }
}

// ---- flow_sde_step ---------------------------------------------------------------------
// Per row: mean = x*x_coef + v*v_coef; prev = mean + std*noise; log_prob = mean over the
// row of (-noise^2/2) - log(std) - log(sqrt(2 pi)) (since prev - mean = std*noise exactly).

struct SdeCoefficients {
    float x_coef, v_coef, std_dev, log_norm;
};

SdeCoefficients sde_coefficients(const KernelArgs& a) {
    const double sigma = a.scalars[0], sigma_prev = a.scalars[1], sigma_max = a.scalars[2],
                 noise_level = a.scalars[3];
    const double dt = sigma_prev - sigma;
    const double denom_sigma = sigma == 1.0 ? sigma_max : sigma;
    const double s = std::sqrt(sigma / (1.0 - denom_sigma)) * noise_level;
    const double std_dev = s * std::sqrt(-dt);
    return {float(1.0 + s * s / (2.0 * sigma) * dt),
            float((1.0 + s * s * (1.0 - sigma) / (2.0 * sigma)) * dt), float(std_dev),
            float(std::log(std_dev) + std::log(std::sqrt(2.0 * 3.14159265358979323846)))};
}

template <bool Vec4>
__global__ void flow_sde_rows(std::int64_t rows, std::int64_t d, const float* __restrict__ x,
                              const float* __restrict__ v, const float* __restrict__ noise,
                              SdeCoefficients c, float* __restrict__ prev,
                              float* __restrict__ log_prob) {
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const std::int64_t base = r * d;
        float sq = 0.f;
        if constexpr (Vec4) {
            const auto* x4 = reinterpret_cast<const float4*>(x + base);
            const auto* v4 = reinterpret_cast<const float4*>(v + base);
            const auto* n4 = reinterpret_cast<const float4*>(noise + base);
            auto* p4 = reinterpret_cast<float4*>(prev + base);
            for (std::int64_t i = threadIdx.x; i < d / 4; i += blockDim.x) {
                const float4 a = x4[i], b = v4[i], z = n4[i];
                float4 o;
                o.x = fmaf(c.std_dev, z.x, fmaf(a.x, c.x_coef, b.x * c.v_coef));
                o.y = fmaf(c.std_dev, z.y, fmaf(a.y, c.x_coef, b.y * c.v_coef));
                o.z = fmaf(c.std_dev, z.z, fmaf(a.z, c.x_coef, b.z * c.v_coef));
                o.w = fmaf(c.std_dev, z.w, fmaf(a.w, c.x_coef, b.w * c.v_coef));
                p4[i] = o;
                sq += z.x * z.x + z.y * z.y + z.z * z.z + z.w * z.w;
            }
        } else {
            for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
                const float z = noise[base + i];
                prev[base + i] =
                    fmaf(c.std_dev, z, fmaf(x[base + i], c.x_coef, v[base + i] * c.v_coef));
                sq += z * z;
            }
        }
        sq = block_sum(sq);
        if (threadIdx.x == 0)
            log_prob[r] = d > 0 ? -0.5f * (sq / float(d)) - c.log_norm : 0.f;
    }
}

// ---- rms_norm: y = x / sqrt(mean(x^2) + eps) * w ----------------------------------------

template <bool Vec4>
__global__ void rms_norm_rows(std::int64_t rows, std::int64_t d, const float* __restrict__ x,
                              const float* __restrict__ w, float eps, float* __restrict__ y) {
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const std::int64_t base = r * d;
        float sq = 0.f;
        if constexpr (Vec4) {
            const auto* x4 = reinterpret_cast<const float4*>(x + base);
            for (std::int64_t i = threadIdx.x; i < d / 4; i += blockDim.x) {
                const float4 a = x4[i];
                sq += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
            }
        } else {
            for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
                sq += x[base + i] * x[base + i];
        }
        sq = block_sum(sq);
        const float inv = rsqrtf((d > 0 ? sq / float(d) : 0.f) + eps);
        if constexpr (Vec4) {
            const auto* x4 = reinterpret_cast<const float4*>(x + base);
            const auto* w4 = reinterpret_cast<const float4*>(w);
            auto* y4 = reinterpret_cast<float4*>(y + base);
            for (std::int64_t i = threadIdx.x; i < d / 4; i += blockDim.x) {
                const float4 a = x4[i], b = w4[i];
                y4[i] =
                    make_float4(a.x * inv * b.x, a.y * inv * b.y, a.z * inv * b.z, a.w * inv * b.w);
            }
        } else {
            for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
                y[base + i] = x[base + i] * inv * w[i];
        }
    }
}

int row_threads(std::int64_t d, bool vec4) {
    // One block per row; enough threads that a 1024-wide row is one float4 step each.
    const std::int64_t work = vec4 ? d / 4 : d;
    return work >= 256 ? 256 : work > 64 ? 128 : 64;
}

bool rows_vectorisable(std::int64_t d, std::initializer_list<const void*> ptrs) {
    if (d % 4 != 0)
        return false;
    for (const void* p : ptrs)
        if (!aligned16(p))
            return false;
    return true;
}

// ---- host side: the launches, for any launcher ------------------------------------------
// `launch(grid, block, kernel, args...)` runs `kernel` over the grid: on the device's
// stream in elementwise.cu, as fibers in the emulation (cudaemu.h).

template <class Launch> void run_flow_match_step(const KernelArgs& a, bool vec4, Launch&& launch) {
    const std::int64_t n = a.dims[0];
    if (n <= 0)
        return;
    const float dt = float(a.scalars[0]);
    if (!vec4 || !aligned16(a.in[0]) || !aligned16(a.in[1]) || !aligned16(a.out[0])) {
        launch(dim3(blocks_for(n)), dim3(kThreads), flow_match_scalar, std::int64_t(0), n, a.in[0],
               a.in[1], dt, a.out[0]);
        return;
    }
    const std::int64_t n4 = n / 4;
    if (n4 > 0)
        launch(dim3(blocks_for(n4)), dim3(kThreads), flow_match_float4, n4,
               reinterpret_cast<const float4*>(a.in[0]), reinterpret_cast<const float4*>(a.in[1]),
               dt, reinterpret_cast<float4*>(a.out[0]));
    if (n4 * 4 < n) // the scalar tail
        launch(dim3(1), dim3(32), flow_match_scalar, n4 * 4, n, a.in[0], a.in[1], dt, a.out[0]);
}

template <class Launch> void run_flow_sde_step(const KernelArgs& a, bool vec4, Launch&& launch) {
    const std::int64_t b = a.dims[0], d = a.dims[1];
    if (b <= 0)
        return;
    vec4 = vec4 && rows_vectorisable(d, {a.in[0], a.in[1], a.in[2], a.out[0]});
    launch(dim3(blocks_for(b, 1)), dim3(row_threads(d, vec4)),
           vec4 ? flow_sde_rows<true> : flow_sde_rows<false>, b, d, a.in[0], a.in[1], a.in[2],
           sde_coefficients(a), a.out[0], a.out[1]);
}

template <class Launch> void run_rms_norm(const KernelArgs& a, bool vec4, Launch&& launch) {
    const std::int64_t b = a.dims[0], d = a.dims[1];
    if (b <= 0)
        return;
    vec4 = vec4 && rows_vectorisable(d, {a.in[0], a.in[1], a.out[0]});
    launch(dim3(blocks_for(b, 1)), dim3(row_threads(d, vec4)),
           vec4 ? rms_norm_rows<true> : rms_norm_rows<false>, b, d, a.in[0], a.in[1],
           float(a.scalars[0]), a.out[0]);
}

} // namespace
} // namespace switchyard::cuda
