// SPDX-License-Identifier: MIT
#pragma once
// The width-generic bodies of the SIMD CPU variants. Included only by avx2variants.cpp and
// avx512variants.cpp, each compiled with its own ISA flags (core/CMakeLists.txt), each with
// its own vector-traits struct `V`:
//
//   reg, dreg, mask             float vector, double vector (half as many lanes), tail mask
//   W, kAlign                   floats per reg, bytes an aligned load/store needs
//   zero, set1, load, loadu, store, storeu, stream, add, mul, fma
//   tail(rem), maskload(m, p), maskstore(p, m, v)   the first rem (0..W) lanes; the
//                               masked-off lanes load as 0
//   dzero, acc_sq(v, lo, hi), dadd, dsum            squares of v summed in double
//   acc_sum(v, lo, hi)          the lanes of v added to the double accumulators
//   hsum(reg)                   the lanes summed in double
//   kGemm                       the gemm blocking (cpuvariants.h's GemmBlocking)
//   kGemmSteps                  k-steps per round of the gemm micro-kernel's loop
//   kRmsAheadHint               the prefetch hint of rms_norm's stream (rms_stream_fused)
//   kFmaAccs                    independent accumulators of the FMA probe
//
// Everything here has internal linkage (the anonymous namespace), and the traits differ per
// file: a copy built for AVX-512 can never be picked by the linker for an AVX2 caller. No
// std:: templates here for the same reason.
#include "kernels/cpuvariants.h"

#include <immintrin.h>

#include <cstdint>
#include <initializer_list>

namespace switchyard::cpu::simd {
namespace {

inline std::int64_t imin(std::int64_t a, std::int64_t b) {
    return a < b ? a : b;
}

// 4K aliasing: a load whose address matches an earlier store's in its low 12 bits waits for
// it. A forward loop that stores out[i] and then loads the next vectors of an input that
// `out` sits just past (modulo 4 KiB) stalls on every such load (Zen 4, 64-byte vectors:
// 0.52-0.64 of the 32-byte ones at 64 bytes past); backwards, each load comes before the
// stores it could match, as memmove does. True when the loop should run backwards: `out`
// is under 1 KiB past one of `ins` and under 1 KiB before none of them.
inline bool store_backwards(const float* out, std::initializer_list<const float*> ins) {
    bool past = false;
    for (const float* in : ins) {
        const auto d =
            (reinterpret_cast<std::uintptr_t>(out) - reinterpret_cast<std::uintptr_t>(in)) & 4095;
        if (d > 0 && d < 1024)
            past = true;
        else if (d > 4096 - 1024)
            return false;
    }
    return past;
}

// Floats to store plainly before `p` reaches a non-temporal store's alignment (V::kAlign):
// 0..W-1, or -1 when `p` is not even float-aligned (no prologue can align it).
template <class V> std::int64_t floats_to_align(const float* p) {
    const auto mis = reinterpret_cast<std::uintptr_t>(p) & (V::kAlign - 1);
    if (mis % sizeof(float))
        return -1;
    return mis ? std::int64_t((V::kAlign - mis) / sizeof(float)) : 0;
}

template <class V>
void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out, bool stream) {
    constexpr std::int64_t W = V::W;
    const auto vdt = V::set1(dt);
    std::int64_t i = 0;
    if (stream) {
        // Scalar prologue up to an aligned output, then non-temporal stores.
        while (i < n && (reinterpret_cast<std::uintptr_t>(out + i) & (V::kAlign - 1))) {
            out[i] = __builtin_fmaf(dt, v[i], x[i]);
            ++i;
        }
        for (; i + 4 * W <= n; i += 4 * W)
            for (std::int64_t u = 0; u < 4 * W; u += W)
                V::stream(out + i + u, V::fma(vdt, V::loadu(v + i + u), V::loadu(x + i + u)));
        _mm_sfence();
    } else if (store_backwards(out, {x, v})) {
        std::int64_t j = n / W * W;
        if (j < n) {
            const auto m = V::tail(n - j);
            V::maskstore(out + j, m, V::fma(vdt, V::maskload(m, v + j), V::maskload(m, x + j)));
        }
        for (; j >= 4 * W; j -= 4 * W)
            for (std::int64_t u = 4 * W; (u -= W) >= 0;)
                V::storeu(out + j - 4 * W + u,
                          V::fma(vdt, V::loadu(v + j - 4 * W + u), V::loadu(x + j - 4 * W + u)));
        for (; j >= W; j -= W)
            V::storeu(out + j - W, V::fma(vdt, V::loadu(v + j - W), V::loadu(x + j - W)));
        return;
    } else {
        for (; i + 4 * W <= n; i += 4 * W)
            for (std::int64_t u = 0; u < 4 * W; u += W)
                V::storeu(out + i + u, V::fma(vdt, V::loadu(v + i + u), V::loadu(x + i + u)));
    }
    for (; i + W <= n; i += W)
        V::storeu(out + i, V::fma(vdt, V::loadu(v + i), V::loadu(x + i)));
    if (i < n) {
        const auto m = V::tail(n - i);
        V::maskstore(out + i, m, V::fma(vdt, V::maskload(m, v + i), V::maskload(m, x + i)));
    }
}

// `stream`: non-temporal stores for prev (a row whose prev is not aligned stores its first
// floats plainly, up to the alignment).
template <class V>
void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v, const float* noise,
              const SdeCoefs& c, float* prev, float* log_prob, bool stream) {
    constexpr std::int64_t W = V::W;
    const auto xc = V::set1(float(c.x_coef));
    const auto vc = V::set1(float(c.v_coef));
    const auto sd = V::set1(float(c.std_dev));
    for (std::int64_t r = 0; r < b; ++r) {
        const std::int64_t base = r * d;
        const float* xr = x + base;
        const float* vr = v + base;
        const float* nr = noise + base;
        float* pr = prev + base;
        auto lo = V::dzero(), hi = V::dzero();
        auto step = [&](typename V::reg xv, typename V::reg vv, typename V::reg nv) {
            const auto diff = V::mul(sd, nv);
            const auto mean = V::fma(vv, vc, V::mul(xv, xc));
            V::acc_sq(diff, lo, hi);
            return V::add(mean, diff);
        };
        std::int64_t i = 0;
        if (!stream && store_backwards(pr, {xr, vr, nr})) {
            // prev just past an input modulo 4 KiB (store_backwards): the row backwards.
            std::int64_t j = d / W * W;
            if (j < d) {
                const auto m = V::tail(d - j);
                V::maskstore(
                    pr + j, m,
                    step(V::maskload(m, xr + j), V::maskload(m, vr + j), V::maskload(m, nr + j)));
            }
            for (; j >= W; j -= W)
                V::storeu(pr + j - W,
                          step(V::loadu(xr + j - W), V::loadu(vr + j - W), V::loadu(nr + j - W)));
            i = d;
        }
        if (const std::int64_t h = stream ? floats_to_align<V>(pr) : -1; h >= 0 && h + W <= d) {
            // Up to an aligned prev plainly (masked), then non-temporal stores.
            if (h > 0) {
                const auto m = V::tail(h);
                V::maskstore(pr, m,
                             step(V::maskload(m, xr), V::maskload(m, vr), V::maskload(m, nr)));
            }
            for (i = h; i + W <= d; i += W)
                V::stream(pr + i, step(V::loadu(xr + i), V::loadu(vr + i), V::loadu(nr + i)));
        }
        for (; i + W <= d; i += W)
            V::storeu(pr + i, step(V::loadu(xr + i), V::loadu(vr + i), V::loadu(nr + i)));
        if (i < d) { // (i == d after the backward form)
            const auto m = V::tail(d - i);
            // Masked-off lanes load 0: their diff is 0 and adds nothing to the sum.
            V::maskstore(
                pr + i, m,
                step(V::maskload(m, xr + i), V::maskload(m, vr + i), V::maskload(m, nr + i)));
        }
        const double sumsq = V::dsum(V::dadd(lo, hi));
        log_prob[r] = d > 0 ? float(-sumsq * c.inv_two_var / double(d) - c.log_norm) : 0.0f;
    }
    if (stream)
        _mm_sfence();
}

