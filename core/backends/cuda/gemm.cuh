// SPDX-License-Identifier: MIT
#pragma once

// gemm's device code (C = alpha*A*B + beta*C, fp32, row-major), shared by gemm.cu (nvcc)
// and the host-side emulation in tests/core/tst_cuda.cpp (cudaemu.h): only CUDA built-ins
// that cudaemu.h provides may appear here.

#include <switchyard/sdk/kernel.h>

#include <cstdint>
#include <stdexcept>

namespace switchyard::cuda {
namespace {

// ---- generic: one output per thread, 16x16 shared-memory tiles --------------------------

constexpr int kTile = 16;

__global__ void gemm_tile16(int m, int n, int k, const float* __restrict__ a,
                            const float* __restrict__ b, float alpha, float beta,
                            float* __restrict__ c) {
    __shared__ float as[kTile][kTile + 1];
    __shared__ float bs[kTile][kTile + 1];
    const int row = blockIdx.y * kTile + threadIdx.y;
    const int col = blockIdx.x * kTile + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < k; k0 += kTile) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = row < m && ka < k ? a[std::int64_t(row) * k + ka] : 0.f;
        bs[threadIdx.y][threadIdx.x] = kb < k && col < n ? b[std::int64_t(kb) * n + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kTile; ++p)
            acc = fmaf(as[threadIdx.y][p], bs[p][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < m && col < n) {
        float* out = c + std::int64_t(row) * n + col;
        *out = beta == 0.f ? alpha * acc : fmaf(alpha, acc, beta * *out);
    }
}

// ---- tiled: BMxBN block tile, BK deep, TMxTN outputs per thread, double-buffered -------
// On sm_80 and newer the tiles arrive with cp.async (global -> shared without registers,
// zero-filled past the matrix edges) while the previous tile is multiplied; compiled for
// an older arch the same code loads synchronously (the cells using it need sm_80+).

__device__ __forceinline__ void copy4(float* dst, const float* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src),
                 "r"(inside ? 4 : 0));
#else
    *dst = inside ? *src : 0.f;
#endif
}

__device__ __forceinline__ void copy16(float* dst, const float* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                 "r"(inside ? 16 : 0));
#else
    *reinterpret_cast<float4*>(dst) =
        inside ? *reinterpret_cast<const float4*>(src) : make_float4(0, 0, 0, 0);
#endif
}

__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int Pending> __device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

template <int BM, int BN, int BK, int TM, int TN> struct Tiling {
    static constexpr int kThreads = (BM / TM) * (BN / TN);
    static constexpr int kAPitch =
        BM + 4; // A is stored transposed (k-major); the pad spreads banks
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read as float4");
    // A thread's TN columns are TN/4 runs of 4, BN/(TN/4) apart, so a warp's float4 reads
    // of a B row are contiguous (no bank conflicts) rather than TN floats apart.
    static __device__ __forceinline__ int column(int tx, int j) {
        return (j / 4) * (4 * (BN / TN)) + tx * 4 + j % 4;
    }
    static_assert((BM * BK) % kThreads == 0 && (BK * BN) % (4 * kThreads) == 0,
                  "tiles split evenly");
};

