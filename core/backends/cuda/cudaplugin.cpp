// SPDX-License-Identifier: MIT
// The cuda backend: the device provider (cuda:N) and the hand-written kernels, one cell
// per (op, arch). A cell is available when some CUDA device has at least its compute
// capability, so on an sm_90 GPU the chain is sm_90 -> sm_80 -> generic -> cpu reference.
#include "cudadevice.h"
#include "cudakernels.h"
#include "cudaruntime.h"

#include <switchyard/sdk/plugin.h>

#include <string>

namespace {

using namespace switchyard;

void add(PluginContext& ctx, std::string_view op, int cc, KernelFn fn, std::string_view impl) {
    const std::string arch = cc > 0 ? "sm_" + std::to_string(cc) : "generic";
    ctx.add_kernel(
        {.op = std::string(op),
         .device = "cuda",
         .arch = arch,
         .variant = "default",
         .fn = std::move(fn),
         .available = [cc] { return cuda::has_device_with_cc(cc); },
         .workspace_bytes = 0,
         .meta = {{"requires", cuda::requirement(cc)}, {"implementation", std::string(impl)}}});
}

void register_cells(PluginContext& ctx) {
    add(ctx, kFlowMatchStep, 0, cuda::flow_match_step_generic,
        "one element per thread, grid-stride");
    add(ctx, kFlowMatchStep, 80, cuda::flow_match_step_vec4,
        "float4 loads and stores, scalar tail");
    add(ctx, kFlowSdeStep, 0, cuda::flow_sde_step_generic, "one block per row, block reduction");
    add(ctx, kFlowSdeStep, 80, cuda::flow_sde_step_vec4,
        "one block per row, float4, block reduction");
    add(ctx, kGemm, 0, cuda::gemm_generic, "16x16 shared-memory tiles, one output per thread");
    add(ctx, kGemm, 80, cuda::gemm_sm80,
        "128x128x8 tiles, 8x8 per thread, cp.async double buffering");
    add(ctx, kGemm, 90, cuda::gemm_sm90, "128x256x8 tiles, 512 threads, 8x8 per thread, cp.async");
    add(ctx, kRmsNorm, 0, cuda::rms_norm_generic, "one block per row, block reduction");
    add(ctx, kRmsNorm, 80, cuda::rms_norm_vec4, "one block per row, float4, block reduction");
    // Removed with the backend (reset, unload) by the core.
    ctx.add_device_provider(cuda::make_device_provider());
}

} // namespace

SWITCHYARD_PLUGIN(register_cells)

/// What the CUDA runtime says here ("2 device(s), newest sm_90", or its error as
/// "cudaErrorInsufficientDriver: ..."): lets tests and tools ask without a driver.
extern "C" SWITCHYARD_PLUGIN_EXPORT const char* switchyard_cuda_runtime_status(void) {
    static const std::string text = [] {
        const auto& s = switchyard::cuda::runtime_status();
        if (s.device_count == 0)
            return s.error;
        return std::to_string(s.device_count) + " device(s), newest sm_" +
               std::to_string(s.max_compute_capability);
    }();
    return text.c_str();
}