// The squares of x[0, d) summed in double.
template <class V> double sum_squares_double(std::int64_t d, const float* x) {
    constexpr std::int64_t W = V::W;
    auto a0 = V::dzero(), a1 = V::dzero(), a2 = V::dzero(), a3 = V::dzero();
    std::int64_t i = 0;
    for (; i + 2 * W <= d; i += 2 * W) {
        V::acc_sq(V::loadu(x + i), a0, a1);
        V::acc_sq(V::loadu(x + i + W), a2, a3);
    }
    for (; i + W <= d; i += W)
        V::acc_sq(V::loadu(x + i), a0, a1);
    if (i < d)
        V::acc_sq(V::maskload(V::tail(d - i), x + i), a0, a1);
    return V::dsum(V::dadd(V::dadd(a0, a1), V::dadd(a2, a3)));
}

struct NoStep {
    void operator()(std::int64_t) const {}
};

// The end of rms_row_sum's row from x[i] on (fewer than 4W floats), added to the blocks
// sums lo + hi; the row's sum, or that of sum_squares_double where the float sums may have
// overflowed or lost their digits to underflow.
template <class V>
double rms_row_finish(std::int64_t d, const float* x, std::int64_t i, typename V::dreg lo,
                      typename V::dreg hi) {
    constexpr std::int64_t W = V::W;
    auto s0 = V::zero();
    for (; i + W <= d; i += W) {
        const auto x0 = V::loadu(x + i);
        s0 = V::fma(x0, x0, s0);
    }
    if (i < d) {
        const auto x0 = V::maskload(V::tail(d - i), x + i);
        s0 = V::fma(x0, x0, s0);
    }
    V::acc_sum(s0, lo, hi);
    const double sumsq = V::dsum(V::dadd(lo, hi));
    if (!(sumsq < 1e37) || sumsq < 1e-30 * double(d))
        return sum_squares_double<V>(d, x);
    return sumsq;
}

// The squares of x[i, i + 2W) added to s0 (the first register) and s1 (the second).
template <class V>
void rms_sq2(const float* x, std::int64_t i, typename V::reg& s0, typename V::reg& s1) {
    const auto x0 = V::loadu(x + i), x1 = V::loadu(x + i + V::W);
    s0 = V::fma(x0, x0, s0);
    s1 = V::fma(x1, x1, s1);
}

