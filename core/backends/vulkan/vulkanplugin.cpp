// SPDX-License-Identifier: MIT
// The vulkan backend plugin: registers the kernel cells of vulkankernels.cpp on
// (op, vulkan, generic, variant) and the `vulkan:N` devices (vulkandevice.h).
//
// Why a cell is unavailable reaches the user through the cell's `requires` metadata, which
// `resolve` prints ("needs a Vulkan device (vkCreateInstance: -9 ...), which this machine
// lacks") and `matrix --json` carries. A missing Vulkan loader never gets this far: the
// manifest's libvulkan.so.1 dependency marks the backend Unavailable first.
#include "inventory.h"
#include "vulkandevice.h"
#include "vulkankernels.h"

#include <switchyard/sdk/plugin.h>

namespace {

using namespace switchyard;
using namespace switchyard::vulkan;

void register_cells(PluginContext& ctx) {
    const auto& inventory = Inventory::instance();
    const std::string needs = inventory.unavailable_reason.empty()
                                  ? std::string("a Vulkan 1.1 device")
                                  : "a Vulkan 1.1 device (" + inventory.unavailable_reason + ")";
    for (auto& cell : kernel_cells()) {
        Value meta = {{"requires", needs}, {"kernel", cell.description}};
        // The dispatch findings of an --all-variants run then know default and the form it
        // runs on a device are one kernel: a gap between them is the run's noise.
        if (!cell.on_cpu.empty())
            meta["runs_as"] = {{"CPU", cell.on_cpu},
                               {"GPU", cell.on_gpu},
                               {"accelerator", cell.on_gpu},
                               {"other", cell.on_gpu}};
        ctx.add_kernel({.op = std::string(cell.op),
                        .device = "vulkan",
                        .arch = "generic",
                        .variant = std::string(cell.variant),
                        .fn = std::move(cell.fn),
                        .available = &Inventory::has_devices,
                        .meta = std::move(meta)});
    }
    ctx.add_device_provider(std::make_shared<VulkanProvider>());
}

// The devices stay (the backend registry withdraws them when it unregisters the backend), and
// so do their pipelines; the next inventory asks the loader again.
void reset() {
    Inventory::forget();
}

} // namespace

SWITCHYARD_PLUGIN_WITH_RESET(register_cells, reset)
