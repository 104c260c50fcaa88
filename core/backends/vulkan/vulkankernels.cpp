// SPDX-License-Identifier: MIT
#include "vulkankernels.h"

#include "vulkandevice.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>

namespace switchyard::vulkan {

namespace {

VulkanDevice& device_of(const KernelArgs& a) {
    const auto* s = static_cast<const Stream*>(a.stream);
    if (!s || s->magic != Stream::kMagic || !s->device)
        throw std::invalid_argument(
            "vulkan kernel: KernelArgs::stream must be a vulkan device's stream()");
    return *s->device;
}

const BufferHandle* buf(const void* p) {
    return static_cast<const BufferHandle*>(p);
}

// The shaders index with 32-bit unsigned integers.
std::uint32_t u32(std::int64_t n, const char* what) {
    if (n < 0 || n > std::int64_t(UINT32_MAX))
        throw std::invalid_argument(std::string("vulkan kernel: ") + what +
                                    " is past 2^32 - 1 elements; use smaller sizes");
    return std::uint32_t(n);
}

// Work-group size of the 1-D shaders: 256 where the device allows it (a power of two: the
// shared-memory reductions halve it).
std::uint32_t local_size(const VulkanDevice& d) {
    std::uint32_t p = 1;
    const auto limit =
        std::min<std::uint32_t>({256, d.record().max_invocations, d.record().max_group_size_x});
    while (p * 2 <= limit)
        p *= 2;
    return p;
}

std::uint32_t groups(std::uint64_t items, std::uint32_t local, const VulkanDevice& d) {
    const std::uint64_t g = (items + local - 1) / local;
    return std::uint32_t(std::clamp<std::uint64_t>(
        g, 1, std::min<std::uint32_t>(65535, d.record().max_group_count_x)));
}

void flow_match_step(const KernelArgs& a, bool vec4) {
    const auto n = u32(a.dims[0], "flow_match_step's N");
    if (n == 0)
        return;
    auto& dev = device_of(a);
    struct {
        std::uint32_t n;
        float dt;
    } push{n, float(a.scalars[0])};
    Dispatch d;
    d.shader = vec4 ? "flow_match_step_vec4" : "flow_match_step_scalar";
    const auto local = local_size(dev);
    d.local = {local, 1};
    d.groups = {groups(vec4 ? (n + 3) / 4 : n, local, dev), 1};
    d.buffers = {buf(a.in[0]), buf(a.in[1]), buf(a.out[0])};
    if (vec4)
        d.buffers.insert(d.buffers.end(), {buf(a.in[0]), buf(a.in[1]), buf(a.out[0])});
    d.push = &push;
    d.push_bytes = sizeof push;
    dev.dispatch(d);
}

void flow_sde_step(const KernelArgs& a, bool vec4) {
    const auto b = a.dims[0], dd = a.dims[1];
    if (b <= 0)
        return;
    (void)u32(b * std::max<std::int64_t>(dd, 0), "flow_sde_step's B x D");
    auto& dev = device_of(a);
    // The per-step coefficients, in double on the host as in the reference.
    const double sigma = a.scalars[0], sigma_prev = a.scalars[1], sigma_max = a.scalars[2],
                 noise_level = a.scalars[3];
    const double dt = sigma_prev - sigma;
    const double s = std::sqrt(sigma / (1.0 - (sigma == 1.0 ? sigma_max : sigma))) * noise_level;
    const double std_dev = s * std::sqrt(-dt);
    struct {
        float x_coef, v_coef, std_dev, log_norm;
        std::uint32_t d, rows;
    } push{float(1.0 + s * s / (2.0 * sigma) * dt),
           float((1.0 + s * s * (1.0 - sigma) / (2.0 * sigma)) * dt),
           float(std_dev),
           float(std::log(std_dev) + std::log(std::sqrt(2.0 * std::numbers::pi))),
           std::uint32_t(std::max<std::int64_t>(dd, 0)),
           std::uint32_t(b)};
    Dispatch d;
    d.shader = vec4 ? "flow_sde_step_vec4" : "flow_sde_step_scalar";
    d.local = {local_size(dev), 1};
    d.groups = {groups(std::uint64_t(b), 1, dev), 1};
    d.buffers = {buf(a.in[0]), buf(a.in[1]), buf(a.in[2]), buf(a.out[0]), buf(a.out[1])};
    if (vec4)
        d.buffers.insert(d.buffers.end(),
                         {buf(a.in[0]), buf(a.in[1]), buf(a.in[2]), buf(a.out[0])});
    d.push = &push;
    d.push_bytes = sizeof push;
    dev.dispatch(d);
}

void rms_norm(const KernelArgs& a, bool subgroup) {
    const auto b = a.dims[0], dd = a.dims[1];
    if (b <= 0)
        return;
    (void)u32(b * std::max<std::int64_t>(dd, 0), "rms_norm's B x D");
    auto& dev = device_of(a);
    if (subgroup && !dev.record().subgroup_arithmetic)
        throw std::runtime_error("vulkan rms_norm subgroup: " + dev.info().name +
                                 " has no subgroup arithmetic in compute shaders; the shared "
                                 "variant runs there");
    struct {
        float eps;
        std::uint32_t d, rows;
    } push{float(a.scalars[0]), std::uint32_t(std::max<std::int64_t>(dd, 0)), std::uint32_t(b)};
    Dispatch d;
    d.shader = subgroup ? "rms_norm_subgroup" : "rms_norm_shared";
    d.local = {local_size(dev), 1};
    d.groups = {groups(std::uint64_t(b), 1, dev), 1};
    d.buffers = {buf(a.in[0]), buf(a.in[1]), buf(a.out[0])};
    d.push = &push;
    d.push_bytes = sizeof push;
    dev.dispatch(d);
}

void gemm(const KernelArgs& a, bool tiled) {
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    if (m <= 0 || n <= 0)
        return;
    (void)u32(m * std::max<std::int64_t>(k, 1), "gemm's A");
    (void)u32(std::max<std::int64_t>(k, 1) * n, "gemm's B");
    (void)u32(m * n, "gemm's C");
    auto& dev = device_of(a);
    struct {
        std::uint32_t m, n, k;
        float alpha, beta;
    } push{std::uint32_t(m), std::uint32_t(n), std::uint32_t(std::max<std::int64_t>(k, 0)),
           float(a.scalars[0]), float(a.scalars[1])};
    Dispatch d;
    std::uint32_t gx = 0, gy = 0;
    if (tiled) {
        constexpr std::uint32_t tile = 32, rows_per_item = 4;
        if (dev.record().max_invocations < tile * tile / rows_per_item)
            throw std::runtime_error("vulkan gemm tiled: " + dev.info().name + " runs at most " +
                                     std::to_string(dev.record().max_invocations) +
                                     " invocations per work-group, the shader needs 256");
        d.shader = "gemm_tiled";
        gx = std::uint32_t((n + tile - 1) / tile);
        gy = std::uint32_t((m + tile - 1) / tile);
    } else {
        d.shader = "gemm_naive";
        std::uint32_t lx = 16, ly = 16;
        while (lx * ly > dev.record().max_invocations)
            (lx > ly ? lx : ly) /= 2;
        d.local = {lx, ly};
        gx = std::uint32_t((n + lx - 1) / lx);
        gy = std::uint32_t((m + ly - 1) / ly);
    }
    if (gx > dev.record().max_group_count_x || gy > dev.record().max_group_count_y)
        throw std::invalid_argument("vulkan gemm: " + std::to_string(m) + "x" + std::to_string(n) +
                                    " needs more work-groups than " + dev.info().name +
                                    " dispatches; use smaller sizes");
    d.groups = {gx, gy};
    d.buffers = {buf(a.in[0]), buf(a.in[1]), buf(a.out[0])};
    d.push = &push;
    d.push_bytes = sizeof push;
    dev.dispatch(d);
}

bool on_cpu_device(const KernelArgs& a) {
    return device_of(a).record().type == "CPU";
}

} // namespace

std::vector<KernelCellSpec> kernel_cells() {
    // `default` is what the dispatch chain resolves. gemm's picks its form by the device
    // type: lavapipe runs a work-group's invocations as one CPU thread's SIMD loop and every
    // barrier as a switch between them, so the tiled shader's 64 barriers per 32-wide slice
    // of K made it 1.3-12x slower than the naive one there (67x45x129 to 256^3); a GPU
    // wants the shared-memory tiles. rms_norm's is the shared-memory reduction, which every
    // device runs (subgroup arithmetic is optional in Vulkan 1.1).
    return {
        {kFlowMatchStep, "default", [](const KernelArgs& a) { flow_match_step(a, true); },
         "runs vec4", "vec4", "vec4"},
        {kFlowMatchStep, "scalar", [](const KernelArgs& a) { flow_match_step(a, false); },
         "one float per invocation"},
        {kFlowMatchStep, "vec4", [](const KernelArgs& a) { flow_match_step(a, true); },
         "a vec4 per invocation, scalar tail"},
        {kFlowSdeStep, "default", [](const KernelArgs& a) { flow_sde_step(a, true); }, "runs vec4",
         "vec4", "vec4"},
        {kFlowSdeStep, "scalar", [](const KernelArgs& a) { flow_sde_step(a, false); },
         "a work-group per row, shared-memory reduction"},
        {kFlowSdeStep, "vec4", [](const KernelArgs& a) { flow_sde_step(a, true); },
         "a work-group per row, vec4 with scalar head and tail, shared-memory reduction"},
        {kGemm, "default", [](const KernelArgs& a) { gemm(a, !on_cpu_device(a)); },
         "naive on CPU devices, tiled on GPUs", "naive", "tiled"},
        {kGemm, "naive", [](const KernelArgs& a) { gemm(a, false); },
         "an invocation per element of C"},
        {kGemm, "tiled", [](const KernelArgs& a) { gemm(a, true); },
         "32x32 shared-memory tiles, 4 rows per invocation"},
        {kRmsNorm, "default", [](const KernelArgs& a) { rms_norm(a, false); }, "runs shared",
         "shared", "shared"},
        {kRmsNorm, "shared", [](const KernelArgs& a) { rms_norm(a, false); },
         "a work-group per row, shared-memory reduction"},
        {kRmsNorm, "subgroup", [](const KernelArgs& a) { rms_norm(a, true); },
         "a work-group per row, subgroupAdd reduction"},
    };
}

} // namespace switchyard::vulkan