// The squares of the row x[0, d), summed in float over blocks of 64 per lane (4
// accumulators), the blocks in double; a row whose float sum overflows (|x| > ~1.8e19) or
// may have lost its digits to underflow is summed again with every square in double (it
// is in cache; the result is the reference's, NaN included). `step(i)`: other work
// interleaved with the sum, called for each i = 0, 2W, 4W, ... below d / (4W) * 4W, right
// after x[i, i + 2W) was summed (rms_stream_fused); the sum is the same with or without it.
template <class V, class Step = NoStep>
double rms_row_sum(std::int64_t d, const float* x, Step step = {}) {
    constexpr std::int64_t W = V::W;
    constexpr std::int64_t kBlock = 64 * W;
    auto lo = V::dzero(), hi = V::dzero();
    std::int64_t i = 0;
    while (i + 4 * W <= d) {
        const std::int64_t end = imin(d, i + kBlock);
        auto s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
        for (; i + 4 * W <= end; i += 4 * W) {
            rms_sq2<V>(x, i, s0, s1);
            step(i);
            rms_sq2<V>(x, i + 2 * W, s2, s3);
            step(i + 2 * W);
        }
        V::acc_sum(V::add(V::add(s0, s1), V::add(s2, s3)), lo, hi);
    }
    return rms_row_finish<V>(d, x, i, lo, hi);
}

// rms_row_sum of the rows xa and xb (d floats each) in lockstep: each row's blocks and
// accumulators are those rms_row_sum gives it, so are its sums (*sa, *sb). `step(i)` as
// there, after x[i, i + 2W) of both rows was summed.
template <class V, class Step>
void rms_row_sum2(std::int64_t d, const float* xa, const float* xb, double* sa, double* sb,
                  Step step) {
    constexpr std::int64_t W = V::W;
    constexpr std::int64_t kBlock = 64 * W;
    auto alo = V::dzero(), ahi = V::dzero(), blo = V::dzero(), bhi = V::dzero();
    std::int64_t i = 0;
    while (i + 4 * W <= d) {
        const std::int64_t end = imin(d, i + kBlock);
        auto a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
        auto b0 = V::zero(), b1 = V::zero(), b2 = V::zero(), b3 = V::zero();
        for (; i + 4 * W <= end; i += 4 * W) {
            rms_sq2<V>(xa, i, a0, a1);
            rms_sq2<V>(xb, i, b0, b1);
            step(i);
            rms_sq2<V>(xa, i + 2 * W, a2, a3);
            rms_sq2<V>(xb, i + 2 * W, b2, b3);
            step(i + 2 * W);
        }
        V::acc_sum(V::add(V::add(a0, a1), V::add(a2, a3)), alo, ahi);
        V::acc_sum(V::add(V::add(b0, b1), V::add(b2, b3)), blo, bhi);
    }
    *sa = rms_row_finish<V>(d, xa, i, alo, ahi);
    *sb = rms_row_finish<V>(d, xb, i, blo, bhi);
}

// y[0, d) = x * inv * w; `nt`: non-temporal stores (y aligned).
template <class V>
void rms_row_scale(std::int64_t d, const float* x, const float* w, typename V::reg inv, float* y,
                   bool nt) {
    constexpr std::int64_t W = V::W;
    std::int64_t i = 0;
    if (nt) {
        for (; i + 32 <= d; i += 32)
            for (std::int64_t u = 0; u < 32; u += W)
                V::stream(y + i + u, V::mul(V::mul(V::loadu(x + i + u), inv), V::loadu(w + i + u)));
    } else {
        // y just past x or w modulo 4 KiB (store_backwards): on Zen 4 the v4 cell fell to
        // 0.52 of v3 with y 64 bytes past x, going forwards.
        if (store_backwards(y, {x, w})) {
            std::int64_t j = d / W * W;
            if (j < d) {
                const auto m = V::tail(d - j);
                V::maskstore(y + j, m,
                             V::mul(V::mul(V::maskload(m, x + j), inv), V::maskload(m, w + j)));
            }
            for (; j >= 4 * W; j -= 4 * W)
                for (std::int64_t u = 4 * W; (u -= W) >= 0;) {
                    const std::int64_t k = j - 4 * W + u;
                    V::storeu(y + k, V::mul(V::mul(V::loadu(x + k), inv), V::loadu(w + k)));
                }
            for (; j >= W; j -= W)
                V::storeu(y + j - W, V::mul(V::mul(V::loadu(x + j - W), inv), V::loadu(w + j - W)));
            return;
        }
        for (; i + 32 <= d; i += 32)
            for (std::int64_t u = 0; u < 32; u += W)
                V::storeu(y + i + u, V::mul(V::mul(V::loadu(x + i + u), inv), V::loadu(w + i + u)));
    }
    for (; i + W <= d; i += W)
        V::storeu(y + i, V::mul(V::mul(V::loadu(x + i), inv), V::loadu(w + i)));
    if (i < d) {
        const auto m = V::tail(d - i);
        V::maskstore(y + i, m, V::mul(V::mul(V::maskload(m, x + i), inv), V::maskload(m, w + i)));
    }
}

// 1 / sqrt(mean of the squares + eps), in every lane.
template <class V> typename V::reg rms_inv(double sumsq, std::int64_t d, double eps) {
    const double mean = d > 0 ? sumsq / double(d) : 0.0;
    return V::set1(float(1.0 / std::sqrt(mean + eps)));
}

// How far ahead of the row it sums rms_norm's stream prefetches (with V::kRmsAheadHint).
inline constexpr std::int64_t kRmsAheadBytes = 2048;

