// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/sdk/kernel.h>

#include <string_view>
#include <vector>

namespace switchyard::opencl {

class ProgramCache;

/// One kernel cell of this plugin: (op, opencl, generic, variant).
struct KernelCellSpec {
    std::string_view op;
    std::string_view variant;
    KernelFn fn;
    std::string_view description;
    /// `default` only: the variants whose code it runs on a CPU device and on any other
    /// (the cell's meta "runs_as", by the device's "device_type" property: "CPU", "GPU",
    /// "accelerator", "other"); empty for the other cells.
    std::string_view on_cpu = {}, on_gpu = {};
};

/// The four ops' `default` kernels, `vec4` for the memory-bound ones (float4 with a scalar
/// tail) and a local-memory `tiled` gemm. Each takes cl_mem handles in KernelArgs::in/out
/// and the cl_command_queue in KernelArgs::stream.
std::vector<KernelCellSpec> kernel_cells();

/// The plugin's OpenCL C program (the ops and the device probes `probe_copy`,
/// `probe_fma`), built once per (context, device).
ProgramCache& programs();

} // namespace switchyard::opencl
