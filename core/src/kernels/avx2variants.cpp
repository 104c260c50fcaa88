// SPDX-License-Identifier: MIT
// Compiled with -mavx2 -mfma (core/CMakeLists.txt). Nothing here may run before
// cpukernels.cpp's runtime check has confirmed an x86-64-v3 CPU.
#include "kernels/cpuvariants.h"

#include <immintrin.h>

namespace switchyard::cpu::avx2 {

namespace {

// No std:: templates in this file: an inline function instantiated here is built for
// AVX2 and the linker could keep that copy for callers in baseline code.
inline std::int64_t imin(std::int64_t a, std::int64_t b) {
    return a < b ? a : b;
}
inline float fmaf_(float a, float b, float c) {
    return __builtin_fmaf(a, b, c);
}

// Lane mask for the first `rem` (0..8) lanes.
inline __m256i tail_mask(std::int64_t rem) {
    alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                              0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - rem));
}

// Adds the squares of 8 floats to two double accumulators.
inline void acc_sq_pd(__m256 v, __m256d& lo, __m256d& hi) {
    const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    lo = _mm256_fmadd_pd(a, a, lo);
    hi = _mm256_fmadd_pd(b, b, hi);
}

inline double hsum_pd(__m256d v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

} // namespace

void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out, bool stream) {
    const __m256 vdt = _mm256_set1_ps(dt);
    std::int64_t i = 0;
    if (stream) {
        // Scalar prologue up to a 32-byte aligned output, then non-temporal stores.
        while (i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 31u)) {
            out[i] = fmaf_(dt, v[i], x[i]);
            ++i;
        }
        for (; i + 32 <= n; i += 32) {
            for (int u = 0; u < 32; u += 8) {
                const __m256 r =
                    _mm256_fmadd_ps(vdt, _mm256_loadu_ps(v + i + u), _mm256_loadu_ps(x + i + u));
                _mm256_stream_ps(out + i + u, r);
            }
        }
        _mm_sfence();
    } else {
        for (; i + 32 <= n; i += 32) {
            for (int u = 0; u < 32; u += 8) {
                const __m256 r =
                    _mm256_fmadd_ps(vdt, _mm256_loadu_ps(v + i + u), _mm256_loadu_ps(x + i + u));
                _mm256_storeu_ps(out + i + u, r);
            }
        }
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i,
                         _mm256_fmadd_ps(vdt, _mm256_loadu_ps(v + i), _mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        const __m256 r =
            _mm256_fmadd_ps(vdt, _mm256_maskload_ps(v + i, m), _mm256_maskload_ps(x + i, m));
        _mm256_maskstore_ps(out + i, m, r);
    }
}

void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob) {
    const __m256 xc = _mm256_set1_ps(float(c.x_coef));
    const __m256 vc = _mm256_set1_ps(float(c.v_coef));
    const __m256 sd = _mm256_set1_ps(float(c.std_dev));
    for (std::int64_t r = 0; r < b; ++r) {
        const std::int64_t base = r * d;
        const float* xr = x + base;
        const float* vr = v + base;
        const float* nr = noise + base;
        float* pr = prev + base;
        __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
        std::int64_t i = 0;
        auto step = [&](__m256 xv, __m256 vv, __m256 nv) {
            const __m256 diff = _mm256_mul_ps(sd, nv);
            const __m256 mean = _mm256_fmadd_ps(vv, vc, _mm256_mul_ps(xv, xc));
            acc_sq_pd(diff, lo, hi);
            return _mm256_add_ps(mean, diff);
        };
        for (; i + 8 <= d; i += 8)
            _mm256_storeu_ps(pr + i, step(_mm256_loadu_ps(xr + i), _mm256_loadu_ps(vr + i),
                                          _mm256_loadu_ps(nr + i)));
        if (i < d) {
            const __m256i m = tail_mask(d - i);
            // Masked-off lanes load 0: their diff is 0 and adds nothing to the sum.
            _mm256_maskstore_ps(pr + i, m,
                                step(_mm256_maskload_ps(xr + i, m), _mm256_maskload_ps(vr + i, m),
                                     _mm256_maskload_ps(nr + i, m)));
        }
        const double sumsq = hsum_pd(_mm256_add_pd(lo, hi));
        log_prob[r] = d > 0 ? float(-sumsq * c.inv_two_var / double(d) - c.log_norm) : 0.0f;
    }
}