// rms_norm from memory, one pass per row: row r + 1 is summed while row r, which the
// previous pass brought into the caches, is scaled and stored non-temporally, 2W floats of
// each in turn, and the memory ahead of the sum is prefetched kRmsAheadBytes on. Reads and
// writes then share the memory at the finest grain: the stores never run far ahead of the
// reads, and the prefetches keep the reads in flight. A scaling pass of its own from cache
// runs far faster than memory drains its stores; once the store queue is full nothing behind
// the next store is dispatched, the next row's prefetches among it, so the reads waited for
// the writes (16 KiB rows: 0.6 of dram.triad.1t on Zen 4, whatever the prefetch distance,
// hint or split; a pass paced by a multiply chain near the memory's rate, which this
// replaces, reached 0.67-0.88 there depending on the host).
// Interleaved scratch runs, one thread, identical output, against that paced split form:
//  - Zen 3, 256 bits, T0 hint: 1.15-1.25x at 4096x4096 and 10922x1024, 0.85-0.9 of a
//    triad's GB/s; without the prefetch this loop was no faster than the split form;
//  - Zen 5 (an Oxide Turin guest), 512 bits: 1.06x at 4096x4096 and 1.07x at 10922x1024
//    with the NTA hint (0.71-0.74 and 0.87-0.93 of a triad measured beside it, three runs);
//    T0 gave 1.03-1.06x, T1 0.95-1.03x, 1 KiB ahead 1.0x, 4 KiB (T1) 0.95-1.07x. A pass
//    that only scales (no sum, same prefetch) reached 0.85 and 1.05 there: the bound of
//    this access pattern on that host.
// A row whose output cannot be aligned is scaled plainly after the next row is summed. The
// sums are rms_row_sum's, as in cache.
template <class V>
void rms_stream_fused(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,
                      float* y) {
    constexpr std::int64_t W = V::W;
    if (b <= 0)
        return;
    const std::int64_t x_bytes = b * d * std::int64_t(sizeof(float));
    double sumsq = rms_row_sum<V>(d, x);
    for (std::int64_t r = 0; r < b; ++r) {
        const float* xr = x + r * d;
        const float* xn = r + 1 < b ? xr + d : nullptr;
        float* yr = y + r * d;
        const auto inv = rms_inv<V>(sumsq, d, eps);
        const std::int64_t h = floats_to_align<V>(yr);
        if (h < 0 || h + W > d) { // no aligned output: plain stores
            if (xn)
                sumsq = rms_row_sum<V>(d, xn);
            rms_row_scale<V>(d, xr, w, inv, yr, false);
            continue;
        }
        if (h > 0) // less than a register: its masked tail
            rms_row_scale<V>(h, xr, w, inv, yr, false);
        std::int64_t done = h; // floats of row r stored
        if (xn) {
            const float* xs = xr + h;
            const float* ws = w + h;
            float* ys = yr + h;
            const std::int64_t n = d - h;
            const std::int64_t xn_bytes = (r + 1) * d * std::int64_t(sizeof(float));
            sumsq = rms_row_sum<V>(d, xn, [=](std::int64_t i) {
                // Bytes past x's start, compared before a pointer is formed (within x only).
                const std::int64_t ahead =
                    xn_bytes + i * std::int64_t(sizeof(float)) + kRmsAheadBytes;
                for (std::int64_t u = 0; u < 2 * W * std::int64_t(sizeof(float)); u += 64)
                    if (ahead + u < x_bytes)
                        _mm_prefetch(reinterpret_cast<const char*>(x) + ahead + u,
                                     V::kRmsAheadHint);
                if (i + 2 * W <= n)
                    for (std::int64_t u = 0; u < 2 * W; u += W)
                        V::stream(ys + i + u,
                                  V::mul(V::mul(V::loadu(xs + i + u), inv), V::loadu(ws + i + u)));
            });
            done += imin(d / (4 * W) * (4 * W), n / (2 * W) * (2 * W));
        }
        rms_row_scale<V>(d - done, xr + done, w + done, inv, yr + done, true);
    }
    _mm_sfence();
}

// rms_stream_fused in two lanes, side by side: the rows [0, h) and [h, 2h) (h = b / 2), row
// r + 1 of both summed (rms_row_sum2) while row r of both is scaled and stored, 2W floats of
// each in turn, and memory prefetched kRmsAheadBytes ahead of both sums; an odd b's last row
// after them. One core's reads from memory are bound by the misses it keeps in flight, and
// two streams keep more of them in flight than one (as for the read probe's quarters):
// interleaved scratch runs, one thread, Zen 5 (a 2-vCPU Turin guest), medians of 30 (in
// a random order each round), at 4096x4096, 16384x1024 and 1024x16384: 1.13-1.16x the
// one-lane pass at 512 bits (0.97-1.20x over four such runs; at 256 bits 1.12-1.20x), and
// 0.86-0.96 of the copy probe's own kernel (scale) beside them. Summing each row's two
// halves side by side instead (one lane, two streams, half the rows in cache) was 0.77-0.96x
// this. Every output row is aligned here (y aligned, d a multiple of W, at least 4W:
// rms_norm checks).
template <class V>
void rms_stream_pair(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,
                     float* y) {
    constexpr std::int64_t W = V::W;
    constexpr auto kFloat = std::int64_t(sizeof(float));
    const std::int64_t h = b / 2;
    const std::int64_t lane = h * d;                  // floats from a row to its lane-B twin
    const std::int64_t fused = d / (4 * W) * (4 * W); // floats of a row rms_row_sum2's steps store
    const std::int64_t x_bytes = b * d * kFloat;
    double sa = rms_row_sum<V>(d, x), sb = rms_row_sum<V>(d, x + lane);
    for (std::int64_t r = 0; r < h; ++r) {
        const float* xa = x + r * d;
        const float* xb = xa + lane;
        float* ya = y + r * d;
        float* yb = ya + lane;
        const auto inva = rms_inv<V>(sa, d, eps), invb = rms_inv<V>(sb, d, eps);
        std::int64_t done = 0;
        if (r + 1 < h) {
            // Bytes past x's start, compared before a pointer is formed (within x only).
            const std::int64_t next = (r + 1) * d * kFloat + kRmsAheadBytes;
            rms_row_sum2<V>(d, xa + d, xb + d, &sa, &sb, [=](std::int64_t i) {
                const std::int64_t ahead = next + i * kFloat;
                for (std::int64_t u = 0; u < 2 * W * kFloat; u += 64) {
                    if (ahead + u < x_bytes)
                        _mm_prefetch(reinterpret_cast<const char*>(x) + ahead + u,
                                     V::kRmsAheadHint);
                    if (ahead + lane * kFloat + u < x_bytes)
                        _mm_prefetch(reinterpret_cast<const char*>(x) + ahead + lane * kFloat + u,
                                     V::kRmsAheadHint);
                }
                for (std::int64_t u = 0; u < 2 * W; u += W) {
                    V::stream(ya + i + u,
                              V::mul(V::mul(V::loadu(xa + i + u), inva), V::loadu(w + i + u)));
                    V::stream(yb + i + u,
                              V::mul(V::mul(V::loadu(xb + i + u), invb), V::loadu(w + i + u)));
                }
            });
            done = fused;
        }
        rms_row_scale<V>(d - done, xa + done, w + done, inva, ya + done, true);
        rms_row_scale<V>(d - done, xb + done, w + done, invb, yb + done, true);
    }
    if (b % 2) {
        const float* xr = x + (b - 1) * d;
        const auto inv = rms_inv<V>(rms_row_sum<V>(d, xr), d, eps);
        rms_row_scale<V>(d, xr, w, inv, y + (b - 1) * d, true);
    }
    _mm_sfence();
}

