// SPDX-License-Identifier: MIT
#include "inventory.h"

#include "clerror.h"

#include <CL/cl_ext.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace switchyard::opencl {

namespace {

std::mutex g_mutex;
// Leaked on purpose: a reference handed out stays valid after forget() (a reset is rare and
// the answer is small).
const Inventory* g_inventory = nullptr;
std::atomic<int> g_has_devices{-1}; // -1: not asked yet

std::string icd_folder() {
    const char* env = std::getenv("OCL_ICD_VENDORS");
    return env && *env ? env : "/etc/OpenCL/vendors";
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    std::size_t size = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string s(size, '\0');
    if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS)
        return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
    std::size_t size = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string s(size, '\0');
    if (clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS)
        return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

template <class T> T device_value(cl_device_id d, cl_device_info what) {
    T value{};
    if (clGetDeviceInfo(d, what, sizeof value, &value, nullptr) != CL_SUCCESS)
        return T{};
    return value;
}

std::string type_name(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (t & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

} // namespace

const Inventory& Inventory::instance() {
    std::lock_guard lock(g_mutex);
    if (!g_inventory)
        g_inventory = new Inventory(query());
    return *g_inventory;
}

bool Inventory::has_devices() {
    const int known = g_has_devices.load(std::memory_order_acquire);
    if (known >= 0)
        return known == 1;
    const bool any = !instance().devices.empty();
    g_has_devices.store(any ? 1 : 0, std::memory_order_release);
    return any;
}

void Inventory::forget() {
    std::lock_guard lock(g_mutex);
    g_inventory = nullptr;
    g_has_devices.store(-1);
}

Inventory Inventory::query() {
    Inventory inv;
    cl_uint count = 0;
    const cl_int rc = clGetPlatformIDs(0, nullptr, &count);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && count == 0)) {
        inv.unavailable_reason = describe_error("clGetPlatformIDs", CL_PLATFORM_NOT_FOUND_KHR) +
                                 " (no platforms: no ICD in " + icd_folder() + ")";
        return inv;
    }
    if (rc != CL_SUCCESS) {
        inv.unavailable_reason = describe_error("clGetPlatformIDs", rc);
        return inv;
    }
    std::vector<cl_platform_id> platforms(count);
    if (const cl_int r = clGetPlatformIDs(count, platforms.data(), nullptr); r != CL_SUCCESS) {
        inv.unavailable_reason = describe_error("clGetPlatformIDs", r);
        return inv;
    }
    std::string reasons;
    for (auto* platform : platforms) {
        const auto pname = platform_string(platform, CL_PLATFORM_NAME);
        cl_uint n = 0;
        const cl_int r = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
        if (r != CL_SUCCESS || n == 0) {
            reasons += (reasons.empty() ? "" : "; ") + std::string("platform ") + pname +
                       " has no devices" +
                       (r == CL_SUCCESS || r == CL_DEVICE_NOT_FOUND
                            ? ""
                            : " (" + describe_error("clGetDeviceIDs", r) + ")");
            continue;
        }
        std::vector<cl_device_id> ids(n);
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS)
            continue;
        for (auto* id : ids) {
            DeviceRecord d;
            d.platform = platform;
            d.device = id;
            d.platform_name = pname;
            d.platform_vendor = platform_string(platform, CL_PLATFORM_VENDOR);
            d.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
            d.name = device_string(id, CL_DEVICE_NAME);
            d.vendor = device_string(id, CL_DEVICE_VENDOR);
            d.version = device_string(id, CL_DEVICE_VERSION);
            d.driver_version = device_string(id, CL_DRIVER_VERSION);
            d.opencl_c_version = device_string(id, CL_DEVICE_OPENCL_C_VERSION);
            d.type = type_name(device_value<cl_device_type>(id, CL_DEVICE_TYPE));
            d.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
            d.max_clock_mhz = device_value<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
            d.global_memory_bytes = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
            d.global_memory_cache_bytes =
                device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
            d.local_memory_bytes = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
            d.max_alloc_bytes = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
            d.max_work_group_size = device_value<std::size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
            inv.devices.push_back(std::move(d));
        }
    }
    if (inv.devices.empty())
        inv.unavailable_reason = reasons.empty() ? "no OpenCL device" : reasons;
    return inv;
}

} // namespace switchyard::opencl
