// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/sdk/kernel.h>

#include <string_view>
#include <vector>

namespace switchyard::vulkan {

/// One kernel cell of this plugin: (op, vulkan, generic, variant).
struct KernelCellSpec {
    std::string_view op;
    std::string_view variant;
    KernelFn fn;
    std::string_view description;
    /// `default` only: the variants whose code it runs on a CPU device (lavapipe) and on any
    /// other (the cell's meta "runs_as", by the device's "device_type" property).
    std::string_view on_cpu = {}, on_gpu = {};
};

/// The four ops as compute shaders: scalar and vec4 flow_match_step and flow_sde_step,
/// rms_norm reduced in shared memory or with subgroup operations, naive and tiled gemm, and
/// each op's `default`. Each takes BufferHandle pointers in KernelArgs::in/out and a Stream
/// in KernelArgs::stream.
std::vector<KernelCellSpec> kernel_cells();

} // namespace switchyard::vulkan
