// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>

// The building blocks of the fast CPU variants. Each works on a slice (a range of
// elements, rows or columns) so the threaded variants can split the work.
namespace switchyard::cpu {

/// flow_sde_step's per-call constants, computed once in double (docs/kernels.md).
struct SdeCoefs {
    double x_coef = 0, v_coef = 0, std_dev = 0, log_norm = 0, inv_two_var = 0;

    static SdeCoefs from(double sigma, double sigma_prev, double sigma_max, double noise_level) {
        SdeCoefs c;
        const double dt = sigma_prev - sigma;
        const double denom_sigma = sigma == 1.0 ? sigma_max : sigma;
        const double s = std::sqrt(sigma / (1.0 - denom_sigma)) * noise_level;
        c.x_coef = 1.0 + s * s / (2.0 * sigma) * dt;
        c.v_coef = (1.0 + s * s * (1.0 - sigma) / (2.0 * sigma)) * dt;
        c.std_dev = s * std::sqrt(-dt);
        c.log_norm = std::log(c.std_dev) + std::log(std::sqrt(2.0 * std::numbers::pi));
        c.inv_two_var = 1.0 / (2.0 * c.std_dev * c.std_dev);
        return c;
    }
};

/// A gemm's blocking (simdvariants.h): MR x NR micro-tiles, MC x KC packed blocks of A, KC x NC
/// packed blocks of B.
struct GemmBlocking {
    std::int64_t mr, nr, mc, kc, nc;
    /// Floats of the packed B block, rounded up to a whole 64-byte line.
    constexpr std::int64_t b_floats() const { return (kc * nc + 15) / 16 * 16; }
    /// Floats of packing workspace one single-threaded gemm call needs (B block, A block).
    constexpr std::size_t workspace_floats() const { return std::size_t(b_floats() + mc * kc); }
};
// Portable variants (plain C++ the compiler vectorises for the baseline ISA).
namespace generic {
void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out);
void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob);
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc);
void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps, float* y);
/// STREAM triad a = b + s*c (the bandwidth probe).
void triad(std::int64_t n, float* a, const float* b, const float* c, float s);
/// The same with non-temporal stores (SSE2, the x86-64 baseline; plain stores elsewhere),
/// so the probe is not beaten by kernels that stream their output past the caches.
void triad_stream(std::int64_t n, float* a, const float* b, const float* c, float s);
/// a = s*b, one read and one write a float (the copy-bandwidth probe) ...
void scale(std::int64_t n, float* a, const float* b, float s);
/// ... and with non-temporal stores (SSE2; plain stores elsewhere).
void scale_stream(std::int64_t n, float* a, const float* b, float s);
/// Sums n floats with several accumulators (the read-bandwidth probe); returns the sum.
double read_probe(std::int64_t n, const float* x);
/// The fp32 peak of the baseline ISA: `iterations` of a multiply and an add on independent
/// 4-float vectors (the FMA probe's stand-in below x86-64-v3); returns the flops done.
double mul_add_probe(std::int64_t iterations);
} // namespace generic

// The SIMD variants: one width-generic source (simdvariants.h) built twice, with the same
// entry points in each namespace.

// AVX2 + FMA (x86-64-v3). Only callable after the runtime check (cpukernels.cpp).
namespace avx2 {
/// 6x16 micro-tiles (12 ymm accumulators).
inline constexpr GemmBlocking kGemm{6, 16, 96, 256, 2048};
/// `stream`: use non-temporal stores (working sets larger than the caches).
void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out, bool stream);
/// `stream`: non-temporal stores for prev (working sets larger than the caches).
void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob, bool stream);
/// `workspace` holds kGemm.workspace_floats() floats, 64-byte aligned.
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc,
          float* workspace);
/// gemm's pieces, for the threaded driver (one packed B shared by all threads):
/// packs A[mc x kc] (row stride lda) into MR-row panels at `dst` (mc rounded up to MR,
/// times kc floats) ...
void gemm_pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda, float* dst);
/// ... packs B[kc x nc] (row stride ldb) into NR-column panels at `dst` (64-byte aligned;
/// panel q starts at dst + q * NR * kc, so disjoint panel ranges can be packed apart) ...
void gemm_pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb, float* dst);
/// ... and C[mc x nc] (row stride ldc) = alpha * A * B + cb * C from them (cb == 0: C is
/// not read).
void gemm_macro(std::int64_t mc, std::int64_t nc, std::int64_t kc, const float* packed_a,
                const float* packed_b, float* c, std::int64_t ldc, float alpha, float cb);
/// `stream`: non-temporal stores for y (working sets larger than the caches).
void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps, float* y,
              bool stream);
/// Runs `iterations` rounds of independent FMAs; returns the flops done (the peak probe).
double fma_probe(std::int64_t iterations);
/// Sums n floats with full-width loads: the read-bandwidth probe.
double read_probe(std::int64_t n, const float* x);
/// out = s*x with full-width loads and stores (`stream`: non-temporal): the copy probe, in
/// one lane or (`lanes` 2) two halves side by side.
void scale(std::int64_t n, const float* x, float s, float* out, bool stream, int lanes);
} // namespace avx2

// AVX-512F/BW/VL + FMA (x86-64-v4). Only callable after the runtime check (cpukernels.cpp).
namespace avx512 {
/// 12x32 micro-tiles (24 zmm accumulators; 14x32 measured 1-5 % slower at 2048^3).
inline constexpr GemmBlocking kGemm{12, 32, 336, 512, 2048};
/// `stream`: use non-temporal stores (working sets larger than the caches).
void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out, bool stream);
/// `stream`: non-temporal stores for prev (working sets larger than the caches).
void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob, bool stream);
/// `workspace` holds kGemm.workspace_floats() floats, 64-byte aligned.
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc,
          float* workspace);
/// gemm's pieces, for the threaded driver (one packed B shared by all threads):
/// packs A[mc x kc] (row stride lda) into MR-row panels at `dst` (mc rounded up to MR,
/// times kc floats) ...
void gemm_pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda, float* dst);
/// ... packs B[kc x nc] (row stride ldb) into NR-column panels at `dst` (64-byte aligned;
/// panel q starts at dst + q * NR * kc, so disjoint panel ranges can be packed apart) ...
void gemm_pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb, float* dst);
/// ... and C[mc x nc] (row stride ldc) = alpha * A * B + cb * C from them (cb == 0: C is
/// not read).
void gemm_macro(std::int64_t mc, std::int64_t nc, std::int64_t kc, const float* packed_a,
                const float* packed_b, float* c, std::int64_t ldc, float alpha, float cb);
/// `stream`: non-temporal stores for y (working sets larger than the caches).
void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps, float* y,
              bool stream);
/// Runs `iterations` rounds of independent FMAs; returns the flops done (the peak probe).
double fma_probe(std::int64_t iterations);
/// Sums n floats with full-width loads: the read-bandwidth probe.
double read_probe(std::int64_t n, const float* x);
/// out = s*x with full-width loads and stores (`stream`: non-temporal): the copy probe, in
/// one lane or (`lanes` 2) two halves side by side.
void scale(std::int64_t n, const float* x, float s, float* out, bool stream, int lanes);
} // namespace avx512

} // namespace switchyard::cpu
