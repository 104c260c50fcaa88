// SPDX-License-Identifier: MIT
// Compiled with -mavx512f -mavx512bw -mavx512vl -mfma (core/CMakeLists.txt). Nothing here
// may run before cpukernels.cpp's runtime check has confirmed an x86-64-v4 CPU.
#include "kernels/cpuvariants.h"

#include <immintrin.h>

namespace switchyard::cpu::avx512 {

namespace {

// No std:: templates in this file: an inline function instantiated here is built for
// AVX-512 and the linker could keep that copy for callers in baseline code.
inline std::int64_t imin(std::int64_t a, std::int64_t b) {
    return a < b ? a : b;
}
inline float fmaf_(float a, float b, float c) {
    return __builtin_fmaf(a, b, c);
}

// Lane mask for the first `rem` (0..16) lanes.
inline __mmask16 tail_mask(std::int64_t rem) {
    return __mmask16((1u << unsigned(rem)) - 1u);
}

// Adds the squares of 16 floats to two double accumulators (8 lanes each).
inline void acc_sq_pd(__m512 v, __m512d& lo, __m512d& hi) {
    const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d b =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    lo = _mm512_fmadd_pd(a, a, lo);
    hi = _mm512_fmadd_pd(b, b, hi);
}

} // namespace

void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out, bool stream) {
    const __m512 vdt = _mm512_set1_ps(dt);
    std::int64_t i = 0;
    if (stream) {
        // Scalar prologue up to a 64-byte aligned output, then non-temporal stores.
        while (i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 63u)) {
            out[i] = fmaf_(dt, v[i], x[i]);
            ++i;
        }
        for (; i + 64 <= n; i += 64) {
            for (int u = 0; u < 64; u += 16) {
                const __m512 r =
                    _mm512_fmadd_ps(vdt, _mm512_loadu_ps(v + i + u), _mm512_loadu_ps(x + i + u));
                _mm512_stream_ps(out + i + u, r);
            }
        }
        _mm_sfence();
    } else {
        for (; i + 64 <= n; i += 64) {
            for (int u = 0; u < 64; u += 16) {
                const __m512 r =
                    _mm512_fmadd_ps(vdt, _mm512_loadu_ps(v + i + u), _mm512_loadu_ps(x + i + u));
                _mm512_storeu_ps(out + i + u, r);
            }
        }
    }
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i,
                         _mm512_fmadd_ps(vdt, _mm512_loadu_ps(v + i), _mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 r =
            _mm512_fmadd_ps(vdt, _mm512_maskz_loadu_ps(m, v + i), _mm512_maskz_loadu_ps(m, x + i));
        _mm512_mask_storeu_ps(out + i, m, r);
    }
}

void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob) {
    const __m512 xc = _mm512_set1_ps(float(c.x_coef));
    const __m512 vc = _mm512_set1_ps(float(c.v_coef));
    const __m512 sd = _mm512_set1_ps(float(c.std_dev));
    for (std::int64_t r = 0; r < b; ++r) {
        const std::int64_t base = r * d;
        const float* xr = x + base;
        const float* vr = v + base;
        const float* nr = noise + base;
        float* pr = prev + base;
        __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
        std::int64_t i = 0;
        auto step = [&](__m512 xv, __m512 vv, __m512 nv) {
            const __m512 diff = _mm512_mul_ps(sd, nv);
            const __m512 mean = _mm512_fmadd_ps(vv, vc, _mm512_mul_ps(xv, xc));
            acc_sq_pd(diff, lo, hi);
            return _mm512_add_ps(mean, diff);
        };
        for (; i + 16 <= d; i += 16)
            _mm512_storeu_ps(pr + i, step(_mm512_loadu_ps(xr + i), _mm512_loadu_ps(vr + i),
                                          _mm512_loadu_ps(nr + i)));
        if (i < d) {
            const __mmask16 m = tail_mask(d - i);
            // Masked-off lanes load 0: their diff is 0 and adds nothing to the sum.
            _mm512_mask_storeu_ps(pr + i, m,
                                  step(_mm512_maskz_loadu_ps(m, xr + i),
                                       _mm512_maskz_loadu_ps(m, vr + i),
                                       _mm512_maskz_loadu_ps(m, nr + i)));
        }
        const double sumsq = _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
        log_prob[r] = d > 0 ? float(-sumsq * c.inv_two_var / double(d) - c.log_norm) : 0.0f;
    }
}