// Row by row: the sum of squares reads a row into the caches, the scaling pass reads it
// from there.
//  - In cache (!stream): the sum of row r + 1 runs before the scaling of row r, so a
//    row's reduction, square root and division (tens of cycles in one dependency chain)
//    overlap the scaling of the previous row instead of stalling it (+10-15 % at 64x1024
//    on Zen 4).
//  - From memory (stream): rms_stream_fused, the output stored non-temporally (no
//    read-for-ownership of y). A std::vector's y (16-byte aligned) stored every row plainly
//    before: 11 GB/s at 4096x4096 on Zen 3, where the aligned arena's reached 19.6.
template <class V>
void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps, float* y,
              bool stream) {
    if (stream) {
        if (b >= 2 && d >= 4 * V::W && d % V::W == 0 && floats_to_align<V>(y) == 0)
            rms_stream_pair<V>(b, d, x, w, eps, y);
        else
            rms_stream_fused<V>(b, d, x, w, eps, y);
        return;
    }
    if (b <= 0)
        return;
    double sumsq = rms_row_sum<V>(d, x);
    for (std::int64_t r = 0; r < b; ++r) {
        const auto inv = rms_inv<V>(sumsq, d, eps);
        if (r + 1 < b)
            sumsq = rms_row_sum<V>(d, x + (r + 1) * d);
        rms_row_scale<V>(d, x + r * d, w, inv, y + r * d, false);
    }
}

template <class V> double fma_probe(std::int64_t iterations) {
    // Independent accumulators hide the FMA latency (4 cycles, 2 ports).
    constexpr int N = V::kFmaAccs;
    typename V::reg acc[N];
    for (int i = 0; i < N; ++i)
        acc[i] = V::set1(float(i));
    const auto m = V::set1(0.999999f), a = V::set1(1e-7f);
    for (std::int64_t it = 0; it < iterations; ++it)
        for (int i = 0; i < N; ++i)
            acc[i] = V::fma(acc[i], m, a);
    auto sum = acc[0];
    for (int i = 1; i < N; ++i)
        sum = V::add(sum, acc[i]);
    // Keep the result observable so the loop is not removed.
    volatile double sink = V::hsum(sum);
    (void)sink;
    return double(iterations) * double(N) * double(V::W) * 2.0;
}

// out = s*x, 4W floats a step (`stream`: non-temporal stores after a scalar prologue up to
// an aligned output): the copy probe, one read stream and one write stream; with `lanes`
// 2, the halves [0, h) and [h, 2h) side by side, 4W floats of each in turn (two read
// streams and two write streams, as rms_stream_pair keeps: one core keeps more misses in
// flight over two), then the rest.
template <class V>
void scale(std::int64_t n, const float* x, float s, float* out, bool stream, int lanes) {
    constexpr std::int64_t W = V::W;
    const auto vs = V::set1(s);
    std::int64_t i = 0;
    if (stream)
        while (i < n && (reinterpret_cast<std::uintptr_t>(out + i) & (V::kAlign - 1))) {
            out[i] = s * x[i];
            ++i;
        }
    auto store = [&](float* p, typename V::reg v) {
        if (stream)
            V::stream(p, v);
        else
            V::storeu(p, v);
    };
    if (lanes == 2) {
        const std::int64_t h = (n - i) / 2 / (4 * W) * (4 * W); // keeps out + h aligned
        const float* xb = x + h;
        float* ob = out + h;
        for (const std::int64_t end = i + h; i < end; i += 4 * W)
            for (std::int64_t u = 0; u < 4 * W; u += W) {
                store(out + i + u, V::mul(vs, V::loadu(x + i + u)));
                store(ob + i + u, V::mul(vs, V::loadu(xb + i + u)));
            }
        i += h;
    }
    for (; i + 4 * W <= n; i += 4 * W)
        for (std::int64_t u = 0; u < 4 * W; u += W)
            store(out + i + u, V::mul(vs, V::loadu(x + i + u)));
    if (stream)
        _mm_sfence();
    for (; i < n; ++i)
        out[i] = s * x[i];
}

