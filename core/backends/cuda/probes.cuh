// SPDX-License-Identifier: MIT
#pragma once

// The CUDA device's ceiling probes (a copy and an FMA loop), shared by cudadevice.cpp's
// probes.cu (nvcc) and the host-side emulation in tests/core/tst_cuda.cpp (cudaemu.h):
// only CUDA built-ins that cudaemu.h provides may appear here.

#include <cstdint>

namespace switchyard::cuda {
namespace {

constexpr int kProbeThreads = 256;
/// Independent accumulators per thread of the FMA probe (hide the FMA latency).
constexpr int kFmaChains = 8;

// dst[i] = src[i] for i < n4 float4s, grid-stride.
__global__ void copy_probe_kernel(const float4* src, float4* dst, std::int64_t n4) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
        dst[i] = src[i];
}

// a[i] = b[i] + s c[i] for i < n4 float4s, one float4 per thread (the grid covers the
// arrays): two reads and a write, the mix of flow_match_step, which moves more bytes per
// second from HBM than a copy does (H200: 4394 GB/s against the copy's 4187).
__global__ void triad_probe_kernel(const float4* b, const float4* c, float s, float4* a,
                                   std::int64_t n4) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n4)
        return;
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
}

// kFmaChains independent FMA chains of `iterations` steps per thread; out[thread] = their
// sum, so nothing is optimised away.
__global__ void fma_probe_kernel(float* out, int iterations, float m, float a) {
    float acc[kFmaChains];
    for (int c = 0; c < kFmaChains; ++c)
        acc[c] = float(threadIdx.x + c);
    for (int it = 0; it < iterations; ++it)
        for (int c = 0; c < kFmaChains; ++c)
            acc[c] = fmaf(acc[c], m, a);
    float s = 0;
    for (int c = 0; c < kFmaChains; ++c)
        s += acc[c];
    out[std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

// The working-set sweep's kernel (LBNL's Empirical Roofline Toolkit's): `trials` passes of
// x[i] = a x[i] + b over n4 float4s, grid-stride. A thread updates the same elements in
// every pass, so each SM's share of the set stays in that SM's L1 while it fits, then in
// the L2, then comes from device memory. The empty asm with a memory clobber keeps the
// compiler from fusing the passes into registers.
__global__ void sweep_probe_kernel(float4* x, std::int64_t n4, int trials, float a, float b) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int t = 0; t < trials; ++t) {
        for (std::int64_t i = first; i < n4; i += stride) {
            float4 v = x[i];
            v.x = fmaf(a, v.x, b);
            v.y = fmaf(a, v.y, b);
            v.z = fmaf(a, v.z, b);
            v.w = fmaf(a, v.w, b);
            x[i] = v;
        }
        asm volatile("" ::: "memory");
    }
}

/// Flops one fma_probe_kernel launch does.
inline double fma_probe_flops(unsigned blocks, int iterations) {
    return double(blocks) * kProbeThreads * double(iterations) * kFmaChains * 2.0;
}

template <class Launch>
void run_copy_probe(const float* src, float* dst, std::int64_t bytes, unsigned blocks,
                    Launch&& launch) {
    launch(dim3(blocks), dim3(kProbeThreads), copy_probe_kernel,
           reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst),
           bytes / std::int64_t(sizeof(float4)));
}

/// One triad launch over `bytes` per array (a multiple of 16): a = b + s c.
template <class Launch>
void run_triad_probe(const float* b, const float* c, float s, float* a, std::int64_t bytes,
                     Launch&& launch) {
    const std::int64_t n4 = bytes / std::int64_t(sizeof(float4));
    launch(dim3(unsigned((n4 + kProbeThreads - 1) / kProbeThreads)), dim3(kProbeThreads),
           triad_probe_kernel, reinterpret_cast<const float4*>(b),
           reinterpret_cast<const float4*>(c), s, reinterpret_cast<float4*>(a), n4);
}

/// One sweep launch over the first `bytes` of x (a multiple of 16).
template <class Launch>
void run_sweep_probe(float* x, std::int64_t bytes, unsigned blocks, int trials, Launch&& launch) {
    launch(dim3(blocks), dim3(kProbeThreads), sweep_probe_kernel, reinterpret_cast<float4*>(x),
           bytes / std::int64_t(sizeof(float4)), trials, 0.999f, 0.001f);
}

template <class Launch>
void run_fma_probe(float* out, unsigned blocks, int iterations, Launch&& launch) {
    launch(dim3(blocks), dim3(kProbeThreads), fma_probe_kernel, out, iterations, 0.999999f, 1e-7f);
}

} // namespace
} // namespace switchyard::cuda
