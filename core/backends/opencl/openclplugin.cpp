// SPDX-License-Identifier: MIT
// The opencl backend plugin: registers the kernel cells of openclkernels.cpp on
// (op, opencl, generic, variant) and the `opencl:N` devices (opencldevice.h).
//
// Why a cell is unavailable reaches the user through the cell's `requires` metadata,
// which `resolve` prints ("needs an OpenCL device (clGetPlatformIDs: -1001 ...), which
// this machine lacks") and `matrix --json` carries. A missing ICD loader never gets this
// far: the manifest's libOpenCL.so.1 dependency marks the backend Unavailable first.
#include "clerror.h"
#include "inventory.h"
#include "opencldevice.h"
#include "openclkernels.h"
#include "programcache.h"

#include <switchyard/sdk/plugin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace {

using namespace switchyard;
using namespace switchyard::opencl;

void register_cells(PluginContext& ctx) {
    const auto& inventory = Inventory::instance();
    const std::string needs = inventory.unavailable_reason.empty()
                                  ? std::string("an OpenCL device")
                                  : "an OpenCL device (" + inventory.unavailable_reason + ")";
    for (auto& cell : kernel_cells()) {
        Value meta = {{"requires", needs}, {"kernel", cell.description}};
        // The dispatch findings of an --all-variants run then know default and its form on
        // a device are one kernel: a gap between them is the run's noise.
        if (!cell.on_cpu.empty())
            meta["runs_as"] = {{"CPU", cell.on_cpu},
                               {"GPU", cell.on_gpu},
                               {"accelerator", cell.on_gpu},
                               {"other", cell.on_gpu}};
        ctx.add_kernel({.op = std::string(cell.op),
                        .device = "opencl",
                        .arch = "generic",
                        .variant = std::string(cell.variant),
                        .fn = std::move(cell.fn),
                        .available = &Inventory::has_devices,
                        .meta = std::move(meta)});
    }
    ctx.add_device_provider(std::make_shared<OpenClProvider>());
}

// The devices stay (the backend registry withdraws them when it unregisters the backend);
// their programs are built again on next use.
void reset() {
    programs().clear();
    Inventory::forget();
}

} // namespace

SWITCHYARD_PLUGIN_WITH_RESET(register_cells, reset)

/// For tests: builds `source` as the kernels' program is built, for the device and
/// context of `queue` (a Device::stream()). Returns 0 when it builds; otherwise 1 with the
/// error (carrying the build log) in `message`.
extern "C" SWITCHYARD_PLUGIN_EXPORT int
switchyard_opencl_try_build(void* queue, const char* source, char* message, std::size_t capacity) {
    std::string error;
    try {
        auto* q = static_cast<cl_command_queue>(queue);
        cl_context context = nullptr;
        cl_device_id device = nullptr;
        check(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr),
              "clGetCommandQueueInfo");
        check(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof device, &device, nullptr),
              "clGetCommandQueueInfo");
        clReleaseProgram(ProgramCache::build(context, device, source, ""));
        return 0;
    } catch (const std::exception& e) {
        error = e.what();
    }
    if (message && capacity > 0) {
        const auto n = std::min(error.size(), capacity - 1);
        std::memcpy(message, error.data(), n);
        message[n] = '\0';
    }
    return 1;
}