template <int BM, int BN, int BK, int TM, int TN, int MinBlocks>
__global__ void __launch_bounds__(Tiling<BM, BN, BK, TM, TN>::kThreads, MinBlocks)
    gemm_tiled(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b,
               float alpha, float beta, float* __restrict__ c, bool b_vec4) {
    using T = Tiling<BM, BN, BK, TM, TN>;
    constexpr int kThreads = T::kThreads, kAPitch = T::kAPitch;
    const auto column = [](int tx, int j) { return T::column(tx, j); };
    __shared__ __align__(16) float as[2][BK][kAPitch];
    __shared__ __align__(16) float bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    auto load = [&](int stage, int k0) {
#pragma unroll
        for (int i = 0; i < BM * BK / kThreads; ++i) {
            const int e = tid + i * kThreads;
            const int row = e / BK, kk = e % BK;
            const int gm = m0 + row, gk = k0 + kk;
            const bool inside = gm < m && gk < k;
            copy4(&as[stage][kk][row], inside ? a + std::int64_t(gm) * k + gk : a, inside);
        }
        if (b_vec4) {
#pragma unroll
            for (int i = 0; i < BK * BN / 4 / kThreads; ++i) {
                const int e = tid + i * kThreads;
                const int kk = e / (BN / 4), col = (e % (BN / 4)) * 4;
                const int gk = k0 + kk, gn = n0 + col;
                const bool inside = gk < k && gn < n; // n % 4 == 0: all four or none
                copy16(&bs[stage][kk][col], inside ? b + std::int64_t(gk) * n + gn : b, inside);
            }
        } else {
#pragma unroll
            for (int i = 0; i < BK * BN / kThreads; ++i) {
                const int e = tid + i * kThreads;
                const int kk = e / BN, col = e % BN;
                const int gk = k0 + kk, gn = n0 + col;
                const bool inside = gk < k && gn < n;
                copy4(&bs[stage][kk][col], inside ? b + std::int64_t(gk) * n + gn : b, inside);
            }
        }
        copy_commit();
    };

    float acc[TM][TN] = {};
    const int tiles = (k + BK - 1) / BK;
    if (tiles > 0)
        load(0, 0);
    for (int t = 0; t < tiles; ++t) {
        const int stage = t & 1;
        if (t + 1 < tiles) {
            load(stage ^ 1, (t + 1) * BK);
            copy_wait<1>();
        } else {
            copy_wait<0>();
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float af[TM], bf[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&as[stage][kk][ty * TM + i]);
                af[i] = v.x, af[i + 1] = v.y, af[i + 2] = v.z, af[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&bs[stage][kk][column(tx, j)]);
                bf[j] = v.x, bf[j + 1] = v.y, bf[j + 2] = v.z, bf[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        __syncthreads(); // everyone is done with `stage` before it is refilled
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gm = m0 + ty * TM + i;
        if (gm >= m)
            break;
        float* row = c + std::int64_t(gm) * n;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gn = n0 + column(tx, j);
            if (gn < n)
                row[gn] = beta == 0.f ? alpha * acc[i][j] : fmaf(alpha, acc[i][j], beta * row[gn]);
        }
    }
}

// ---- host side: the launches, for any launcher (see elementwise.cuh) ---------------------

inline bool gemm_dims_ok(const KernelArgs& a) {
    const auto limit = std::int64_t(1) << 31;
    if (a.dims[0] >= limit || a.dims[1] >= limit || a.dims[2] >= limit)
        throw std::invalid_argument("gemm: M, N and K must each be below 2^31");
    if ((a.dims[0] + 15) / 16 > 65535)
        throw std::invalid_argument("gemm: M is too large for one launch");
    return a.dims[0] > 0 && a.dims[1] > 0;
}

template <class Launch> void run_gemm_generic(const KernelArgs& a, Launch&& launch) {
    if (!gemm_dims_ok(a))
        return;
    const int m = int(a.dims[0]), n = int(a.dims[1]), k = int(a.dims[2]);
    launch(dim3((n + kTile - 1) / kTile, (m + kTile - 1) / kTile), dim3(kTile, kTile), gemm_tile16,
           m, n, k, a.in[0], a.in[1], float(a.scalars[0]), float(a.scalars[1]), a.out[0]);
}

template <int BM, int BN, int BK, int TM, int TN, int MinBlocks, class Launch>
void run_gemm_tiled(const KernelArgs& a, Launch&& launch) {
    if (!gemm_dims_ok(a))
        return;
    const int m = int(a.dims[0]), n = int(a.dims[1]), k = int(a.dims[2]);
    const bool b_vec4 = n % 4 == 0 && (reinterpret_cast<std::uintptr_t>(a.in[1]) & 15u) == 0;
    launch(dim3((n + BN - 1) / BN, (m + BM - 1) / BM), dim3(Tiling<BM, BN, BK, TM, TN>::kThreads),
           gemm_tiled<BM, BN, BK, TM, TN, MinBlocks>, m, n, k, a.in[0], a.in[1],
           float(a.scalars[0]), float(a.scalars[1]), a.out[0], b_vec4);
}

// sm_80: 256 threads, 64 accumulators each, 16.5 KiB of shared memory: two blocks per SM.
template <class Launch> void run_gemm_sm80(const KernelArgs& a, Launch&& launch) {
    run_gemm_tiled<128, 128, 8, 8, 8, 2>(a, launch);
}

// sm_90: 512 threads over a 128x256 tile: twice the reuse of each A element per
// shared-memory load, 24.5 KiB of shared memory, one block of 16 warps per SM.
template <class Launch> void run_gemm_sm90(const KernelArgs& a, Launch&& launch) {
    run_gemm_tiled<128, 256, 8, 8, 8, 1>(a, launch);
}

} // namespace
} // namespace switchyard::cuda
