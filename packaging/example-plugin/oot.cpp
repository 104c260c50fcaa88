// SPDX-License-Identifier: MIT
// The smallest real plugin: flow_match_step out = x + dt * v, variant "oot".
#include <switchyard/sdk/plugin.h>
static void k(const switchyard::KernelArgs& a) {
    for (std::int64_t i = 0; i < a.dims[0]; ++i)
        a.out[0][i] = a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
}
static void register_cells(switchyard::PluginContext& ctx) {
    ctx.add_kernel(
        {.op = "flow_match_step", .device = "cpu", .arch = "generic", .variant = "oot", .fn = k});
}
SWITCHYARD_PLUGIN(register_cells)