template <class V> double read_probe(std::int64_t n, const float* x) {
    // Four streams (the quarters), 8 accumulators (two per stream): neither the add latency
    // nor the prefetch of one stream limits it. One core's reads from memory are bound by
    // its outstanding misses, which more streams keep busier (+10-15 % from DRAM over two
    // streams); in L1 the limit is two loads a cycle, 64 B against a triad's 96 B (two loads
    // and a store), so this ceiling sits below the triad there by design.
    // The quarters start 256 bytes apart modulo 4 KiB (a gap of kSkew floats between one
    // quarter's end and the next one's start, read after them): quarters of a power-of-two
    // set sit a multiple of the L1's and the L2's set period apart, so the four streams'
    // lines (and their prefetches) fell into the same sets and evicted each other. On Zen 3
    // the 1-thread L3 read at 2 MiB (four quarters 512 KiB apart, one L2 set) read 0.72 of
    // likwid-bench's one-stream sum_sp_avx at the same set.
    constexpr std::int64_t W = V::W;
    constexpr std::int64_t kSkew = 64;
    const std::int64_t quarter = (n > 3 * kSkew ? n - 3 * kSkew : 0) / 4 / (4 * W) * (4 * W);
    const float* x1 = x + quarter + kSkew;
    const float* x2 = x1 + quarter + kSkew;
    const float* x3 = x2 + quarter + kSkew;
    typename V::reg s[8];
    for (int k = 0; k < 8; ++k)
        s[k] = V::zero();
    for (std::int64_t i = 0; i < quarter; i += 4 * W) {
        for (int k = 0; k < 4; k += 2) {
            s[k] = V::add(s[k], V::loadu(x + i + W * k));
            s[k + 1] = V::add(s[k + 1], V::loadu(x + i + W * k + W));
            s[k + 4] = V::add(s[k + 4], V::loadu(x1 + i + W * k));
            s[k + 5] = V::add(s[k + 5], V::loadu(x1 + i + W * k + W));
        }
        for (int k = 0; k < 4; k += 2) {
            s[k] = V::add(s[k], V::loadu(x2 + i + W * k));
            s[k + 1] = V::add(s[k + 1], V::loadu(x2 + i + W * k + W));
            s[k + 4] = V::add(s[k + 4], V::loadu(x3 + i + W * k));
            s[k + 5] = V::add(s[k + 5], V::loadu(x3 + i + W * k + W));
        }
    }
    // The gaps (whole registers: kSkew is a multiple of 16 floats), then the rest, whole
    // registers first (up to 4W + 3 floats: a scalar chain that long cost 40 % in L1).
    std::int64_t end = quarter > 0 ? 4 * quarter + 3 * kSkew : 0;
    for (const float* gap : {x1, x2, x3})
        if (quarter > 0)
            for (std::int64_t i = -kSkew; i < 0; i += W)
                s[2] = V::add(s[2], V::loadu(gap + i));
    for (; end + W <= n; end += W)
        s[3] = V::add(s[3], V::loadu(x + end));
    for (int k = 1; k < 8; ++k)
        s[0] = V::add(s[0], s[k]);
    double sum = V::hsum(s[0]);
    for (; end < n; ++end)
        sum += double(x[end]);
    return sum;
}

// ---- gemm: GotoBLAS/BLIS blocking around an MR x NR (NR = two registers) micro-kernel ----
//
// Loops: NC columns of B (the packed KC x NC block sits in L3), KC of the k extent, MC rows
// of A (the packed MC x KC block sits in L2), then NR-column micro-panels of B (KC x NR, in
// L1 while the MR-row micro-panels of A stream past) and MR-row micro-panels of A.

// Packs A[mc x kc] (row stride lda) into MR-row panels: panel-major, then p, then the MR
// rows (zero padded past mc).
template <class V>
void gemm_pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda, float* dst) {
    constexpr std::int64_t MR = V::kGemm.mr;
    for (std::int64_t i0 = 0; i0 < mc; i0 += MR) {
        const std::int64_t rows = imin(MR, mc - i0);
        if (rows == MR) {
            // Eight k-steps at a time: MR rows read forwards, the panel written in order.
            std::int64_t p = 0;
            for (; p + 8 <= kc; p += 8) {
                for (std::int64_t i = 0; i < MR; ++i) {
                    const float* src = a + (i0 + i) * lda + p;
#pragma GCC unroll 8
                    for (std::int64_t q = 0; q < 8; ++q)
                        dst[q * MR + i] = src[q];
                }
                dst += 8 * MR;
            }
            for (; p < kc; ++p) {
                for (std::int64_t i = 0; i < MR; ++i)
                    dst[i] = a[(i0 + i) * lda + p];
                dst += MR;
            }
        } else {
            for (std::int64_t p = 0; p < kc; ++p) {
                for (std::int64_t i = 0; i < rows; ++i)
                    dst[i] = a[(i0 + i) * lda + p];
                for (std::int64_t i = rows; i < MR; ++i)
                    dst[i] = 0.0f;
                dst += MR;
            }
        }
    }
}

