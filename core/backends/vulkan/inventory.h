// SPDX-License-Identifier: MIT
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::vulkan {

/// One memory heap of a physical device.
struct MemoryHeap {
    std::uint64_t bytes = 0;
    bool device_local = false;
};

/// One Vulkan physical device as vkGetPhysicalDeviceProperties2 describes it.
struct DeviceRecord {
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    std::string name;
    std::string type;        // "CPU", "GPU" or "other": the SDK's device_type vocabulary
    std::string vulkan_type; // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
    std::uint32_t api_version = 0;
    std::uint32_t vendor_id = 0, device_id = 0;
    std::string api_version_text;         // "1.3.230"
    std::string driver_version_text;      // decoded by the vendor's scheme ("535.104.5", "0.0.1")
    std::string driver_name, driver_info; // VkPhysicalDeviceDriverProperties (Vulkan 1.2)
    std::vector<MemoryHeap> heaps;
    std::uint32_t subgroup_size = 0;
    bool subgroup_arithmetic = false;       // subgroupAdd and friends in compute shaders
    float timestamp_period_ns = 0;          // nanoseconds per timestamp tick
    std::uint32_t timestamp_valid_bits = 0; // of the compute queue family; 0: no timestamps
    std::uint32_t queue_family = 0;         // the first family with compute
    std::uint32_t max_invocations = 0;      // maxComputeWorkGroupInvocations
    std::uint32_t max_group_size_x = 0, max_group_size_y = 0;
    std::uint32_t max_group_count_x = 0, max_group_count_y = 0;
    std::uint32_t max_shared_bytes = 0;  // maxComputeSharedMemorySize
    std::uint64_t max_storage_range = 0; // maxStorageBufferRange
    std::uint64_t min_storage_offset_alignment = 0;
    std::uint64_t max_allocation_bytes = 0; // maxMemoryAllocationSize (Vulkan 1.1)
    /// The largest device-local heap, the memory the device's kernels run from.
    std::uint64_t device_memory_bytes() const;
};

/// The process's Vulkan instance and what vkEnumeratePhysicalDevices finds: every device
/// that speaks Vulkan 1.1 or later (the shaders are SPIR-V 1.3), in the loader's order (the
/// order of the `vulkan:N` ids), or why there is none.
struct Inventory {
    VkInstance vk_instance = VK_NULL_HANDLE;
    std::vector<DeviceRecord> devices;
    /// Empty when there is a device; otherwise said the way vulkaninfo would say it:
    /// "vkCreateInstance: -9 VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver: the loader found
    /// no ICD it could load; VK_DRIVER_FILES is /x)" or "llvmpipe speaks Vulkan 1.0; the
    /// plugin needs 1.1".
    std::string unavailable_reason;
    /// Devices skipped for their Vulkan version ("NAME speaks Vulkan 1.0"), `; `-separated.
    std::string skipped;

    /// Asks the loader once per process (until forget()); thread-safe, never throws. The
    /// instance is never destroyed: devices made from it may outlive a forget().
    static const Inventory& instance();
    /// Whether instance() has a device; lock-free once known (availability predicates).
    static bool has_devices();
    /// Drops the cached answer (the plugin's reset hook); the next instance() asks again.
    static void forget();

private:
    static Inventory query();
};

/// "1.3.230" for a VK_MAKE_API_VERSION value.
std::string version_text(std::uint32_t version);

} // namespace switchyard::vulkan
