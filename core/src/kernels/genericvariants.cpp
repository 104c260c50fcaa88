// SPDX-License-Identifier: MIT
#include "kernels/cpuvariants.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstdint>

namespace switchyard::cpu::generic {

void flow_match(std::int64_t n, const float* __restrict x, const float* __restrict v, float dt,
                float* __restrict out) {
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = x[i] + dt * v[i];
}

void flow_sde(std::int64_t b, std::int64_t d, const float* __restrict x, const float* __restrict v,
              const float* __restrict noise, const SdeCoefs& c, float* __restrict prev,
              float* __restrict log_prob) {
    const float xc = float(c.x_coef), vc = float(c.v_coef), sd = float(c.std_dev);
    for (std::int64_t r = 0; r < b; ++r) {
        const std::int64_t base = r * d;
        // Partial sums in float over short blocks, the blocks summed in double.
        double sumsq = 0.0;
        for (std::int64_t i0 = 0; i0 < d; i0 += 256) {
            const std::int64_t i1 = std::min(d, i0 + 256);
            float part = 0.0f;
            for (std::int64_t i = i0; i < i1; ++i) {
                const float diff = sd * noise[base + i];
                prev[base + i] = x[base + i] * xc + v[base + i] * vc + diff;
                part += diff * diff;
            }
            sumsq += part;
        }
        log_prob[r] = d > 0 ? float(-sumsq * c.inv_two_var / double(d) - c.log_norm) : 0.0f;
    }
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc) {
    // Scale C by beta once, then accumulate alpha*A*B in k- and j-blocks so a block of B
    // stays in cache; the inner loop is a contiguous axpy the compiler vectorises.
    for (std::int64_t i = 0; i < m; ++i) {
        float* crow = c + i * ldc;
        if (beta == 0.0f)
            std::fill(crow, crow + n, 0.0f);
        else if (beta != 1.0f)
            for (std::int64_t j = 0; j < n; ++j)
                crow[j] *= beta;
    }
    constexpr std::int64_t KB = 128, JB = 512;
    for (std::int64_t p0 = 0; p0 < k; p0 += KB) {
        const std::int64_t p1 = std::min(k, p0 + KB);
        for (std::int64_t j0 = 0; j0 < n; j0 += JB) {
            const std::int64_t j1 = std::min(n, j0 + JB);
            for (std::int64_t i = 0; i < m; ++i) {
                float* __restrict crow = c + i * ldc;
                for (std::int64_t p = p0; p < p1; ++p) {
                    const float aip = alpha * a[i * lda + p];
                    const float* __restrict brow = b + p * ldb;
                    for (std::int64_t j = j0; j < j1; ++j)
                        crow[j] += aip * brow[j];
                }
            }
        }
    }
}

void rms_norm(std::int64_t b, std::int64_t d, const float* __restrict x, const float* __restrict w,
              double eps, float* __restrict y) {
    for (std::int64_t r = 0; r < b; ++r) {
        const float* xr = x + r * d;
        float* yr = y + r * d;
        double sumsq = 0.0; // double: x*x overflows float for |x| > 1.8e19
        for (std::int64_t i = 0; i < d; ++i)
            sumsq += double(xr[i]) * double(xr[i]);
        const float inv = float(1.0 / std::sqrt((d > 0 ? sumsq / double(d) : 0.0) + eps));
        for (std::int64_t i = 0; i < d; ++i)
            yr[i] = (xr[i] * inv) * w[i];
    }
}

void triad(std::int64_t n, float* __restrict a, const float* __restrict b,
           const float* __restrict c, float s) {
    for (std::int64_t i = 0; i < n; ++i)
        a[i] = b[i] + s * c[i];
}

void triad_stream(std::int64_t n, float* __restrict a, const float* __restrict b,
                  const float* __restrict c, float s) {
#if defined(__SSE2__)
    std::int64_t i = 0;
    for (; i < n && (reinterpret_cast<std::uintptr_t>(a + i) & 15u) != 0; ++i)
        a[i] = b[i] + s * c[i];
    const __m128 vs = _mm_set1_ps(s);
    for (; i + 4 <= n; i += 4)
        _mm_stream_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(vs, _mm_loadu_ps(c + i))));
    for (; i < n; ++i)
        a[i] = b[i] + s * c[i];
    _mm_sfence();
#else
    triad(n, a, b, c, s);
#endif
}

double read_probe(std::int64_t n, const float* x) {
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l)
            s[l] += x[i + l];
    double sum = 0;
    for (int l = 0; l < 8; ++l)
        sum += double(s[l]);
    for (; i < n; ++i)
        sum += double(x[i]);
    return sum;
}

} // namespace switchyard::cpu::generic