void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,
              float* y) {
    for (std::int64_t r = 0; r < b; ++r) {
        const float* xr = x + r * d;
        float* yr = y + r * d;
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
        __m256d a2 = _mm256_setzero_pd(), a3 = _mm256_setzero_pd();
        std::int64_t i = 0;
        for (; i + 16 <= d; i += 16) {
            acc_sq_pd(_mm256_loadu_ps(xr + i), a0, a1);
            acc_sq_pd(_mm256_loadu_ps(xr + i + 8), a2, a3);
        }
        for (; i + 8 <= d; i += 8)
            acc_sq_pd(_mm256_loadu_ps(xr + i), a0, a1);
        if (i < d)
            acc_sq_pd(_mm256_maskload_ps(xr + i, tail_mask(d - i)), a0, a1);
        const double sumsq = hsum_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
        const __m256 inv =
            _mm256_set1_ps(float(1.0 / std::sqrt((d > 0 ? sumsq / double(d) : 0.0) + eps)));
        i = 0;
        for (; i + 8 <= d; i += 8)
            _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), inv),
                                                   _mm256_loadu_ps(w + i)));
        if (i < d) {
            const __m256i m = tail_mask(d - i);
            _mm256_maskstore_ps(yr + i, m,
                                _mm256_mul_ps(_mm256_mul_ps(_mm256_maskload_ps(xr + i, m), inv),
                                              _mm256_maskload_ps(w + i, m)));
        }
    }
}

double fma_probe(std::int64_t iterations) {
    // 10 independent accumulators hide the FMA latency (4-5 cycles, 2 ports).
    __m256 acc[10];
    for (int i = 0; i < 10; ++i)
        acc[i] = _mm256_set1_ps(float(i));
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    for (std::int64_t it = 0; it < iterations; ++it)
        for (int i = 0; i < 10; ++i)
            acc[i] = _mm256_fmadd_ps(acc[i], m, a);
    __m256 sum = acc[0];
    for (int i = 1; i < 10; ++i)
        sum = _mm256_add_ps(sum, acc[i]);
    alignas(32) float out[8];
    _mm256_store_ps(out, sum);
    // Keep the result observable so the loop is not removed.
    volatile float sink = out[0];
    (void)sink;
    return double(iterations) * 10.0 * 8.0 * 2.0;
}

double read_probe(std::int64_t n, const float* x) {
    // Four streams (the quarters), 8 accumulators (two per stream): neither the add latency
    // nor the prefetch of one stream limits it. One core's reads from memory are bound by
    // its outstanding misses, which more streams keep busier (+10-15 % from DRAM over two
    // streams); in L1 the limit is two loads a cycle, 64 B against a triad's 96 B (two loads
    // and a store), so this ceiling sits below the triad there by design.
    const std::int64_t quarter = n / 4 / 32 * 32;
    const float* x1 = x + quarter;
    const float* x2 = x + 2 * quarter;
    const float* x3 = x + 3 * quarter;
    __m256 s[8];
    for (int k = 0; k < 8; ++k)
        s[k] = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < quarter; i += 32) {
        for (int k = 0; k < 4; k += 2) {
            s[k] = _mm256_add_ps(s[k], _mm256_loadu_ps(x + i + 8 * k));
            s[k + 1] = _mm256_add_ps(s[k + 1], _mm256_loadu_ps(x + i + 8 * k + 8));
            s[k + 4] = _mm256_add_ps(s[k + 4], _mm256_loadu_ps(x1 + i + 8 * k));
            s[k + 5] = _mm256_add_ps(s[k + 5], _mm256_loadu_ps(x1 + i + 8 * k + 8));
        }
        for (int k = 0; k < 4; k += 2) {
            s[k] = _mm256_add_ps(s[k], _mm256_loadu_ps(x2 + i + 8 * k));
            s[k + 1] = _mm256_add_ps(s[k + 1], _mm256_loadu_ps(x2 + i + 8 * k + 8));
            s[k + 4] = _mm256_add_ps(s[k + 4], _mm256_loadu_ps(x3 + i + 8 * k));
            s[k + 5] = _mm256_add_ps(s[k + 5], _mm256_loadu_ps(x3 + i + 8 * k + 8));
        }
    }
    for (int k = 1; k < 8; ++k)
        s[0] = _mm256_add_ps(s[0], s[k]);
    alignas(32) float out[8];
    _mm256_store_ps(out, s[0]);
    double sum = 0;
    for (int l = 0; l < 8; ++l)
        sum += double(out[l]);
    for (std::int64_t i = 4 * quarter; i < n; ++i)
        sum += double(x[i]);
    return sum;
}

