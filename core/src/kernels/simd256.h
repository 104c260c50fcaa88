// SPDX-License-Identifier: MIT
#pragma once
// The 256-bit vector traits of simdvariants.h (AVX2 + FMA). avx2variants.cpp builds its
// kernels over them; avx512variants.cpp builds its DRAM-streaming flow_match_step and
// rms_norm over them as well (Zen 4 streamed 5-15 % fewer GB/s with 512-bit loads and stores
// in flow_match_step; see avx512variants.cpp for rms_norm).
// Internal linkage, like simdvariants.h: each file gets its own copy, built with its flags.
#include "kernels/simdvariants.h"

namespace switchyard::cpu::simd {
namespace {

struct V256 {
    using reg = __m256;
    using dreg = __m256d;
    using mask = __m256i;
    static constexpr std::int64_t W = 8;
    static constexpr std::uintptr_t kAlign = 32;
    static constexpr GemmBlocking kGemm = avx2::kGemm;
    // The 6 x 16 tile issues 24 instructions per 12 FMAs: on a 4-wide core one step a round
    // is issue-bound (llvm-mca, haswell and znver2 models: 6.5 cycles a step, 6.0 at four).
    // Four steps a round with a prefetch per line of A (not one per step): 1.09-1.12x at
    // 256^3, 512^3 and 2048^3 on Zen 3 in an interleaved A/B, bit-identical results.
    static constexpr int kGemmSteps = 4;
    // rms_norm's stream prefetches into L1 (rms_stream_fused): best of T0/T1/NTA on Zen 3.
    // The type of the hint is _mm_hint with GCC and int with Clang (its _MM_HINT_* are macros).
    static constexpr decltype(_MM_HINT_T0) kRmsAheadHint = _MM_HINT_T0;
    static constexpr int kFmaAccs = 10;

    static reg zero() { return _mm256_setzero_ps(); }
    static reg set1(float f) { return _mm256_set1_ps(f); }
    static reg load(const float* p) { return _mm256_load_ps(p); }
    static reg loadu(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, reg v) { _mm256_store_ps(p, v); }
    static void storeu(float* p, reg v) { _mm256_storeu_ps(p, v); }
    static void stream(float* p, reg v) { _mm256_stream_ps(p, v); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }

    static mask tail(std::int64_t rem) {
        alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                  0,  0,  0,  0,  0,  0,  0,  0};
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - rem));
    }
    static reg maskload(mask m, const float* p) { return _mm256_maskload_ps(p, m); }
    static void maskstore(float* p, mask m, reg v) { _mm256_maskstore_ps(p, m, v); }

    static dreg dzero() { return _mm256_setzero_pd(); }
    static void acc_sq(reg v, dreg& lo, dreg& hi) {
        const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
        const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
        lo = _mm256_fmadd_pd(a, a, lo);
        hi = _mm256_fmadd_pd(b, b, hi);
    }
    static void acc_sum(reg v, dreg& lo, dreg& hi) {
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    static dreg dadd(dreg a, dreg b) { return _mm256_add_pd(a, b); }
    static double dsum(dreg v) {
        const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
    }
    static double hsum(reg v) {
        alignas(32) float out[8];
        _mm256_store_ps(out, v);
        double sum = 0;
        for (int l = 0; l < 8; ++l)
            sum += double(out[l]);
        return sum;
    }
};

} // namespace
} // namespace switchyard::cpu::simd