// Packs B[kc x nc] (row stride ldb) into NR-column panels: panel q at dst + q * NR * kc,
// then p, then the NR columns (zero padded past nc). dst is kAlign-aligned.
template <class V>
void gemm_pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb, float* dst) {
    constexpr std::int64_t W = V::W, NR = V::kGemm.nr;
    static_assert(NR == 2 * W, "the micro-kernel holds a row of the tile in two registers");
    const std::int64_t full = nc / NR;
    for (std::int64_t p = 0; p < kc; ++p) {
        const float* src = b + p * ldb;
        float* d = dst + p * NR;
        for (std::int64_t q = 0; q < full; ++q) {
            V::store(d + q * NR * kc, V::loadu(src + q * NR));
            V::store(d + q * NR * kc + W, V::loadu(src + q * NR + W));
        }
        if (full * NR < nc) {
            const std::int64_t j0 = full * NR, cols = nc - j0;
            float* e = d + full * NR * kc;
            const auto m0 = V::tail(imin(W, cols));
            const auto m1 = V::tail(cols > W ? cols - W : 0);
            V::store(e, V::maskload(m0, src + j0));
            V::store(e + W, V::maskload(m1, src + j0 + W));
        }
    }
}

// C[R x NR] = alpha * Ap[R x kc] * Bp[kc x NR] + cb * C (cb == 0: C is not read, so it may
// hold NaN as BLAS allows), straight from the accumulators: the first R (R <= MR, MR by
// default) rows of an A panel. `c` has row stride ldc.
template <class V, int R = int(V::kGemm.mr)>
inline void gemm_micro(std::int64_t kc, const float* __restrict ap, const float* __restrict bp,
                       float* c, std::int64_t ldc, float alpha, float cb) {
    constexpr int MR = R;
    constexpr std::int64_t PR = V::kGemm.mr; // the A panel's stride
    constexpr std::int64_t W = V::W, NR = V::kGemm.nr;
    typename V::reg acc0[MR], acc1[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
        acc0[i] = V::zero();
        acc1[i] = V::zero();
    }
    // One k-step: a row of the B panel times a column of the A panel, into the tile.
    auto step = [&](const float* a_col, const float* b_row) {
        const auto b0 = V::load(b_row);
        const auto b1 = V::load(b_row + W);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const auto a = V::set1(a_col[i]);
            acc0[i] = V::fma(a, b0, acc0[i]);
            acc1[i] = V::fma(a, b1, acc1[i]);
        }
    };
    // kGemmSteps k-steps a round, with one prefetch per line of A they use, eight steps
    // ahead (see the traits for why each width takes its number).
    constexpr int S = V::kGemmSteps;
    std::int64_t p = 0;
    for (; p + S <= kc; p += S, ap += S * PR, bp += S * NR) {
#pragma GCC unroll 4
        for (std::int64_t u = 0; u < S * PR; u += 16)
            _mm_prefetch(reinterpret_cast<const char*>(ap + 8 * PR + u), _MM_HINT_T0);
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s)
            step(ap + s * PR, bp + s * NR);
    }
    for (; p < kc; ++p, ap += PR, bp += NR)
        step(ap, bp);
    const auto va = V::set1(alpha);
    if (cb == 0.0f) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            V::storeu(c + i * ldc, V::mul(va, acc0[i]));
            V::storeu(c + i * ldc + W, V::mul(va, acc1[i]));
        }
    } else {
        const auto vb = V::set1(cb);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            float* row = c + i * ldc;
            V::storeu(row, V::fma(vb, V::loadu(row), V::mul(va, acc0[i])));
            V::storeu(row + W, V::fma(vb, V::loadu(row + W), V::mul(va, acc1[i])));
        }
    }
}

// The same for an edge tile (rows x cols of C, fewer than MR x NR): the rows rounded up
// to 4 (or MR) are computed into a buffer, and only its valid part is merged into C, so a
// 4-row edge costs a third of a 12-row tile, not a whole one.
template <class V>
void gemm_edge(std::int64_t kc, const float* ap, const float* bp, float* c, std::int64_t ldc,
               std::int64_t rows, std::int64_t cols, float alpha, float cb) {
    constexpr int MR = int(V::kGemm.mr);
    constexpr std::int64_t NR = V::kGemm.nr;
    alignas(64) float tile[MR * NR];
    constexpr int R4 = MR > 4 ? 4 : MR, R8 = MR > 8 ? 8 : MR;
    if (rows <= R4)
        gemm_micro<V, R4>(kc, ap, bp, tile, NR, alpha, 0.0f);
    else if (rows <= R8)
        gemm_micro<V, R8>(kc, ap, bp, tile, NR, alpha, 0.0f);
    else
        gemm_micro<V>(kc, ap, bp, tile, NR, alpha, 0.0f);
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
            const float t = tile[i * NR + j];
            c[i * ldc + j] = cb == 0.0f ? t : __builtin_fmaf(cb, c[i * ldc + j], t);
        }
}

template <class V>
void gemm_macro(std::int64_t mc, std::int64_t nc, std::int64_t kc, const float* packed_a,
                const float* packed_b, float* c, std::int64_t ldc, float alpha, float cb) {
    constexpr std::int64_t MR = V::kGemm.mr, NR = V::kGemm.nr;
    for (std::int64_t jr = 0; jr < nc; jr += NR) {
        const std::int64_t cols = imin(NR, nc - jr);
        const float* bp = packed_b + jr * kc;
        for (std::int64_t ir = 0; ir < mc; ir += MR) {
            const std::int64_t rows = imin(MR, mc - ir);
            float* cblk = c + ir * ldc + jr;
            // The C rows come from L3 or memory: fetch them while the kc loop runs.
            for (std::int64_t i = 0; i < rows; ++i) {
                const char* crow = reinterpret_cast<const char*>(cblk + i * ldc);
                _mm_prefetch(crow, _MM_HINT_T0);
                _mm_prefetch(crow + 4 * (cols - 1), _MM_HINT_T0);
            }
            if (rows == MR && cols == NR)
                gemm_micro<V>(kc, packed_a + ir * kc, bp, cblk, ldc, alpha, cb);
            else
                gemm_edge<V>(kc, packed_a + ir * kc, bp, cblk, ldc, rows, cols, alpha, cb);
        }
    }
}