void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,
              float* y) {
    for (std::int64_t r = 0; r < b; ++r) {
        const float* xr = x + r * d;
        float* yr = y + r * d;
        __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
        __m512d a2 = _mm512_setzero_pd(), a3 = _mm512_setzero_pd();
        std::int64_t i = 0;
        for (; i + 32 <= d; i += 32) {
            acc_sq_pd(_mm512_loadu_ps(xr + i), a0, a1);
            acc_sq_pd(_mm512_loadu_ps(xr + i + 16), a2, a3);
        }
        for (; i + 16 <= d; i += 16)
            acc_sq_pd(_mm512_loadu_ps(xr + i), a0, a1);
        if (i < d)
            acc_sq_pd(_mm512_maskz_loadu_ps(tail_mask(d - i), xr + i), a0, a1);
        const double sumsq =
            _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
        const __m512 inv =
            _mm512_set1_ps(float(1.0 / std::sqrt((d > 0 ? sumsq / double(d) : 0.0) + eps)));
        i = 0;
        for (; i + 16 <= d; i += 16)
            _mm512_storeu_ps(yr + i, _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(xr + i), inv),
                                                   _mm512_loadu_ps(w + i)));
        if (i < d) {
            const __mmask16 m = tail_mask(d - i);
            _mm512_mask_storeu_ps(
                yr + i, m,
                _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + i), inv),
                              _mm512_maskz_loadu_ps(m, w + i)));
        }
    }
}

double fma_probe(std::int64_t iterations) {
    // 12 independent accumulators hide the FMA latency (4 cycles, 2 ports on server cores).
    __m512 acc[12];
    for (int i = 0; i < 12; ++i)
        acc[i] = _mm512_set1_ps(float(i));
    const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
    for (std::int64_t it = 0; it < iterations; ++it)
        for (int i = 0; i < 12; ++i)
            acc[i] = _mm512_fmadd_ps(acc[i], m, a);
    __m512 sum = acc[0];
    for (int i = 1; i < 12; ++i)
        sum = _mm512_add_ps(sum, acc[i]);
    // Keep the result observable so the loop is not removed.
    volatile float sink = _mm512_reduce_add_ps(sum);
    (void)sink;
    return double(iterations) * 12.0 * 16.0 * 2.0;
}

double read_probe(std::int64_t n, const float* x) {
    // Four streams (the quarters) and 8 accumulators, as the AVX2 probe.
    const std::int64_t quarter = n / 4 / 64 * 64;
    const float* x1 = x + quarter;
    const float* x2 = x + 2 * quarter;
    const float* x3 = x + 3 * quarter;
    __m512 s[8];
    for (int k = 0; k < 8; ++k)
        s[k] = _mm512_setzero_ps();
    for (std::int64_t i = 0; i < quarter; i += 64) {
        for (int k = 0; k < 4; k += 2) {
            s[k] = _mm512_add_ps(s[k], _mm512_loadu_ps(x + i + 16 * k));
            s[k + 1] = _mm512_add_ps(s[k + 1], _mm512_loadu_ps(x + i + 16 * k + 16));
            s[k + 4] = _mm512_add_ps(s[k + 4], _mm512_loadu_ps(x1 + i + 16 * k));
            s[k + 5] = _mm512_add_ps(s[k + 5], _mm512_loadu_ps(x1 + i + 16 * k + 16));
        }
        for (int k = 0; k < 4; k += 2) {
            s[k] = _mm512_add_ps(s[k], _mm512_loadu_ps(x2 + i + 16 * k));
            s[k + 1] = _mm512_add_ps(s[k + 1], _mm512_loadu_ps(x2 + i + 16 * k + 16));
            s[k + 4] = _mm512_add_ps(s[k + 4], _mm512_loadu_ps(x3 + i + 16 * k));
            s[k + 5] = _mm512_add_ps(s[k + 5], _mm512_loadu_ps(x3 + i + 16 * k + 16));
        }
    }
    for (int k = 1; k < 8; ++k)
        s[0] = _mm512_add_ps(s[0], s[k]);
    double sum = double(_mm512_reduce_add_ps(s[0]));
    for (std::int64_t i = 4 * quarter; i < n; ++i)
        sum += double(x[i]);
    return sum;
}

// ---- gemm: packed panels and a 12x32 FMA micro-kernel --------------------------------

namespace {

constexpr std::int64_t MR = kGemm512MR, NR = kGemm512NR;

// Packs A[mc x kc] into row panels of MR: panel-major, then p, then the MR rows (zero padded).
void pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda, float* dst) {
    for (std::int64_t i0 = 0; i0 < mc; i0 += MR) {
        const std::int64_t rows = imin(MR, mc - i0);
        for (std::int64_t p = 0; p < kc; ++p) {
            for (std::int64_t i = 0; i < rows; ++i)
                dst[i] = a[(i0 + i) * lda + p];
            for (std::int64_t i = rows; i < MR; ++i)
                dst[i] = 0.0f;
            dst += MR;
        }
    }
}

