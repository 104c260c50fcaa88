// SPDX-License-Identifier: MIT
// The opencl backend plugin: registers the kernel cells of openclkernels.cpp on
// (op, opencl, generic, variant) and the `opencl:N` devices (opencldevice.h).
//
// Why a cell is unavailable reaches the user through the cell's `requires` metadata,
// which `resolve` prints ("needs an OpenCL device (clGetPlatformIDs: -1001 ...), which
// this machine lacks") and `matrix --json` carries. A missing ICD loader never gets this
// far: the manifest's libOpenCL.so.1 dependency marks the backend Unavailable first.
#include "inventory.h"
#include "opencldevice.h"
#include "openclkernels.h"
#include "programcache.h"

#include <switchyard/plugin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace {

using namespace switchyard;
using namespace switchyard::opencl;

// The only place that names the process-wide device registry.
DeviceRegistry& device_registry() {
    return DeviceRegistry::instance();
}

void register_cells(PluginContext& ctx) {
    const auto& inventory = Inventory::instance();
    const std::string needs = inventory.unavailable_reason.empty()
                                  ? std::string("an OpenCL device")
                                  : "an OpenCL device (" + inventory.unavailable_reason + ")";
    for (auto& cell : kernel_cells())
        ctx.add_kernel({.op = std::string(cell.op),
                        .device = "opencl",
                        .arch = "generic",
                        .variant = std::string(cell.variant),
                        .fn = std::move(cell.fn),
                        .available = &Inventory::has_devices,
                        .meta = {{"requires", needs}, {"kernel", cell.description}}});
    device_registry().add_provider(std::make_shared<OpenClProvider>());
    // After the registry exists, so this runs before it destroys the devices at exit.
    watch_process_exit();
}

void reset() {
    device_registry().remove_provider("opencl");
    programs().clear();
    Inventory::forget();
}

} // namespace

SWITCHYARD_PLUGIN_WITH_RESET(register_cells, reset)

/// For tests: builds `source` for the device `device_id` ("opencl:0") as the kernels'
/// program is built. Returns 0 when it builds; otherwise 1 with the error (carrying the
/// build log) in `message`.
extern "C" SWITCHYARD_PLUGIN_EXPORT int switchyard_opencl_try_build(const char* device_id,
                                                                    const char* source,
                                                                    char* message,
                                                                    std::size_t capacity) {
    std::string error;
    try {
        auto device = device_registry().find(device_id);
        if (!device)
            throw std::runtime_error(std::string("no device ") + device_id);
        auto* queue = static_cast<cl_command_queue>(device->stream());
        cl_context context = nullptr;
        cl_device_id id = nullptr;
        clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof id, &id, nullptr);
        clReleaseProgram(ProgramCache::build(context, id, source, ""));
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