// The single-threaded driver; `workspace` holds V::kGemm.workspace_floats() floats,
// kAlign-aligned: the packed B block first, then the packed A block.
template <class V>
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float alpha, float beta, float* c, std::int64_t ldc,
          float* workspace) {
    constexpr GemmBlocking g = V::kGemm;
    float* packed_b = workspace;
    constexpr std::int64_t b_floats = g.b_floats(); // constant: no out-of-line copy here
    float* packed_a = workspace + b_floats;
    if (k == 0) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    for (std::int64_t j0 = 0; j0 < n; j0 += g.nc) {
        const std::int64_t nc = imin(g.nc, n - j0);
        for (std::int64_t p0 = 0; p0 < k; p0 += g.kc) {
            const std::int64_t kc = imin(g.kc, k - p0);
            gemm_pack_b<V>(kc, nc, b + p0 * ldb + j0, ldb, packed_b);
            // The first k-block applies beta; later ones accumulate.
            const float cb = p0 == 0 ? beta : 1.0f;
            for (std::int64_t i0 = 0; i0 < m; i0 += g.mc) {
                const std::int64_t mc = imin(g.mc, m - i0);
                gemm_pack_a<V>(mc, kc, a + i0 * lda + p0, lda, packed_a);
                gemm_macro<V>(mc, nc, kc, packed_a, packed_b, c + i0 * ldc + j0, ldc, alpha, cb);
            }
        }
    }
}

} // namespace
} // namespace switchyard::cpu::simd

// Defines the entry points cpuvariants.h declares for namespace `isa` from the templates
// above, with the traits `V` of the including file (`VStream`: those of the streaming forms
// of flow_match and rms_norm, from memory).
// Each entry point leaves the upper halves of the vector registers clean (vzeroupper) as it
// returns. GCC omits the vzeroupper where an entry point ends in a tail call to a helper that
// takes a vector argument (rms_norm to rms_row_scale): the SSE code run after it on that
// thread (the reference kernels, the drift control) then ran 3.5x as long on a Zen 4 guest.
namespace switchyard::cpu::simd {
struct ZeroUpperOnReturn {
    ZeroUpperOnReturn() = default;
    ZeroUpperOnReturn(const ZeroUpperOnReturn&) = delete;
    ZeroUpperOnReturn& operator=(const ZeroUpperOnReturn&) = delete;
    ~ZeroUpperOnReturn() { _mm256_zeroupper(); }
};
} // namespace switchyard::cpu::simd

#define SWITCHYARD_SIMD_ENTRY_POINTS(V, VStream)                                                   \
    void flow_match(std::int64_t n, const float* x, const float* v, float dt, float* out,          \
                    bool stream) {                                                                 \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        if (stream)                                                                                \
            simd::flow_match<VStream>(n, x, v, dt, out, true);                                     \
        else                                                                                       \
            simd::flow_match<V>(n, x, v, dt, out, false);                                          \
    }                                                                                              \
    void flow_sde(std::int64_t b, std::int64_t d, const float* x, const float* v,                  \
                  const float* noise, const SdeCoefs& c, float* prev, float* log_prob,             \
                  bool stream) {                                                                   \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::flow_sde<V>(b, d, x, v, noise, c, prev, log_prob, stream);                           \
    }                                                                                              \
    void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,      \
                  float* y, bool stream) {                                                         \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        if (stream)                                                                                \
            simd::rms_norm<VStream>(b, d, x, w, eps, y, true);                                     \
        else                                                                                       \
            simd::rms_norm<V>(b, d, x, w, eps, y, false);                                          \
    }                                                                                              \
    double fma_probe(std::int64_t iterations) {                                                    \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        return simd::fma_probe<V>(iterations);                                                     \
    }                                                                                              \
    double read_probe(std::int64_t n, const float* x) {                                            \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        return simd::read_probe<V>(n, x);                                                          \
    }                                                                                              \
    void scale(std::int64_t n, const float* x, float s, float* out, bool stream, int lanes) {      \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::scale<V>(n, x, s, out, stream, lanes);                                               \
    }                                                                                              \
    void gemm_pack_a(std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda,           \
                     float* dst) {                                                                 \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::gemm_pack_a<V>(mc, kc, a, lda, dst);                                                 \
    }                                                                                              \
    void gemm_pack_b(std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb,           \
                     float* dst) {                                                                 \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::gemm_pack_b<V>(kc, nc, b, ldb, dst);                                                 \
    }                                                                                              \
    void gemm_macro(std::int64_t mc, std::int64_t nc, std::int64_t kc, const float* packed_a,      \
                    const float* packed_b, float* c, std::int64_t ldc, float alpha, float cb) {    \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::gemm_macro<V>(mc, nc, kc, packed_a, packed_b, c, ldc, alpha, cb);                    \
    }                                                                                              \
    void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,    \
              const float* b, std::int64_t ldb, float alpha, float beta, float* c,                 \
              std::int64_t ldc, float* workspace) {                                                \
        const simd::ZeroUpperOnReturn zero_upper_on_return;                                        \
        simd::gemm<V>(m, n, k, a, lda, b, ldb, alpha, beta, c, ldc, workspace);                    \
    }
