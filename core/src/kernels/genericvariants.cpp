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

void scale(std::int64_t n, float* __restrict a, const float* __restrict b, float s) {
    for (std::int64_t i = 0; i < n; ++i)
        a[i] = s * b[i];
}

void scale_stream(std::int64_t n, float* __restrict a, const float* __restrict b, float s) {
#if defined(__SSE2__)
    std::int64_t i = 0;
    for (; i < n && (reinterpret_cast<std::uintptr_t>(a + i) & 15u) != 0; ++i)
        a[i] = s * b[i];
    const __m128 vs = _mm_set1_ps(s);
    for (; i + 4 <= n; i += 4)
        _mm_stream_ps(a + i, _mm_mul_ps(vs, _mm_loadu_ps(b + i)));
    for (; i < n; ++i)
        a[i] = s * b[i];
    _mm_sfence();
#else
    scale(n, a, b, s);
#endif
}

namespace {
// Four floats: the widest vector every x86-64 (SSE2) and aarch64 (NEON) CPU has. The probes
// below hold their accumulators in such vectors, so the compiler keeps each in a register
// and they run as independent chains whatever it would have made of a float array.
typedef float F4 __attribute__((vector_size(16)));
inline F4 load4(const float* p) {
    F4 v;
    __builtin_memcpy(&v, p, sizeof v); // an unaligned vector load
    return v;
}
inline double sum4(F4 v) {
    return double(v[0]) + double(v[1]) + double(v[2]) + double(v[3]);
}
} // namespace

double read_probe(std::int64_t n, const float* x) {
    // Eight chains of vector adds: the loads (two a cycle), not the add latency (3-4
    // cycles), set the pace. Two chains, as a float[8] compiled to, read L1 at a third of
    // the loads' rate (35 GB/s against triad's 126 on Zen 3 under x86-64-v2).
    F4 s[8] = {};
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 8; ++l)
            s[l] += load4(x + i + 4 * l);
    double sum = 0;
    for (int l = 0; l < 8; ++l)
        sum += sum4(s[l]);
    for (; i < n; ++i)
        sum += double(x[i]);
    return sum;
}

double mul_add_probe(std::int64_t iterations) {
    // Twelve chains of a multiply and an add (fused where the baseline has FMA): enough in
    // flight to fill two multiply pipes over a 6-8 cycle chain.
    constexpr int N = 12;
    F4 acc[N];
    for (int i = 0; i < N; ++i)
        acc[i] = F4{} + float(i);
    const F4 m = F4{} + 0.999999f, a = F4{} + 1e-7f;
    for (std::int64_t it = 0; it < iterations; ++it)
        for (int i = 0; i < N; ++i)
            acc[i] = acc[i] * m + a;
    F4 sum = acc[0];
    for (int i = 1; i < N; ++i)
        sum += acc[i];
    volatile double sink = sum4(sum); // observable, so the loop stays
    (void)sink;
    return double(iterations) * N * 4 * 2.0;
}

} // namespace switchyard::cpu::generic