// ---- gemm: packed panels and a 6x16 FMA micro-kernel ---------------------------------

namespace {

// C[6x16] = alpha * Ap[6 x kc] * Bp[kc x 16] + cb * C, straight from the accumulators
// (cb == 0: C is not read, so it may hold NaN as BLAS allows). Full tiles only; `c` has
// row stride ldc. The C rows are prefetched first: they come from L3 or memory, and the
// kc-long loop hides the misses.
inline void micro_kernel(std::int64_t kc, const float* ap, const float* bp, float* c,
                         std::int64_t ldc, float alpha, float cb) {
    for (int i = 0; i < 6; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 15), _MM_HINT_T0);
    }
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (std::int64_t p = 0; p < kc; ++p) {
        const __m256 b0 = _mm256_load_ps(bp);
        const __m256 b1 = _mm256_load_ps(bp + 8);
        __m256 a = _mm256_broadcast_ss(ap + 0);
        c00 = _mm256_fmadd_ps(a, b0, c00);
        c01 = _mm256_fmadd_ps(a, b1, c01);
        a = _mm256_broadcast_ss(ap + 1);
        c10 = _mm256_fmadd_ps(a, b0, c10);
        c11 = _mm256_fmadd_ps(a, b1, c11);
        a = _mm256_broadcast_ss(ap + 2);
        c20 = _mm256_fmadd_ps(a, b0, c20);
        c21 = _mm256_fmadd_ps(a, b1, c21);
        a = _mm256_broadcast_ss(ap + 3);
        c30 = _mm256_fmadd_ps(a, b0, c30);
        c31 = _mm256_fmadd_ps(a, b1, c31);
        a = _mm256_broadcast_ss(ap + 4);
        c40 = _mm256_fmadd_ps(a, b0, c40);
        c41 = _mm256_fmadd_ps(a, b1, c41);
        a = _mm256_broadcast_ss(ap + 5);
        c50 = _mm256_fmadd_ps(a, b0, c50);
        c51 = _mm256_fmadd_ps(a, b1, c51);
        ap += kGemmMR;
        bp += kGemmNR;
    }
    const __m256 va = _mm256_set1_ps(alpha);
    auto put = [&](float* row, __m256 lo, __m256 hi) {
        lo = _mm256_mul_ps(va, lo);
        hi = _mm256_mul_ps(va, hi);
        if (cb != 0.0f) {
            const __m256 vb = _mm256_set1_ps(cb);
            lo = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), lo);
            hi = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), hi);
        }
        _mm256_storeu_ps(row, lo);
        _mm256_storeu_ps(row + 8, hi);
    };
    put(c, c00, c01);
    put(c + ldc, c10, c11);
    put(c + 2 * ldc, c20, c21);
    put(c + 3 * ldc, c30, c31);
    put(c + 4 * ldc, c40, c41);
    put(c + 5 * ldc, c50, c51);
}

