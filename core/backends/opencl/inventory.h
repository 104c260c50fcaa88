// SPDX-License-Identifier: MIT
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

namespace switchyard::opencl {

/// One OpenCL device as clGetDeviceInfo describes it.
struct DeviceRecord {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    std::string platform_name, platform_vendor, platform_version;
    std::string name, vendor, version, driver_version, opencl_c_version, type;
    cl_uint compute_units = 0;
    cl_uint max_clock_mhz = 0;
    cl_ulong global_memory_bytes = 0;
    cl_ulong global_memory_cache_bytes = 0;
    cl_ulong local_memory_bytes = 0;
    cl_ulong max_alloc_bytes = 0;
    std::size_t max_work_group_size = 0;
};

/// What clGetPlatformIDs and clGetDeviceIDs find: every device, platform by platform then
/// device by device (the order of the `opencl:N` ids), or why there is none.
struct Inventory {
    std::vector<DeviceRecord> devices;
    /// Empty when there is a device; otherwise said the way clinfo would say it:
    /// "clGetPlatformIDs: -1001 CL_PLATFORM_NOT_FOUND_KHR (no platforms: no ICD in
    /// /etc/OpenCL/vendors)" or "platform Portable Computing Language has no devices".
    std::string unavailable_reason;

    /// Queries the ICD loader once per process (until forget()); thread-safe, never throws.
    static const Inventory& instance();
    /// Whether instance() has a device; lock-free once known (availability predicates).
    static bool has_devices();
    /// Drops the cached answer (the plugin's reset hook); the next instance() asks again.
    static void forget();

private:
    static Inventory query();
};

} // namespace switchyard::opencl
