// SPDX-License-Identifier: MIT
#include "openclkernels.h"

#include "clerror.h"
#include "launchevents.h"
#include "programcache.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>

namespace switchyard::opencl {

namespace {

// Row kernels (flow_sde_step, rms_norm) run one work-group per row and reduce in local
// memory, so their work-group size must be a power of two.
constexpr const char* kSource = R"CLC(
__kernel void flow_match_step_default(__global const float* x, __global const float* v,
                                      const float dt, __global float* out, const ulong n) {
    const size_t i = get_global_id(0);
    if (i < n)
        out[i] = x[i] + dt * v[i];
}

__kernel void flow_match_step_vec4(__global const float* x, __global const float* v,
                                   const float dt, __global float* out, const ulong n) {
    const size_t i = get_global_id(0);
    const size_t base = i * 4;
    if (base + 4 <= n) {
        vstore4(vload4(i, x) + dt * vload4(i, v), i, out);
    } else {
        for (size_t j = base; j < n; ++j)
            out[j] = x[j] + dt * v[j];
    }
}

float reduce_sum(float value, __local float* scratch) {
    const size_t lid = get_local_id(0);
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
}

// prev = x*x_coef + v*v_coef + std_dev*noise; log_prob = -mean(noise^2)/2 - log_norm
// (prev - mean is std_dev*noise exactly, as in the reference).
__kernel void flow_sde_step_default(__global const float* x, __global const float* v,
                                    __global const float* noise, const float x_coef,
                                    const float v_coef, const float std_dev,
                                    const float log_norm, __global float* prev,
                                    __global float* log_prob, const ulong d,
                                    __local float* scratch) {
    const size_t row = get_group_id(0);
    const size_t base = row * d;
    float acc = 0.0f;
    for (size_t i = get_local_id(0); i < d; i += get_local_size(0)) {
        const float nz = noise[base + i];
        prev[base + i] = x[base + i] * x_coef + v[base + i] * v_coef + std_dev * nz;
        acc += nz * nz;
    }
    const float sum = reduce_sum(acc, scratch);
    if (get_local_id(0) == 0)
        log_prob[row] = d > 0 ? -0.5f * (sum / (float)d) - log_norm : 0.0f;
}

__kernel void flow_sde_step_vec4(__global const float* x, __global const float* v,
                                 __global const float* noise, const float x_coef,
                                 const float v_coef, const float std_dev, const float log_norm,
                                 __global float* prev, __global float* log_prob, const ulong d,
                                 __local float* scratch) {
    const size_t row = get_group_id(0);
    const size_t base = row * d;
    const size_t quads = d / 4;
    float4 acc4 = (float4)(0.0f);
    for (size_t q = get_local_id(0); q < quads; q += get_local_size(0)) {
        const size_t at = base + 4 * q;
        const float4 nz = vload4(0, noise + at);
        vstore4(vload4(0, x + at) * x_coef + vload4(0, v + at) * v_coef + std_dev * nz, 0,
                prev + at);
        acc4 += nz * nz;
    }
    float acc = acc4.x + acc4.y + acc4.z + acc4.w;
    for (size_t i = 4 * quads + get_local_id(0); i < d; i += get_local_size(0)) {
        const float nz = noise[base + i];
        prev[base + i] = x[base + i] * x_coef + v[base + i] * v_coef + std_dev * nz;
        acc += nz * nz;
    }
    const float sum = reduce_sum(acc, scratch);
    if (get_local_id(0) == 0)
        log_prob[row] = d > 0 ? -0.5f * (sum / (float)d) - log_norm : 0.0f;
}

__kernel void rms_norm_default(__global const float* x, __global const float* w, const float eps,
                               __global float* y, const ulong d, __local float* scratch) {
    const size_t base = get_group_id(0) * d;
    float acc = 0.0f;
    for (size_t i = get_local_id(0); i < d; i += get_local_size(0)) {
        const float xi = x[base + i];
        acc += xi * xi;
    }
    const float sum = reduce_sum(acc, scratch);
    const float inv = 1.0f / sqrt((d > 0 ? sum / (float)d : 0.0f) + eps);
    for (size_t i = get_local_id(0); i < d; i += get_local_size(0))
        y[base + i] = x[base + i] * inv * w[i];
}

__kernel void rms_norm_vec4(__global const float* x, __global const float* w, const float eps,
                            __global float* y, const ulong d, __local float* scratch) {
    const size_t base = get_group_id(0) * d;
    const size_t quads = d / 4;
    float4 acc4 = (float4)(0.0f);
    for (size_t q = get_local_id(0); q < quads; q += get_local_size(0)) {
        const float4 xi = vload4(0, x + base + 4 * q);
        acc4 += xi * xi;
    }
    float acc = acc4.x + acc4.y + acc4.z + acc4.w;
    for (size_t i = 4 * quads + get_local_id(0); i < d; i += get_local_size(0)) {
        const float xi = x[base + i];
        acc += xi * xi;
    }
    const float sum = reduce_sum(acc, scratch);
    const float inv = 1.0f / sqrt((d > 0 ? sum / (float)d : 0.0f) + eps);
    for (size_t q = get_local_id(0); q < quads; q += get_local_size(0)) {
        const size_t at = base + 4 * q;
        vstore4(vload4(0, x + at) * inv * vload4(q, w), 0, y + at);
    }
    for (size_t i = 4 * quads + get_local_id(0); i < d; i += get_local_size(0))
        y[base + i] = x[base + i] * inv * w[i];
}

// One work-item per row, float8 with a scalar tail: no local memory and no barrier, the
// shape CPU implementations run well (a GPU wants many rows to fill itself).
float sum8(const float8 v) {
    const float4 h = v.lo + v.hi;
    return (h.x + h.y) + (h.z + h.w);
}

__kernel void flow_sde_step_row8(__global const float* x, __global const float* v,
                                 __global const float* noise, const float x_coef,
                                 const float v_coef, const float std_dev, const float log_norm,
                                 __global float* prev, __global float* log_prob, const ulong d,
                                 const ulong rows) {
    const size_t row = get_global_id(0);
    if (row >= rows)
        return;
    const size_t base = row * d;
    const size_t octs = d / 8;
    float8 acc8 = (float8)(0.0f);
    for (size_t q = 0; q < octs; ++q) {
        const size_t at = base + 8 * q;
        const float8 nz = vload8(0, noise + at);
        vstore8(vload8(0, x + at) * x_coef + vload8(0, v + at) * v_coef + std_dev * nz, 0,
                prev + at);
        acc8 += nz * nz;
    }
    float acc = sum8(acc8);
    for (size_t i = base + 8 * octs; i < base + d; ++i) {
        const float nz = noise[i];
        prev[i] = x[i] * x_coef + v[i] * v_coef + std_dev * nz;
        acc += nz * nz;
    }
    log_prob[row] = d > 0 ? -0.5f * (acc / (float)d) - log_norm : 0.0f;
}

__kernel void rms_norm_row8(__global const float* x, __global const float* w, const float eps,
                            __global float* y, const ulong d, const ulong rows) {
    const size_t row = get_global_id(0);
    if (row >= rows)
        return;
    __global const float* xr = x + row * d;
    __global float* yr = y + row * d;
    const size_t octs = d / 8;
    float8 acc8 = (float8)(0.0f);
    for (size_t q = 0; q < octs; ++q) {
        const float8 xi = vload8(q, xr);
        acc8 += xi * xi;
    }
    float acc = sum8(acc8);
    for (size_t i = 8 * octs; i < d; ++i)
        acc += xr[i] * xr[i];
    const float inv = 1.0f / sqrt((d > 0 ? acc / (float)d : 0.0f) + eps);
    for (size_t q = 0; q < octs; ++q)
        vstore8(vload8(q, xr) * inv * vload8(q, w), q, yr);
    for (size_t i = 8 * octs; i < d; ++i)
        yr[i] = xr[i] * inv * w[i];
}

// beta == 0 never reads C (it may hold garbage, even NaN), as in BLAS.
__kernel void gemm_default(__global const float* a, __global const float* b, __global float* c,
                           const int m, const int n, const int k, const float alpha,
                           const float beta) {
    const int j = get_global_id(0);
    const int i = get_global_id(1);
    if (i >= m || j >= n)
        return;
    __global const float* arow = a + (size_t)i * k;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc += arow[p] * b[(size_t)p * n + j];
    const size_t at = (size_t)i * n + j;
    c[at] = alpha * acc + (beta == 0.0f ? 0.0f : beta * c[at]);
}

// 32x32 tiles of A and B in local memory; a 32x8 work-group, each item computing 4 rows.
#define TS 32
#define WPT 4
#define RTS (TS / WPT)
__kernel __attribute__((reqd_work_group_size(TS, RTS, 1)))
void gemm_tiled(__global const float* a, __global const float* b, __global float* c, const int m,
                const int n, const int k, const float alpha, const float beta) {
    __local float as[TS][TS];
    __local float bs[TS][TS];
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int col = get_group_id(0) * TS + tx;
    const int row0 = get_group_id(1) * TS + ty;
    float acc[WPT];
    for (int w = 0; w < WPT; ++w)
        acc[w] = 0.0f;
    for (int t = 0; t < k; t += TS) {
        for (int w = 0; w < WPT; ++w) {
            const int r = row0 + w * RTS;
            const int ka = t + tx;
            as[ty + w * RTS][tx] = (r < m && ka < k) ? a[(size_t)r * k + ka] : 0.0f;
            const int kb = t + ty + w * RTS;
            bs[ty + w * RTS][tx] = (kb < k && col < n) ? b[(size_t)kb * n + col] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < TS; ++p) {
            const float bv = bs[p][tx];
            for (int w = 0; w < WPT; ++w)
                acc[w] += as[ty + w * RTS][p] * bv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int w = 0; w < WPT; ++w) {
        const int r = row0 + w * RTS;
        if (r < m && col < n) {
            const size_t at = (size_t)r * n + col;
            c[at] = alpha * acc[w] + (beta == 0.0f ? 0.0f : beta * c[at]);
        }
    }
}

// A 4x8 block of C per work-item: float8 rows of B, no local memory and no barrier (CPU
// implementations compile it to plain SIMD loops). Columns past the last full 8 take a
// scalar path; rows past m read row m-1 and are not stored.
void store8(__global float* c, const size_t at, const float8 acc, const float alpha,
            const float beta) {
    float8 out = alpha * acc;
    if (beta != 0.0f)
        out += beta * vload8(0, c + at);
    vstore8(out, 0, c + at);
}

__kernel void gemm_blocked(__global const float* a, __global const float* b, __global float* c,
                           const int m, const int n, const int k, const float alpha,
                           const float beta) {
    const int j0 = get_global_id(0) * 8;
    const int i0 = get_global_id(1) * 4;
    if (i0 >= m || j0 >= n)
        return;
    const int rows = min(4, m - i0);
    if (j0 + 8 <= n) {
        __global const float* a0 = a + (size_t)i0 * k;
        __global const float* a1 = a + (size_t)min(i0 + 1, m - 1) * k;
        __global const float* a2 = a + (size_t)min(i0 + 2, m - 1) * k;
        __global const float* a3 = a + (size_t)min(i0 + 3, m - 1) * k;
        float8 acc0 = (float8)(0.0f), acc1 = (float8)(0.0f);
        float8 acc2 = (float8)(0.0f), acc3 = (float8)(0.0f);
        for (int p = 0; p < k; ++p) {
            const float8 bv = vload8(0, b + (size_t)p * n + j0);
            acc0 = fma((float8)(a0[p]), bv, acc0);
            acc1 = fma((float8)(a1[p]), bv, acc1);
            acc2 = fma((float8)(a2[p]), bv, acc2);
            acc3 = fma((float8)(a3[p]), bv, acc3);
        }
        store8(c, (size_t)i0 * n + j0, acc0, alpha, beta);
        if (rows > 1)
            store8(c, (size_t)(i0 + 1) * n + j0, acc1, alpha, beta);
        if (rows > 2)
            store8(c, (size_t)(i0 + 2) * n + j0, acc2, alpha, beta);
        if (rows > 3)
            store8(c, (size_t)(i0 + 3) * n + j0, acc3, alpha, beta);
        return;
    }
    for (int r = i0; r < i0 + rows; ++r) {
        for (int j = j0; j < n; ++j) {
            float acc = 0.0f;
            for (int p = 0; p < k; ++p)
                acc += a[(size_t)r * k + p] * b[(size_t)p * n + j];
            const size_t at = (size_t)r * n + j;
            c[at] = alpha * acc + (beta == 0.0f ? 0.0f : beta * c[at]);
        }
    }
}

// Each work-group copies a block of per_item x its size float4s. Strided (contiguous = 0):
// work-item l takes elements l, l + size, l + 2 size, ... of the block (coalesced on GPUs).
// Contiguous (1): each work-item takes per_item consecutive float4s, the loop a CPU
// implementation vectorises and prefetches (PoCL runs a work-group as one task and pays
// per task: one float4 per work-item made it schedule 65536 tasks per 256 MiB).
inline size_t probe_index(const uint per_item, const uint contiguous, const uint k) {
    const size_t ls = get_local_size(0);
    return contiguous ? get_global_id(0) * per_item + k
                      : get_group_id(0) * ls * per_item + (size_t)k * ls + get_local_id(0);
}

__kernel void probe_copy(__global const float4* src, __global float4* dst, const ulong n4,
                         const uint per_item, const uint contiguous) {
    for (uint k = 0; k < per_item; ++k) {
        const size_t i = probe_index(per_item, contiguous, k);
        if (i < n4)
            dst[i] = src[i];
    }
}

// The working-set sweep (per-level ceilings, as LBNL's Empirical Roofline Toolkit finds
// them): `trials` in-place passes x = x * a + b over n4 float4s, laid out as probe_copy,
// each pass reading and writing every element once (32 bytes per float4 per trial). The
// trials repeat inside the kernel so a cache-sized set is timed over many passes and not
// over one launch's overhead.
__kernel void probe_sweep(__global float4* x, const ulong n4, const uint per_item,
                          const uint contiguous, const uint trials, const float a,
                          const float b) {
    // Trials outside, elements inside: each trial's elements are independent (one
    // element's trials in a row would be a chain of dependent loads and stores).
    for (uint t = 0; t < trials; ++t) {
        for (uint k = 0; k < per_item; ++k) {
            const size_t i = probe_index(per_item, contiguous, k);
            if (i < n4)
                x[i] = x[i] * a + b;
        }
    }
}

// Eight independent float8 FMA chains per work-item (128 flops per iteration): explicit
// vectors, so CPU implementations that do not vectorise across work-items still fill
// their SIMD units; GPUs get the same work as eight times the instruction-level parallelism.
__kernel void probe_fma(__global float* out, const int iterations, const float a, const float b) {
    const float8 seed = (float8)((float)get_global_id(0) * 1e-7f) +
                        (float8)(0.0f, 0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f);
    float8 x0 = seed, x1 = seed + 0.1f, x2 = seed + 0.2f, x3 = seed + 0.3f;
    float8 x4 = seed + 0.4f, x5 = seed + 0.5f, x6 = seed + 0.6f, x7 = seed + 0.7f;
    const float8 va = (float8)(a), vb = (float8)(b);
    for (int i = 0; i < iterations; ++i) {
        x0 = fma(x0, va, vb); x1 = fma(x1, va, vb); x2 = fma(x2, va, vb); x3 = fma(x3, va, vb);
        x4 = fma(x4, va, vb); x5 = fma(x5, va, vb); x6 = fma(x6, va, vb); x7 = fma(x7, va, vb);
    }
    const float8 sum = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
    out[get_global_id(0)] = sum.s0 + sum.s1 + sum.s2 + sum.s3 + sum.s4 + sum.s5 + sum.s6 + sum.s7;
}
)CLC";

cl_mem mem(const void* p) {
    return static_cast<cl_mem>(const_cast<void*>(p));
}

cl_command_queue queue_of(const KernelArgs& a) {
    if (!a.stream)
        throw std::invalid_argument(
            "opencl kernel: KernelArgs::stream must be the device's cl_command_queue");
    return static_cast<cl_command_queue>(a.stream);
}

// Whether `q` runs on a CPU device (PoCL): the `default` cells pick their form by it.
// Remembered per thread for the last queue (one device query per queue, not per launch).
bool cpu_queue(cl_command_queue q) {
    thread_local cl_command_queue last = nullptr;
    thread_local bool last_cpu = false;
    if (q == last)
        return last_cpu;
    cl_device_id device = nullptr;
    cl_device_type type = 0;
    const bool known =
        clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS;
    last = q;
    last_cpu = known && (type & CL_DEVICE_TYPE_CPU) != 0;
    return last_cpu;
}

// Bytes of local memory for a __local argument.
struct Local {
    std::size_t bytes;
};

void set_arg(cl_kernel k, cl_uint index, const Local& local) {
    check(clSetKernelArg(k, index, local.bytes, nullptr), "clSetKernelArg");
}
template <class T> void set_arg(cl_kernel k, cl_uint index, const T& value) {
    check(clSetKernelArg(k, index, sizeof(T), &value), "clSetKernelArg");
}

// Sets the arguments and enqueues, holding the kernel's lock throughout.
template <class... Args>
void launch(cl_command_queue queue, const ProgramCache::Kernel& k, cl_uint dims,
            const std::size_t* global, const std::size_t* local, const Args&... args) {
    std::lock_guard lock(*k.lock);
    cl_uint index = 0;
    (set_arg(k.kernel, index++, args), ...);
    LaunchEvents::enqueue(queue, k.kernel, dims, global, local);
}

std::size_t round_up(std::size_t n, std::size_t multiple) {
    return (n + multiple - 1) / multiple * multiple;
}

// The largest power of two <= limit (>= 1).
std::size_t floor_pow2(std::size_t limit) {
    std::size_t p = 1;
    while (p * 2 <= limit)
        p *= 2;
    return p;
}

// Work-group size of an element-wise kernel.
std::size_t elementwise_group(const ProgramCache::Kernel& k) {
    return std::min<std::size_t>(256, k.max_work_group);
}

// Work-group size of a row kernel: a power of two, no larger than the row's work items.
std::size_t row_group(const ProgramCache::Kernel& k, std::int64_t items) {
    const auto want = std::min<std::size_t>({256, k.max_work_group, std::size_t(items)});
    std::size_t p = floor_pow2(std::max<std::size_t>(want, 1));
    if (p < std::size_t(items) && p * 2 <= std::min<std::size_t>(256, k.max_work_group))
        p *= 2;
    return p;
}

// The row ops' forms: a work-group per row (group, vec4) or a work-item per row (row8).
enum class RowKind { Group, Vec4, Row8 };

std::string row_kernel(std::string_view op, RowKind kind) {
    return std::string(op) + (kind == RowKind::Vec4   ? "_vec4"
                              : kind == RowKind::Row8 ? "_row8"
                                                      : "_default");
}

void flow_match_step(const KernelArgs& a, bool vec4) {
    const auto n = a.dims[0];
    if (n <= 0)
        return;
    auto* q = queue_of(a);
    const auto k = programs().kernel(q, vec4 ? "flow_match_step_vec4" : "flow_match_step_default");
    const std::size_t items = vec4 ? std::size_t((n + 3) / 4) : std::size_t(n);
    const std::size_t local = elementwise_group(k);
    const std::size_t global = round_up(items, local);
    launch(q, k, 1, &global, &local, mem(a.in[0]), mem(a.in[1]), float(a.scalars[0]), mem(a.out[0]),
           cl_ulong(n));
}

void flow_sde_step(const KernelArgs& a, RowKind kind) {
    const auto b = a.dims[0], d = a.dims[1];
    if (b <= 0)
        return;
    // The per-step coefficients, in double on the host as in the reference.
    const double sigma = a.scalars[0], sigma_prev = a.scalars[1], sigma_max = a.scalars[2],
                 noise_level = a.scalars[3];
    const double dt = sigma_prev - sigma;
    const double s = std::sqrt(sigma / (1.0 - (sigma == 1.0 ? sigma_max : sigma))) * noise_level;
    const double x_coef = 1.0 + s * s / (2.0 * sigma) * dt;
    const double v_coef = (1.0 + s * s * (1.0 - sigma) / (2.0 * sigma)) * dt;
    const double std_dev = s * std::sqrt(-dt);
    const double log_norm = std::log(std_dev) + std::log(std::sqrt(2.0 * std::numbers::pi));

    auto* q = queue_of(a);
    const auto k = programs().kernel(q, row_kernel("flow_sde_step", kind));
    const auto d_arg = cl_ulong(std::max<std::int64_t>(d, 0));
    if (kind == RowKind::Row8) {
        const std::size_t local = elementwise_group(k);
        const std::size_t global = round_up(std::size_t(b), local);
        launch(q, k, 1, &global, &local, mem(a.in[0]), mem(a.in[1]), mem(a.in[2]), float(x_coef),
               float(v_coef), float(std_dev), float(log_norm), mem(a.out[0]), mem(a.out[1]), d_arg,
               cl_ulong(b));
        return;
    }
    const std::size_t local =
        row_group(k, kind == RowKind::Vec4 ? std::max<std::int64_t>(d / 4, 1) : d);
    const std::size_t global = local * std::size_t(b);
    launch(q, k, 1, &global, &local, mem(a.in[0]), mem(a.in[1]), mem(a.in[2]), float(x_coef),
           float(v_coef), float(std_dev), float(log_norm), mem(a.out[0]), mem(a.out[1]), d_arg,
           Local{local * sizeof(float)});
}

void rms_norm(const KernelArgs& a, RowKind kind) {
    const auto b = a.dims[0], d = a.dims[1];
    if (b <= 0)
        return;
    auto* q = queue_of(a);
    const auto k = programs().kernel(q, row_kernel("rms_norm", kind));
    const auto d_arg = cl_ulong(std::max<std::int64_t>(d, 0));
    if (kind == RowKind::Row8) {
        const std::size_t local = elementwise_group(k);
        const std::size_t global = round_up(std::size_t(b), local);
        launch(q, k, 1, &global, &local, mem(a.in[0]), mem(a.in[1]), float(a.scalars[0]),
               mem(a.out[0]), d_arg, cl_ulong(b));
        return;
    }
    const std::size_t local =
        row_group(k, kind == RowKind::Vec4 ? std::max<std::int64_t>(d / 4, 1) : d);
    const std::size_t global = local * std::size_t(b);
    launch(q, k, 1, &global, &local, mem(a.in[0]), mem(a.in[1]), float(a.scalars[0]), mem(a.out[0]),
           d_arg, Local{local * sizeof(float)});
}

enum class GemmKind { Element, Tiled, Blocked };

void gemm(const KernelArgs& a, GemmKind kind) {
    const auto m = a.dims[0], n = a.dims[1], kk = a.dims[2];
    if (m <= 0 || n <= 0)
        return;
    if (m > INT32_MAX || n > INT32_MAX || kk > INT32_MAX)
        throw std::invalid_argument("opencl gemm: dimensions above 2^31 - 1");
    auto* q = queue_of(a);
    const auto k = programs().kernel(q, kind == GemmKind::Tiled     ? "gemm_tiled"
                                        : kind == GemmKind::Blocked ? "gemm_blocked"
                                                                    : "gemm_default");
    std::size_t local[2], global[2];
    if (kind == GemmKind::Tiled) {
        constexpr std::size_t tile = 32, rows_per_item = 4;
        if (k.max_work_group < tile * tile / rows_per_item)
            throw std::runtime_error("opencl gemm tiled: the device runs at most " +
                                     std::to_string(k.max_work_group) +
                                     " work-items per group, the kernel needs 256");
        local[0] = tile;
        local[1] = tile / rows_per_item;
        global[0] = round_up(std::size_t(n), tile);
        global[1] = round_up(std::size_t(m), tile) / rows_per_item;
    } else {
        // Default: one item per element of C; blocked: one per 4x8 block.
        const std::size_t cols = kind == GemmKind::Blocked ? 8 : 1;
        const std::size_t rows = kind == GemmKind::Blocked ? 4 : 1;
        local[0] = 16;
        local[1] = kind == GemmKind::Blocked ? 8 : 16;
        while (local[0] * local[1] > k.max_work_group)
            (local[0] > local[1] ? local[0] : local[1]) /= 2;
        global[0] = round_up((std::size_t(n) + cols - 1) / cols, local[0]);
        global[1] = round_up((std::size_t(m) + rows - 1) / rows, local[1]);
    }
    launch(q, k, 2, global, local, mem(a.in[0]), mem(a.in[1]), mem(a.out[0]), cl_int(m), cl_int(n),
           cl_int(kk), float(a.scalars[0]), float(a.scalars[1]));
}

} // namespace

ProgramCache& programs() {
    // Leaked on purpose: the plugin's reset hook clears it; at exit, OpenCL may already be
    // torn down.
    static auto* cache = new ProgramCache(kSource, "");
    return *cache;
}

std::vector<KernelCellSpec> kernel_cells() {
    // `default` is what the dispatch chain resolves: per device type, the form that type runs
    // well. A CPU implementation (PoCL) runs a work-item per row and register-blocked gemm
    // 5-35x faster than work-groups per row and a work-item per element of C (dispatch
    // regret on PoCL), and flow_match_step's float4 per work-item 1.4-2.2x faster than a
    // work-item per element (PoCL on Zen 3); GPUs the reverse. Each form is also a cell of
    // its own.
    const auto row_default = [](const KernelArgs& a) {
        return cpu_queue(queue_of(a)) ? RowKind::Row8 : RowKind::Group;
    };
    return {
        {kFlowMatchStep, "default",
         [](const KernelArgs& a) { flow_match_step(a, cpu_queue(queue_of(a))); },
         "vec4 on CPU devices, element on GPUs", "vec4", "element"},
        {kFlowMatchStep, "element", [](const KernelArgs& a) { flow_match_step(a, false); },
         "one work-item per element"},
        {kFlowMatchStep, "vec4", [](const KernelArgs& a) { flow_match_step(a, true); },
         "float4 per work-item, scalar tail"},
        {kFlowSdeStep, "default",
         [row_default](const KernelArgs& a) { flow_sde_step(a, row_default(a)); },
         "row8 on CPU devices, group on GPUs", "row8", "group"},
        {kFlowSdeStep, "group", [](const KernelArgs& a) { flow_sde_step(a, RowKind::Group); },
         "one work-group per row, local-memory reduction"},
        {kFlowSdeStep, "vec4", [](const KernelArgs& a) { flow_sde_step(a, RowKind::Vec4); },
         "one work-group per row, float4 with a scalar tail"},
        {kFlowSdeStep, "row8", [](const KernelArgs& a) { flow_sde_step(a, RowKind::Row8); },
         "one work-item per row, float8 with a scalar tail, no local memory"},
        {kGemm, "default",
         [](const KernelArgs& a) {
             gemm(a, cpu_queue(queue_of(a)) ? GemmKind::Blocked : GemmKind::Element);
         },
         "blocked on CPU devices, element on GPUs", "blocked", "element"},
        {kGemm, "element", [](const KernelArgs& a) { gemm(a, GemmKind::Element); },
         "one work-item per element of C"},
        {kGemm, "tiled", [](const KernelArgs& a) { gemm(a, GemmKind::Tiled); },
         "32x32 local-memory tiles, 4 rows per work-item"},
        {kGemm, "blocked", [](const KernelArgs& a) { gemm(a, GemmKind::Blocked); },
         "4x8 register block per work-item, float8 rows of B, no local memory"},
        {kRmsNorm, "default", [row_default](const KernelArgs& a) { rms_norm(a, row_default(a)); },
         "row8 on CPU devices, group on GPUs", "row8", "group"},
        {kRmsNorm, "group", [](const KernelArgs& a) { rms_norm(a, RowKind::Group); },
         "one work-group per row, local-memory reduction"},
        {kRmsNorm, "vec4", [](const KernelArgs& a) { rms_norm(a, RowKind::Vec4); },
         "one work-group per row, float4 with a scalar tail"},
        {kRmsNorm, "row8", [](const KernelArgs& a) { rms_norm(a, RowKind::Row8); },
         "one work-item per row, float8 with a scalar tail, no local memory"},
    };
}

} // namespace switchyard::opencl
