// SPDX-License-Identifier: MIT
#pragma once

#include "inventory.h"

#include <switchyard/sdk/device.h>

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace switchyard::vulkan {

/// What Device::allocate() returns, and a view of one (BufferViews::view()): a range of a
/// VkBuffer. Kernels receive it in KernelArgs::in/out, cast to a float pointer.
struct BufferHandle {
    static constexpr std::uint32_t kMagic = 0x56424846; // "VBHF"
    std::uint32_t magic = kMagic;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE; // VK_NULL_HANDLE for a view
    VkDeviceSize offset = 0;                // of the range in `buffer`
    VkDeviceSize size = 0;                  // of the range
    char* mapped = nullptr;                 // the range's first byte, host-visible memory only
};

/// One compute dispatch: a shader, its work-group size (specialization constants 0 and 1;
/// ignored by shaders with a fixed size), groups, buffers in binding order and push constants.
struct Dispatch {
    const char* shader = nullptr;
    std::array<std::uint32_t, 2> local = {256, 1};
    std::array<std::uint32_t, 2> groups = {1, 1};
    std::vector<const BufferHandle*> buffers;
    const void* push = nullptr;
    std::uint32_t push_bytes = 0;
};

class VulkanDevice;

/// What KernelArgs::stream points to (Device::stream()).
struct Stream {
    static constexpr std::uint32_t kMagic = 0x56535452; // "VSTR"
    std::uint32_t magic = kMagic;
    VulkanDevice* device = nullptr;
};

/// One Vulkan device (`vulkan:N`): a logical device with one compute queue, buffers in
/// device memory (mapped where the device-local memory is host-visible, else reached through
/// staging copies), one pipeline per (shader, work-group size). Every dispatch is one
/// submission with a timestamp before and after it, waited for: samples are the sum of the
/// dispatches' timestamp differences times timestampPeriod.
class VulkanDevice final : public Device, public BufferViews, public PreparedState {
public:
    VulkanDevice(std::string id, const DeviceRecord& record);
    ~VulkanDevice() override;

    const DeviceInfo& info() const override { return m_info; }
    const DeviceRecord& record() const { return m_record; }
    /// The shader probes: read, copy, triad (bandwidth) and FMA (fp32 FLOP/s). A failed
    /// probe leaves its ceiling at 0 and says why in its method.
    void prepare() override;
    /// The device, its driver and the Vulkan version: what the probes' figures depend on.
    std::string prepared_identity() const override;
    /// Takes an earlier prepare()'s ceilings and peaks instead of probing.
    void adopt_prepared(const DeviceInfo& measured) override;

    void* allocate(std::size_t bytes) override;
    void release(void* buffer) noexcept override;
    void upload(void* dst, const void* src, std::size_t bytes) override;
    void download(void* dst, const void* src, std::size_t bytes) override;

    /// A range of the buffer where the offset keeps minStorageBufferOffsetAlignment (the
    /// profiler's guard zones), else nullptr.
    void* view(void* buffer, std::size_t offset, std::size_t bytes) override;
    void release_view(void* view) noexcept override;
    void upload_at(void* dst, std::size_t offset, const void* src, std::size_t bytes) override;
    void download_at(void* dst, const void* src, std::size_t offset, std::size_t bytes) override;

    /// A Stream*.
    void* stream() override;
    void synchronize() override {} // every submission is waited for
    /// The sum of the dispatches' timestamp differences (host time where the queue has no
    /// timestamps or the launches dispatched nothing through this plugin).
    double time_launches(const std::function<void()>& launch, int count) override;
    /// Overwrites a buffer of 256 MiB (less where the device's memory is small).
    void flush_caches() override;

    /// Runs `d` and waits for it; returns its device time in seconds (0 without timestamps).
    double dispatch(const Dispatch& d);

private:
    struct Pipeline {
        VkShaderModule module = VK_NULL_HANDLE;
        VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        VkPipeline pipeline = VK_NULL_HANDLE;
        std::uint32_t bindings = 0;
    };
    void open();
    const Pipeline& pipeline(const char* shader, std::array<std::uint32_t, 2> local);
    std::uint32_t memory_type(std::uint32_t allowed, VkMemoryPropertyFlags want) const;
    BufferHandle* create_buffer(VkDeviceSize bytes, bool host_visible);
    void destroy(BufferHandle* b) noexcept;
    // Records `record` into the command buffer, submits it and waits (under m_mutex).
    template <class Record> void submit(Record record);
    void copy(const BufferHandle& from, VkDeviceSize from_offset, const BufferHandle& to,
              VkDeviceSize to_offset, VkDeviceSize bytes);
    double probe_bandwidth(const char* shader, int buffers, double bytes_per_vec4,
                           std::string& method);
    void probe_flops();

    DeviceRecord m_record;
    DeviceInfo m_info;
    Stream m_stream;
    std::once_flag m_open_once, m_peaks_once;
    std::recursive_mutex m_mutex; // the queue, command buffer, descriptor pool, pipelines
    VkDevice m_device = VK_NULL_HANDLE;
    VkQueue m_queue = VK_NULL_HANDLE;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
    VkQueryPool m_queries = VK_NULL_HANDLE;
    VkDescriptorPool m_descriptors = VK_NULL_HANDLE;
    VkMemoryPropertyFlags m_buffer_flags = 0; // the memory allocate() uses
    bool m_mapped_buffers = false;            // that memory is host-visible and coherent
    std::map<std::tuple<std::string, std::uint32_t, std::uint32_t>, Pipeline> m_pipelines;
    BufferHandle* m_flush = nullptr;
};

/// Enumerates the Vulkan devices once (Inventory) as `vulkan:0`, `vulkan:1`, ...
class VulkanProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "vulkan"; }
    std::vector<std::shared_ptr<Device>> enumerate() override;

private:
    std::mutex m_mutex;
    bool m_enumerated = false;
    std::vector<std::shared_ptr<Device>> m_devices;
};

/// While one lives, the dispatches of this thread add their device times to it.
class LaunchTimer {
public:
    LaunchTimer();
    ~LaunchTimer();
    LaunchTimer(const LaunchTimer&) = delete;
    LaunchTimer& operator=(const LaunchTimer&) = delete;
    double seconds() const noexcept { return m_seconds; }
    std::size_t count() const noexcept { return m_count; }
    /// Adds one dispatch's time to this thread's timer, if any.
    static void add(double seconds) noexcept;

private:
    double m_seconds = 0;
    std::size_t m_count = 0;
    LaunchTimer* m_previous = nullptr;
};

} // namespace switchyard::vulkan