// Packs B[kc x nc] into column panels of NR: panel-major, then p, then NR columns.
void pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb, float* dst) {
    for (std::int64_t j0 = 0; j0 < nc; j0 += NR) {
        const std::int64_t cols = imin(NR, nc - j0);
        for (std::int64_t p = 0; p < kc; ++p) {
            const float* src = b + p * ldb + j0;
            if (cols == NR) {
                _mm512_store_ps(dst, _mm512_loadu_ps(src));
                _mm512_store_ps(dst + 16, _mm512_loadu_ps(src + 16));
            } else {
                for (std::int64_t j = 0; j < cols; ++j)
                    dst[j] = src[j];
                for (std::int64_t j = cols; j < NR; ++j)
                    dst[j] = 0.0f;
            }
            dst += NR;
        }
    }
}

// acc[12x32] = Ap[12 x kc] * Bp[kc x 32]; written to `out` (row stride 32, 64-byte aligned).
inline void micro_kernel(std::int64_t kc, const float* ap, const float* bp, float* out) {
    __m512 c[MR][2];
    for (int i = 0; i < MR; ++i) {
        c[i][0] = _mm512_setzero_ps();
        c[i][1] = _mm512_setzero_ps();
    }
    for (std::int64_t p = 0; p < kc; ++p) {
        const __m512 b0 = _mm512_load_ps(bp);
        const __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
        for (int i = 0; i < MR; ++i) {
            const __m512 a = _mm512_set1_ps(ap[i]);
            c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
        }
        ap += MR;
        bp += NR;
    }
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
        _mm512_store_ps(out + i * NR, c[i][0]);
        _mm512_store_ps(out + i * NR + 16, c[i][1]);
    }
}

} // namespace

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc,
          float* workspace) {
    float* packed_b = workspace;
    float* packed_a = workspace + kGemm512KC * kGemm512NC;
    alignas(64) float tile[MR * NR];
    if (k == 0) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    const __m512 va = _mm512_set1_ps(alpha);
    const __m512 vb = _mm512_set1_ps(beta);
    for (std::int64_t j0 = 0; j0 < n; j0 += kGemm512NC) {
        const std::int64_t nc = imin(kGemm512NC, n - j0);
        for (std::int64_t p0 = 0; p0 < k; p0 += kGemm512KC) {
            const std::int64_t kc = imin(kGemm512KC, k - p0);
            pack_b(kc, nc, b + p0 * ldb + j0, ldb, packed_b);
            // The first k-block applies beta; later ones accumulate.
            const bool first = p0 == 0;
            for (std::int64_t i0 = 0; i0 < m; i0 += kGemm512MC) {
                const std::int64_t mc = imin(kGemm512MC, m - i0);
                pack_a(mc, kc, a + i0 * lda + p0, lda, packed_a);
                for (std::int64_t jr = 0; jr < nc; jr += NR) {
                    const std::int64_t cols = imin(NR, nc - jr);
                    const float* bp = packed_b + jr * kc;
                    for (std::int64_t ir = 0; ir < mc; ir += MR) {
                        const std::int64_t rows = imin(MR, mc - ir);
                        float* cblk = c + (i0 + ir) * ldc + j0 + jr;
                        // The C rows come from L3 or memory: fetch them while the kc loop
                        // runs (the AVX2 gemm gained ~10 % from this at 2048^3).
                        for (std::int64_t i = 0; i < rows; ++i) {
                            const char* crow = reinterpret_cast<const char*>(cblk + i * ldc);
                            _mm_prefetch(crow, _MM_HINT_T0);
                            _mm_prefetch(crow + 64, _MM_HINT_T0);
                            _mm_prefetch(crow + 4 * (cols - 1), _MM_HINT_T0);
                        }
                        micro_kernel(kc, packed_a + ir * kc, bp, tile);
                        for (std::int64_t i = 0; i < rows; ++i) {
                            float* crow = cblk + i * ldc;
                            const float* trow = tile + i * NR;
                            for (std::int64_t h = 0; h < cols; h += 16) {
                                const __mmask16 mk = tail_mask(imin(16, cols - h));
                                const __m512 t = _mm512_mul_ps(va, _mm512_load_ps(trow + h));
                                __m512 r;
                                if (!first)
                                    r = _mm512_add_ps(t, _mm512_maskz_loadu_ps(mk, crow + h));
                                else if (beta == 0.0f)
                                    r = t;
                                else
                                    r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mk, crow + h), t);
                                _mm512_mask_storeu_ps(crow + h, mk, r);
                            }
                        }
                    }
                }
            }
        }
    }
}

} // namespace switchyard::cpu::avx512
