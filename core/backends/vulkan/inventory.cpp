// SPDX-License-Identifier: MIT
#include "inventory.h"

#include "vkerror.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace switchyard::vulkan {

namespace {

std::mutex g_mutex;
// Leaked on purpose: a reference handed out stays valid after forget() (a reset is rare and
// the answer is small).
const Inventory* g_inventory = nullptr;
std::atomic<int> g_has_devices{-1}; // -1: not asked yet

// Where the loader looked for drivers, for a message: the variable that replaced its
// search, else its default folders.
std::string driver_search() {
    for (const char* name : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"})
        if (const char* v = std::getenv(name); v && *v)
            return std::string(name) + " is " + v;
    return "searched /etc/vulkan/icd.d, /usr/share/vulkan/icd.d and the XDG folders";
}

std::string type_of(VkPhysicalDeviceType t, bool vulkan_words) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return vulkan_words ? "discrete GPU" : "GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return vulkan_words ? "integrated GPU" : "GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return vulkan_words ? "virtual GPU" : "GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "CPU";
    default:
        return "other";
    }
}

// The driver version as its vendor packs it: NVIDIA 10.8.8.6 bits, Intel's Windows driver
// 18.14, everyone else (Mesa, AMD) VK_MAKE_API_VERSION.
std::string driver_version(std::uint32_t vendor, std::uint32_t v) {
    if (vendor == 0x10DE)
        return std::to_string((v >> 22) & 0x3ff) + "." + std::to_string((v >> 14) & 0xff) + "." +
               std::to_string((v >> 6) & 0xff) + "." + std::to_string(v & 0x3f);
    return version_text(v);
}

DeviceRecord describe(VkPhysicalDevice physical) {
    DeviceRecord d;
    d.physical = physical;
    VkPhysicalDeviceProperties base{};
    vkGetPhysicalDeviceProperties(physical, &base);
    d.api_version = base.apiVersion;
    d.name = base.deviceName;
    d.type = type_of(base.deviceType, false);
    d.vulkan_type = type_of(base.deviceType, true);
    d.vendor_id = base.vendorID;
    d.device_id = base.deviceID;
    d.api_version_text = version_text(base.apiVersion);
    d.driver_version_text = driver_version(base.vendorID, base.driverVersion);
    const auto& l = base.limits;
    d.timestamp_period_ns = l.timestampPeriod;
    d.max_invocations = l.maxComputeWorkGroupInvocations;
    d.max_group_size_x = l.maxComputeWorkGroupSize[0];
    d.max_group_size_y = l.maxComputeWorkGroupSize[1];
    d.max_group_count_x = l.maxComputeWorkGroupCount[0];
    d.max_group_count_y = l.maxComputeWorkGroupCount[1];
    d.max_shared_bytes = l.maxComputeSharedMemorySize;
    d.max_storage_range = l.maxStorageBufferRange;
    d.min_storage_offset_alignment = l.minStorageBufferOffsetAlignment;

    if (base.apiVersion >= VK_API_VERSION_1_1) {
        VkPhysicalDeviceDriverProperties driver{};
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
        VkPhysicalDeviceMaintenance3Properties m3{};
        m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
        VkPhysicalDeviceSubgroupProperties subgroup{};
        subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
        subgroup.pNext = &m3;
        // The driver's own name is Vulkan 1.2 (or VK_KHR_driver_properties).
        if (base.apiVersion >= VK_API_VERSION_1_2)
            m3.pNext = &driver;
        VkPhysicalDeviceProperties2 props{};
        props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        props.pNext = &subgroup;
        vkGetPhysicalDeviceProperties2(physical, &props);
        d.subgroup_size = subgroup.subgroupSize;
        d.subgroup_arithmetic =
            (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
            (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
            (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
        d.max_allocation_bytes = m3.maxMemoryAllocationSize;
        if (base.apiVersion >= VK_API_VERSION_1_2) {
            d.driver_name = driver.driverName;
            d.driver_info = driver.driverInfo;
        }
    }

    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i)
        d.heaps.push_back({memory.memoryHeaps[i].size,
                           (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});

    std::uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, family.data());
    bool found = false;
    // The first family with compute and timestamps, else the first with compute.
    for (int pass = 0; pass < 2 && !found; ++pass)
        for (std::uint32_t i = 0; i < families && !found; ++i)
            if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
                (pass == 1 || family[i].timestampValidBits > 0)) {
                d.queue_family = i;
                d.timestamp_valid_bits = family[i].timestampValidBits;
                found = true;
            }
    if (!found)
        d.max_invocations = 0; // no compute queue: Inventory::query() skips it
    return d;
}

} // namespace

std::string version_text(std::uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::uint64_t DeviceRecord::device_memory_bytes() const {
    std::uint64_t best = 0;
    for (const auto& h : heaps)
        if (h.device_local)
            best = std::max(best, h.bytes);
    return best;
}

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
    // One instance per process, made on first use and kept: the devices of an earlier
    // answer still use it.
    static VkInstance instance = VK_NULL_HANDLE;
    static VkResult created = VK_RESULT_MAX_ENUM;
    Inventory inv;
    if (created != VK_SUCCESS) {
        VkApplicationInfo app{};
        app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
        app.pApplicationName = "switchyard";
        app.pEngineName = "switchyard-vulkan";
        app.apiVersion = VK_API_VERSION_1_1;
        VkInstanceCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
        info.pApplicationInfo = &app;
        created = vkCreateInstance(&info, nullptr, &instance);
    }
    if (created != VK_SUCCESS) {
        inv.unavailable_reason = describe_error("vkCreateInstance", created);
        if (created == VK_ERROR_INCOMPATIBLE_DRIVER)
            inv.unavailable_reason +=
                " (no Vulkan driver: the loader found no ICD it could load; " + driver_search() +
                ")";
        return inv;
    }
    inv.vk_instance = instance;
    std::uint32_t count = 0;
    VkResult rc = vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    if (rc == VK_SUCCESS && count > 0)
        rc = vkEnumeratePhysicalDevices(instance, &count, physical.data());
    if (rc != VK_SUCCESS && rc != VK_INCOMPLETE) {
        inv.unavailable_reason = describe_error("vkEnumeratePhysicalDevices", rc);
        return inv;
    }
    physical.resize(count);
    for (auto* p : physical) {
        auto d = describe(p);
        if (d.api_version < VK_API_VERSION_1_1) {
            inv.skipped += (inv.skipped.empty() ? "" : "; ") + d.name + " speaks Vulkan " +
                           d.api_version_text + "; the plugin needs 1.1";
            continue;
        }
        if (d.max_invocations == 0) {
            inv.skipped += (inv.skipped.empty() ? "" : "; ") + d.name + " has no compute queue";
            continue;
        }
        inv.devices.push_back(std::move(d));
    }
    if (inv.devices.empty())
        inv.unavailable_reason = !inv.skipped.empty() ? inv.skipped
                                                      : "vkEnumeratePhysicalDevices found no "
                                                        "device (" +
                                                            driver_search() + ")";
    return inv;
}

} // namespace switchyard::vulkan
