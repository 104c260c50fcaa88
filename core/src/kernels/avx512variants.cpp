// SPDX-License-Identifier: MIT
// Compiled with -mavx512f -mavx512bw -mavx512vl -mfma (core/CMakeLists.txt). Nothing here
// may run before cpukernels.cpp's runtime check has confirmed an x86-64-v4 CPU. The kernels
// themselves are simdvariants.h's, over the 512-bit traits below.
#include "kernels/simd256.h"

namespace switchyard::cpu::avx512 {

namespace {

struct V {
    using reg = __m512;
    using dreg = __m512d;
    using mask = __mmask16;
    static constexpr std::int64_t W = 16;
    static constexpr std::uintptr_t kAlign = 64;
    static constexpr GemmBlocking kGemm = avx512::kGemm;
    // The 12 x 32 tile is bound by its 24 FMAs, not by issue; unrolled to four steps a
    // round GCC spills an accumulator (llvm-mca skylake-avx512: 13.07 cycles a step at one,
    // 13.28 at four, 13.54 at two), so it keeps the loop it was tuned with on Zen 4.
    static constexpr int kGemmSteps = 1;
    // rms_norm's stream prefetches into L1 (rms_stream_fused), as at 256 bits (the entry
    // point below streams with the 256-bit traits; these serve the template). NTA was
    // 1.01-1.03x T0 on Zen 5, but 0.35x the 256-bit cells on the GPU host's Xeon at
    // 4096x4096 (8.1 against 24.9 GB/s on one thread): there an NTA line skips L2 and the
    // scale pass reads the row from DRAM again.
    static constexpr decltype(_MM_HINT_T0) kRmsAheadHint = _MM_HINT_T0; // see simd256.h
    static constexpr int kFmaAccs = 12;

    static reg zero() { return _mm512_setzero_ps(); }
    static reg set1(float f) { return _mm512_set1_ps(f); }
    static reg load(const float* p) { return _mm512_load_ps(p); }
    static reg loadu(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, reg v) { _mm512_store_ps(p, v); }
    static void storeu(float* p, reg v) { _mm512_storeu_ps(p, v); }
    static void stream(float* p, reg v) { _mm512_stream_ps(p, v); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
    static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }

    static mask tail(std::int64_t rem) { return __mmask16((1u << unsigned(rem)) - 1u); }
    static reg maskload(mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
    static void maskstore(float* p, mask m, reg v) { _mm512_mask_storeu_ps(p, m, v); }

    static dreg dzero() { return _mm512_setzero_pd(); }
    static void acc_sq(reg v, dreg& lo, dreg& hi) {
        const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        const __m512d b =
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        lo = _mm512_fmadd_pd(a, a, lo);
        hi = _mm512_fmadd_pd(b, b, hi);
    }
    static void acc_sum(reg v, dreg& lo, dreg& hi) {
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        hi = _mm512_add_pd(
            hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    static dreg dadd(dreg a, dreg b) { return _mm512_add_pd(a, b); }
    static double dsum(dreg v) { return _mm512_reduce_add_pd(v); }
    static double hsum(reg v) {
        const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        const __m512d hi =
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
    }
};

} // namespace

// flow_match_step and rms_norm from memory stream with 256-bit loads and stores (simd256.h).
// rms_norm at 4096x4096 on one thread: the 512-bit stream moved 0.90-0.95x the v3 cell's
// GB/s in five profiler runs on a Zen 5 guest (x86-64-v4/default against v3/default,
// --repeat 2-6), and 0.85x on the GPU host's Xeon; in cache it stays at 512 bits.
SWITCHYARD_SIMD_ENTRY_POINTS(V, simd::V256)

} // namespace switchyard::cpu::avx512