// The same for an edge tile (rows x cols of C, fewer than 6 x 16): the full tile is
// computed into `tile`, and only its valid part is merged into C.
void edge_kernel(std::int64_t kc, const float* ap, const float* bp, float* c, std::int64_t ldc,
                 std::int64_t rows, std::int64_t cols, float alpha, float cb) {
    alignas(32) float tile[kGemmMR * kGemmNR];
    micro_kernel(kc, ap, bp, tile, kGemmNR, alpha, 0.0f);
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
            const float t = tile[i * kGemmNR + j];
            c[i * ldc + j] = cb == 0.0f ? t : fmaf_(cb, c[i * ldc + j], t);
        }
}

} // namespace

// Packs A[mc x kc] into row panels of MR: panel-major, then p, then the MR rows (zero padded).
void gemm_pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda, float* dst) {
    for (std::int64_t i0 = 0; i0 < mc; i0 += kGemmMR) {
        const std::int64_t rows = imin(kGemmMR, mc - i0);
        for (std::int64_t p = 0; p < kc; ++p) {
            for (std::int64_t i = 0; i < rows; ++i)
                dst[i] = a[(i0 + i) * lda + p];
            for (std::int64_t i = rows; i < kGemmMR; ++i)
                dst[i] = 0.0f;
            dst += kGemmMR;
        }
    }
}

// Packs B[kc x nc] into column panels of NR: panel-major, then p, then NR columns.
void gemm_pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb, float* dst) {
    for (std::int64_t j0 = 0; j0 < nc; j0 += kGemmNR) {
        const std::int64_t cols = imin(kGemmNR, nc - j0);
        for (std::int64_t p = 0; p < kc; ++p) {
            const float* src = b + p * ldb + j0;
            if (cols == kGemmNR) {
                _mm256_store_ps(dst, _mm256_loadu_ps(src));
                _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + 8));
            } else {
                for (std::int64_t j = 0; j < cols; ++j)
                    dst[j] = src[j];
                for (std::int64_t j = cols; j < kGemmNR; ++j)
                    dst[j] = 0.0f;
            }
            dst += kGemmNR;
        }
    }
}

void gemm_macro(std::int64_t mc, std::int64_t nc, std::int64_t kc, const float* packed_a,
                const float* packed_b, float* c, std::int64_t ldc, float alpha, float cb) {
    // The B micro-panel (kc x 16, 16 KiB at kc = 256) stays in L1 while the A micro-panels
    // stream from L2.
    for (std::int64_t jr = 0; jr < nc; jr += kGemmNR) {
        const std::int64_t cols = imin(kGemmNR, nc - jr);
        const float* bp = packed_b + jr * kc;
        for (std::int64_t ir = 0; ir < mc; ir += kGemmMR) {
            const std::int64_t rows = imin(kGemmMR, mc - ir);
            float* cblk = c + ir * ldc + jr;
            if (rows == kGemmMR && cols == kGemmNR)
                micro_kernel(kc, packed_a + ir * kc, bp, cblk, ldc, alpha, cb);
            else
                edge_kernel(kc, packed_a + ir * kc, bp, cblk, ldc, rows, cols, alpha, cb);
        }
    }
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc,
          float* workspace) {
    float* packed_b = workspace;
    float* packed_a = workspace + kGemmKC * kGemmNC;
    if (k == 0) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    for (std::int64_t j0 = 0; j0 < n; j0 += kGemmNC) {
        const std::int64_t nc = imin(kGemmNC, n - j0);
        for (std::int64_t p0 = 0; p0 < k; p0 += kGemmKC) {
            const std::int64_t kc = imin(kGemmKC, k - p0);
            gemm_pack_b(kc, nc, b + p0 * ldb + j0, ldb, packed_b);
            // The first k-block applies beta; later ones accumulate.
            const float cb = p0 == 0 ? beta : 1.0f;
            for (std::int64_t i0 = 0; i0 < m; i0 += kGemmMC) {
                const std::int64_t mc = imin(kGemmMC, m - i0);
                gemm_pack_a(mc, kc, a + i0 * lda + p0, lda, packed_a);
                gemm_macro(mc, nc, kc, packed_a, packed_b, c + i0 * ldc + j0, ldc, alpha, cb);
            }
        }
    }
}

} // namespace switchyard::cpu::avx2
