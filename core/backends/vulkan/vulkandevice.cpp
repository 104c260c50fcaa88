// SPDX-License-Identifier: MIT
#include "vulkandevice.h"

#include "shaders.h"
#include "vkerror.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace switchyard::vulkan {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
// Push constants of every shader fit in 64 bytes (every device allows 128).
constexpr std::uint32_t kPushBytes = 64;
// Storage buffers one dispatch binds at most (flow_sde_step_vec4: 9).
constexpr std::uint32_t kMaxBindings = 16;
// Probe launches: the best of all but the first (which warms up page faults and clocks).
constexpr int kProbeRuns = 6;

thread_local LaunchTimer* t_timer = nullptr;

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", v);
    return buf;
}

// The vendor a PCI (or Khronos) vendor id names; "" for one this table lacks.
std::string vendor_name(std::uint32_t id) {
    switch (id) {
    case 0x10DE:
        return "NVIDIA";
    case 0x1002:
        return "AMD";
    case 0x8086:
        return "Intel";
    case 0x13B5:
        return "ARM";
    case 0x5143:
        return "Qualcomm";
    case 0x106B:
        return "Apple";
    case 0x10005:
        return "Mesa";
    default:
        return "";
    }
}

std::uint32_t groups_for(std::uint64_t items, std::uint32_t local, std::uint32_t limit) {
    const std::uint64_t g = (items + local - 1) / local;
    return std::uint32_t(std::clamp<std::uint64_t>(g, 1, std::min<std::uint32_t>(limit, 65535)));
}

} // namespace

LaunchTimer::LaunchTimer() : m_previous(t_timer) {
    t_timer = this;
}

LaunchTimer::~LaunchTimer() {
    t_timer = m_previous;
}

void LaunchTimer::add(double seconds) noexcept {
    if (t_timer) {
        t_timer->m_seconds += seconds;
        ++t_timer->m_count;
    }
}

VulkanDevice::VulkanDevice(std::string id, const DeviceRecord& record) : m_record(record) {
    m_stream.device = this;
    m_info.id = std::move(id);
    m_info.kind = "vulkan";
    m_info.name = record.name;
    m_info.arch = "generic";
    m_info.has_device_timer = record.timestamp_valid_bits > 0;
    Value heaps = Value::array();
    for (const auto& h : record.heaps)
        heaps.push_back({{"bytes", h.bytes}, {"device_local", h.device_local}});
    m_info.properties = {{"vendor", vendor_name(record.vendor_id)},
                         {"vendor_id", hex(record.vendor_id)},
                         {"device_id", hex(record.device_id)},
                         {"device_type", record.type},
                         {"vulkan_device_type", record.vulkan_type},
                         {"api_version", record.api_version_text},
                         {"driver_version", record.driver_version_text},
                         {"driver_name", record.driver_name},
                         {"driver_info", record.driver_info},
                         {"memory_heaps", heaps},
                         {"global_memory_bytes", record.device_memory_bytes()},
                         {"subgroup_size", record.subgroup_size},
                         {"subgroup_arithmetic", record.subgroup_arithmetic},
                         {"timestamp_period_ns", double(record.timestamp_period_ns)},
                         {"timestamp_valid_bits", record.timestamp_valid_bits},
                         {"max_work_group_size", record.max_invocations},
                         {"local_memory_bytes", record.max_shared_bytes},
                         {"max_storage_buffer_range", record.max_storage_range},
                         {"queue_family", record.queue_family}};
    if (!m_info.has_device_timer)
        m_info.properties["timer"] =
            "host: queue family " + std::to_string(record.queue_family) + " has no timestamps";
}

VulkanDevice::~VulkanDevice() {
    if (!m_device)
        return;
    vkDeviceWaitIdle(m_device);
    if (m_flush)
        destroy(m_flush);
    for (auto& [key, p] : m_pipelines) {
        vkDestroyPipeline(m_device, p.pipeline, nullptr);
        vkDestroyPipelineLayout(m_device, p.layout, nullptr);
        vkDestroyDescriptorSetLayout(m_device, p.set_layout, nullptr);
        vkDestroyShaderModule(m_device, p.module, nullptr);
    }
    if (m_descriptors)
        vkDestroyDescriptorPool(m_device, m_descriptors, nullptr);
    if (m_queries)
        vkDestroyQueryPool(m_device, m_queries, nullptr);
    if (m_fence)
        vkDestroyFence(m_device, m_fence, nullptr);
    if (m_pool)
        vkDestroyCommandPool(m_device, m_pool, nullptr);
    vkDestroyDevice(m_device, nullptr);
}

void VulkanDevice::open() {
    std::call_once(m_open_once, [this] {
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue{};
        queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
        queue.queueFamilyIndex = m_record.queue_family;
        queue.queueCount = 1;
        queue.pQueuePriorities = &priority;
        VkDeviceCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
        info.queueCreateInfoCount = 1;
        info.pQueueCreateInfos = &queue;
        VkDevice device = VK_NULL_HANDLE;
        check(vkCreateDevice(m_record.physical, &info, nullptr, &device), "vkCreateDevice");
        m_device = device; // the destructor releases what follows, if a step throws
        vkGetDeviceQueue(m_device, m_record.queue_family, 0, &m_queue);

        VkCommandPoolCreateInfo pool{};
        pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool.queueFamilyIndex = m_record.queue_family;
        check(vkCreateCommandPool(m_device, &pool, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo cmd{};
        cmd.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        cmd.commandPool = m_pool;
        cmd.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cmd.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(m_device, &cmd, &m_cmd), "vkAllocateCommandBuffers");
        VkFenceCreateInfo fence{};
        fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        check(vkCreateFence(m_device, &fence, nullptr, &m_fence), "vkCreateFence");
        if (m_record.timestamp_valid_bits > 0) {
            VkQueryPoolCreateInfo q{};
            q.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
            q.queryType = VK_QUERY_TYPE_TIMESTAMP;
            q.queryCount = 2;
            check(vkCreateQueryPool(m_device, &q, nullptr, &m_queries), "vkCreateQueryPool");
        }
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxBindings};
        VkDescriptorPoolCreateInfo dp{};
        dp.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
        dp.maxSets = 1;
        dp.poolSizeCount = 1;
        dp.pPoolSizes = &size;
        check(vkCreateDescriptorPool(m_device, &dp, nullptr, &m_descriptors),
              "vkCreateDescriptorPool");

        // Buffers live in device-local memory; where the largest device-local heap is also
        // host-visible and coherent (a CPU device, an integrated GPU) they are mapped, else
        // transfers go through staging buffers.
        VkPhysicalDeviceMemoryProperties memory{};
        vkGetPhysicalDeviceMemoryProperties(m_record.physical, &memory);
        const VkMemoryPropertyFlags mapped = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                             VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const auto largest = m_record.device_memory_bytes();
        m_buffer_flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
            const auto& t = memory.memoryTypes[i];
            if ((t.propertyFlags & mapped) == mapped &&
                memory.memoryHeaps[t.heapIndex].size == largest) {
                m_buffer_flags = mapped;
                m_mapped_buffers = true;
                break;
            }
        }
        m_info.properties["buffers"] = m_mapped_buffers
                                           ? "device-local memory, host-visible: mapped"
                                           : "device-local memory, through staging copies";
    });
    if (!m_device || !m_descriptors)
        throw std::runtime_error(m_info.id + " could not be opened (an earlier attempt failed)");
}

std::uint32_t VulkanDevice::memory_type(std::uint32_t allowed, VkMemoryPropertyFlags want) const {
    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(m_record.physical, &memory);
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i)
        if ((allowed & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want)
            return i;
    return UINT32_MAX;
}

BufferHandle* VulkanDevice::create_buffer(VkDeviceSize bytes, bool host_visible) {
    open();
    auto handle = std::make_unique<BufferHandle>();
    handle->size = std::max<VkDeviceSize>(bytes, 16);
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = (handle->size + 15) / 16 * 16;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(m_device, &info, nullptr, &handle->buffer), "vkCreateBuffer");
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(m_device, handle->buffer, &req);
    const VkMemoryPropertyFlags want =
        host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                     : m_buffer_flags;
    std::uint32_t type = memory_type(req.memoryTypeBits, want);
    if (type == UINT32_MAX && !host_visible)
        type = memory_type(req.memoryTypeBits, 0);
    if (type == UINT32_MAX) {
        vkDestroyBuffer(m_device, handle->buffer, nullptr);
        throw std::runtime_error("no memory type of " + m_info.id + " holds a storage buffer");
    }
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    if (const VkResult rc = vkAllocateMemory(m_device, &alloc, nullptr, &handle->memory);
        rc != VK_SUCCESS) {
        vkDestroyBuffer(m_device, handle->buffer, nullptr);
        throw std::runtime_error(describe_error("vkAllocateMemory", rc) + " (" +
                                 std::to_string(req.size) + " bytes)");
    }
    vkBindBufferMemory(m_device, handle->buffer, handle->memory, 0);
    if (host_visible || m_mapped_buffers) {
        void* p = nullptr;
        if (vkMapMemory(m_device, handle->memory, 0, VK_WHOLE_SIZE, 0, &p) == VK_SUCCESS)
            handle->mapped = static_cast<char*>(p);
    }
    return handle.release();
}

void VulkanDevice::destroy(BufferHandle* b) noexcept {
    if (!b)
        return;
    if (b->memory) {
        if (b->mapped)
            vkUnmapMemory(m_device, b->memory);
        vkDestroyBuffer(m_device, b->buffer, nullptr);
        vkFreeMemory(m_device, b->memory, nullptr);
    }
    b->magic = 0;
    delete b;
}

void* VulkanDevice::allocate(std::size_t bytes) {
    return create_buffer(bytes, false);
}

void VulkanDevice::release(void* buffer) noexcept {
    if (!buffer)
        return;
    std::lock_guard lock(m_mutex);
    destroy(static_cast<BufferHandle*>(buffer));
}

template <class Record> void VulkanDevice::submit(Record record) {
    std::lock_guard lock(m_mutex);
    check(vkResetCommandBuffer(m_cmd, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(m_cmd, &begin), "vkBeginCommandBuffer");
    // Earlier submissions' writes (and the host's) are visible to this one's reads and
    // writes; this one's are visible to the host once its fence signals.
    VkMemoryBarrier in{};
    in.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    in.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
    in.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(m_cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                         VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &in, 0, nullptr, 0, nullptr);
    record(m_cmd);
    VkMemoryBarrier out{};
    out.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    out.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    out.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(m_cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                         1, &out, 0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &m_cmd;
    check(vkQueueSubmit(m_queue, 1, &submit, m_fence), "vkQueueSubmit");
    const VkResult waited = vkWaitForFences(m_device, 1, &m_fence, VK_TRUE, UINT64_MAX);
    vkResetFences(m_device, 1, &m_fence);
    check(waited, "vkWaitForFences");
}

void VulkanDevice::copy(const BufferHandle& from, VkDeviceSize from_offset, const BufferHandle& to,
                        VkDeviceSize to_offset, VkDeviceSize bytes) {
    submit([&](VkCommandBuffer c) {
        const VkBufferCopy region{from.offset + from_offset, to.offset + to_offset, bytes};
        vkCmdCopyBuffer(c, from.buffer, to.buffer, 1, &region);
    });
}

void VulkanDevice::upload_at(void* dst, std::size_t offset, const void* src, std::size_t bytes) {
    if (bytes == 0)
        return;
    auto* b = static_cast<BufferHandle*>(dst);
    if (offset + bytes > b->size)
        throw std::out_of_range("vulkan upload past the end of the buffer");
    if (b->mapped) {
        std::lock_guard lock(m_mutex); // no dispatch runs while the host writes
        std::memcpy(b->mapped + offset, src, bytes);
        return;
    }
    BufferHandle* s = create_buffer(bytes, true);
    try {
        std::memcpy(s->mapped, src, bytes);
        copy(*s, 0, *b, offset, bytes);
    } catch (...) {
        release(s);
        throw;
    }
    release(s);
}

void VulkanDevice::download_at(void* dst, const void* src, std::size_t offset, std::size_t bytes) {
    if (bytes == 0)
        return;
    const auto* b = static_cast<const BufferHandle*>(src);
    if (offset + bytes > b->size)
        throw std::out_of_range("vulkan download past the end of the buffer");
    if (b->mapped) {
        std::lock_guard lock(m_mutex);
        std::memcpy(dst, b->mapped + offset, bytes);
        return;
    }
    BufferHandle* s = create_buffer(bytes, true);
    try {
        copy(*b, offset, *s, 0, bytes);
        std::memcpy(dst, s->mapped, bytes);
    } catch (...) {
        release(s);
        throw;
    }
    release(s);
}

void VulkanDevice::upload(void* dst, const void* src, std::size_t bytes) {
    upload_at(dst, 0, src, bytes);
}

void VulkanDevice::download(void* dst, const void* src, std::size_t bytes) {
    download_at(dst, src, 0, bytes);
}

void* VulkanDevice::view(void* buffer, std::size_t offset, std::size_t bytes) {
    const auto* b = static_cast<const BufferHandle*>(buffer);
    const auto align = std::max<std::uint64_t>(m_record.min_storage_offset_alignment, 1);
    if ((b->offset + offset) % align != 0 || offset + bytes > b->size)
        return nullptr;
    auto* v = new BufferHandle;
    v->buffer = b->buffer;
    v->offset = b->offset + offset;
    v->size = std::max<std::size_t>(bytes, 1);
    v->mapped = b->mapped ? b->mapped + offset : nullptr;
    return v;
}

void VulkanDevice::release_view(void* view) noexcept {
    delete static_cast<BufferHandle*>(view);
}

void* VulkanDevice::stream() {
    open();
    return &m_stream;
}

double VulkanDevice::time_launches(const std::function<void()>& launch, int count) {
    open();
    if (!m_queries)
        return Device::time_launches(launch, count);
    LaunchTimer timer;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        launch();
    if (timer.count() > 0)
        return timer.seconds();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void VulkanDevice::flush_caches() {
    open();
    if (!m_flush) {
        const auto bytes = std::min<std::uint64_t>(
            {256 * kMiB, std::max<std::uint64_t>(m_record.device_memory_bytes() / 8, 16 * kMiB),
             m_record.max_storage_range});
        m_flush = create_buffer(bytes, false);
    }
    submit([&](VkCommandBuffer c) {
        vkCmdFillBuffer(c, m_flush->buffer, 0, VK_WHOLE_SIZE, 0x3f800000u);
    });
}

const VulkanDevice::Pipeline& VulkanDevice::pipeline(const char* name,
                                                     std::array<std::uint32_t, 2> local) {
    std::lock_guard lock(m_mutex);
    const auto key = std::make_tuple(std::string(name), local[0], local[1]);
    if (auto it = m_pipelines.find(key); it != m_pipelines.end())
        return it->second;
    const Shader& s = shader(name);
    Pipeline p;
    p.bindings = s.bindings;
    auto fail = [&](VkResult rc, const char* call) {
        if (p.pipeline)
            vkDestroyPipeline(m_device, p.pipeline, nullptr);
        if (p.layout)
            vkDestroyPipelineLayout(m_device, p.layout, nullptr);
        if (p.set_layout)
            vkDestroyDescriptorSetLayout(m_device, p.set_layout, nullptr);
        if (p.module)
            vkDestroyShaderModule(m_device, p.module, nullptr);
        throw std::runtime_error(describe_error(call, rc) + " (shader " + std::string(name) +
                                 " on " + m_info.id + ")");
    };
    VkShaderModuleCreateInfo module{};
    module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    module.codeSize = s.words * sizeof(std::uint32_t);
    module.pCode = s.code;
    if (const auto rc = vkCreateShaderModule(m_device, &module, nullptr, &p.module); rc)
        fail(rc, "vkCreateShaderModule");
    std::vector<VkDescriptorSetLayoutBinding> bindings(s.bindings);
    for (std::uint32_t i = 0; i < s.bindings; ++i)
        bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                       nullptr};
    VkDescriptorSetLayoutCreateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set.bindingCount = s.bindings;
    set.pBindings = bindings.data();
    if (const auto rc = vkCreateDescriptorSetLayout(m_device, &set, nullptr, &p.set_layout); rc)
        fail(rc, "vkCreateDescriptorSetLayout");
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    if (const auto rc = vkCreatePipelineLayout(m_device, &layout, nullptr, &p.layout); rc)
        fail(rc, "vkCreatePipelineLayout");
    const VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo spec{};
    spec.mapEntryCount = 2;
    spec.pMapEntries = entries;
    spec.dataSize = sizeof local;
    spec.pData = local.data();
    VkComputePipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = p.module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &spec;
    info.layout = p.layout;
    if (const auto rc =
            vkCreateComputePipelines(m_device, VK_NULL_HANDLE, 1, &info, nullptr, &p.pipeline);
        rc)
        fail(rc, "vkCreateComputePipelines");
    return m_pipelines.emplace(key, p).first->second;
}

double VulkanDevice::dispatch(const Dispatch& d) {
    open();
    std::lock_guard lock(m_mutex);
    const Pipeline& p = pipeline(d.shader, d.local);
    if (d.buffers.size() != p.bindings)
        throw std::invalid_argument("vulkan shader " + std::string(d.shader) + " binds " +
                                    std::to_string(p.bindings) + " buffers, the launch gave " +
                                    std::to_string(d.buffers.size()));
    if (d.push_bytes > kPushBytes)
        throw std::invalid_argument("vulkan push constants above 64 bytes");
    std::vector<VkDescriptorBufferInfo> infos(d.buffers.size());
    for (std::size_t i = 0; i < d.buffers.size(); ++i) {
        const BufferHandle* b = d.buffers[i];
        if (!b || b->magic != BufferHandle::kMagic)
            throw std::invalid_argument("vulkan kernel: buffer " + std::to_string(i) +
                                        " is not a buffer of a vulkan device");
        if (b->size > m_record.max_storage_range)
            throw std::runtime_error("vulkan kernel: a buffer of " + std::to_string(b->size) +
                                     " bytes is past " + m_info.id + "'s maxStorageBufferRange (" +
                                     std::to_string(m_record.max_storage_range) +
                                     " bytes); use smaller sizes");
        infos[i] = {b->buffer, b->offset, b->size};
    }
    check(vkResetDescriptorPool(m_device, m_descriptors, 0), "vkResetDescriptorPool");
    VkDescriptorSetAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = m_descriptors;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &p.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(vkAllocateDescriptorSets(m_device, &alloc, &set), "vkAllocateDescriptorSets");
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (std::size_t i = 0; i < infos.size(); ++i) {
        writes[i] = {};
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = set;
        writes[i].dstBinding = std::uint32_t(i);
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(m_device, std::uint32_t(writes.size()), writes.data(), 0, nullptr);
    submit([&](VkCommandBuffer c) {
        if (m_queries) {
            vkCmdResetQueryPool(c, m_queries, 0, 2);
            vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, m_queries, 0);
        }
        vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
        vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                                nullptr);
        if (d.push_bytes > 0)
            vkCmdPushConstants(c, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, d.push_bytes, d.push);
        vkCmdDispatch(c, d.groups[0], d.groups[1], 1);
        if (m_queries)
            vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m_queries, 1);
    });
    if (!m_queries)
        return 0;
    std::uint64_t stamps[2] = {};
    check(vkGetQueryPoolResults(m_device, m_queries, 0, 2, sizeof stamps, stamps,
                                sizeof(std::uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    const std::uint64_t mask = m_record.timestamp_valid_bits >= 64
                                   ? ~std::uint64_t(0)
                                   : (std::uint64_t(1) << m_record.timestamp_valid_bits) - 1;
    const std::uint64_t ticks = (stamps[1] - stamps[0]) & mask;
    const double seconds = double(ticks) * double(m_record.timestamp_period_ns) * 1e-9;
    LaunchTimer::add(seconds);
    return seconds;
}

std::string VulkanDevice::prepared_identity() const {
    return "Vulkan " + m_record.api_version_text + " | " + m_record.name + " (" +
           std::to_string(m_record.vendor_id) + ":" + std::to_string(m_record.device_id) +
           ") | driver " + m_record.driver_name + " " + m_record.driver_version_text + " " +
           m_record.driver_info;
}

void VulkanDevice::adopt_prepared(const DeviceInfo& measured) {
    std::call_once(m_peaks_once, [&] {
        m_info.peak_bandwidth_gbs = measured.peak_bandwidth_gbs;
        m_info.peak_bandwidth_source = measured.peak_bandwidth_source;
        m_info.peak_gflops = measured.peak_gflops;
        m_info.peak_gflops_source = measured.peak_gflops_source;
        m_info.ceilings = measured.ceilings;
        if (const Value* bytes = measured.properties.find("probe_bytes"))
            m_info.properties["probe_bytes"] = *bytes;
    });
}

void VulkanDevice::prepare() {
    std::call_once(m_peaks_once, [this] {
        struct Probe {
            const char* shader;
            const char* id;
            int buffers;           // vec4 buffers of the working set
            double bytes_per_vec4; // moved per vec4 of one buffer
        };
        const Probe probes[] = {{"probe_read", "device.read", 1, 16.0},
                                {"probe_copy", "device.copy", 2, 32.0},
                                {"probe_triad", "device.triad", 3, 48.0}};
        for (const auto& probe : probes) {
            Ceiling c;
            c.id = probe.id;
            c.kind = "bandwidth";
            c.level = "device";
            try {
                c.value =
                    probe_bandwidth(probe.shader, probe.buffers, probe.bytes_per_vec4, c.method);
                c.working_set_bytes =
                    double(m_info.properties.integer_or("probe_bytes", 0)) * probe.buffers;
            } catch (const std::exception& e) {
                c.value = 0;
                c.method = std::string("Vulkan ") + probe.shader + " failed: " + e.what();
            }
            m_info.ceilings.push_back(c);
            if (c.id == std::string("device.copy")) {
                m_info.peak_bandwidth_gbs = c.value;
                m_info.peak_bandwidth_source = c.value > 0 ? "measured: " + c.method : c.method;
            }
        }
        try {
            probe_flops();
        } catch (const std::exception& e) {
            m_info.peak_gflops = 0;
            m_info.peak_gflops_source = std::string("Vulkan FMA probe failed: ") + e.what();
        }
        Ceiling fma;
        fma.id = "fma.fp32.all";
        fma.kind = "compute";
        fma.value = m_info.peak_gflops;
        fma.method = m_info.peak_gflops_source.rfind("measured: ", 0) == 0
                         ? m_info.peak_gflops_source.substr(10)
                         : m_info.peak_gflops_source;
        m_info.ceilings.push_back(fma);
    });
}

// One bandwidth probe: `buffers` buffers of the probe's size (128 MiB where the device
// allows it), the shader over all of them, the best of kProbeRuns - 1 timed dispatches.
double VulkanDevice::probe_bandwidth(const char* name, int buffers, double bytes_per_vec4,
                                     std::string& method) {
    open();
    std::uint64_t bytes = 128 * kMiB;
    bytes = std::min<std::uint64_t>(bytes, m_record.max_storage_range);
    if (m_record.max_allocation_bytes > 0)
        bytes = std::min<std::uint64_t>(bytes, m_record.max_allocation_bytes);
    bytes = std::min<std::uint64_t>(bytes, m_record.device_memory_bytes() / 8);
    bytes = bytes / kMiB * kMiB;
    if (bytes < kMiB)
        throw std::runtime_error("the device allows no 1 MiB buffer");
    m_info.properties["probe_bytes"] = bytes;
    announce_prepare_step(m_info.id + ": " + name + ", " + std::to_string(bytes / kMiB) +
                          " MiB x " + std::to_string(buffers));
    const std::uint32_t local = std::min<std::uint32_t>(256, m_record.max_invocations);
    const std::uint64_t n4 = bytes / 16;
    const std::uint32_t groups = groups_for(n4, local, m_record.max_group_count_x);
    std::vector<BufferHandle*> owned;
    struct Release {
        VulkanDevice* device;
        std::vector<BufferHandle*>& buffers;
        ~Release() {
            for (auto* b : buffers)
                device->release(b);
        }
    } release_all{this, owned};
    Dispatch d;
    d.shader = name;
    d.local = {local, 1};
    d.groups = {groups, 1};
    for (int i = 0; i < buffers; ++i)
        owned.push_back(create_buffer(bytes, false));
    if (std::string_view(name) == "probe_read") // one sum per invocation
        owned.push_back(create_buffer(std::uint64_t(groups) * local * sizeof(float), false));
    for (auto* b : owned) {
        submit([&](VkCommandBuffer c) { vkCmdFillBuffer(c, b->buffer, 0, VK_WHOLE_SIZE, 0); });
        d.buffers.push_back(b);
    }
    struct {
        std::uint32_t n4;
        float s;
    } push{std::uint32_t(n4), 0.5f};
    d.push = &push;
    d.push_bytes = sizeof push;
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < kProbeRuns; ++run) {
        const auto t0 = std::chrono::steady_clock::now();
        double s = dispatch(d);
        if (!m_queries)
            s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (run > 0 && s > 0)
            best = std::min(best, s);
    }
    if (!std::isfinite(best))
        throw std::runtime_error("the timestamps reported no time");
    const double gbs = bytes_per_vec4 * double(n4) / best / 1e9;
    method = std::string("Vulkan ") + name + " shader, " + std::to_string(bytes / kMiB) +
             " MiB x " + std::to_string(buffers) + ", vec4, " + std::to_string(groups) + " x " +
             std::to_string(local) + " invocations, " + (m_queries ? "timestamps" : "host time") +
             ", best of " + std::to_string(kProbeRuns - 1);
    return gbs;
}

void VulkanDevice::probe_flops() {
    announce_prepare_step(m_info.id + ": FMA probe");
    open();
    const std::uint32_t local = std::min<std::uint32_t>(256, m_record.max_invocations);
    const std::uint32_t groups = std::min<std::uint32_t>(1024, m_record.max_group_count_x);
    BufferHandle* out = create_buffer(std::uint64_t(groups) * local * sizeof(float), false);
    struct Release {
        VulkanDevice* device;
        BufferHandle* b;
        ~Release() { device->release(b); }
    } release_out{this, out};
    struct {
        std::uint32_t iterations;
        float a, b;
    } push{256, 0.999f, 0.001f};
    Dispatch d;
    d.shader = "probe_fma";
    d.local = {local, 1};
    d.groups = {groups, 1};
    d.buffers = {out};
    d.push = &push;
    d.push_bytes = sizeof push;
    auto timed = [&] {
        const auto t0 = std::chrono::steady_clock::now();
        const double s = dispatch(d);
        return m_queries
                   ? s
                   : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    // Long enough to time well: about 20 ms a dispatch (a GPU runs 256 iterations in
    // microseconds).
    const double first = timed();
    if (first > 0 && first < 0.02)
        push.iterations = std::uint32_t(std::clamp(256.0 * 0.02 / first, 256.0, double(1u << 20)));
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < kProbeRuns; ++run) {
        const double s = timed();
        if (run > 0 && s > 0)
            best = std::min(best, s);
    }
    if (!std::isfinite(best))
        throw std::runtime_error("the timestamps reported no time");
    const double flops = double(groups) * local * double(push.iterations) * 64.0;
    m_info.peak_gflops = flops / best / 1e9;
    m_info.peak_gflops_source = "measured: Vulkan probe_fma shader, " + std::to_string(groups) +
                                " x " + std::to_string(local) + " invocations x " +
                                std::to_string(push.iterations) + " x 8 vec4 FMA chains, best of " +
                                std::to_string(kProbeRuns - 1) + " (" + fixed(flops / 1e9, 2) +
                                " GFLOP each)";
}

std::vector<std::shared_ptr<Device>> VulkanProvider::enumerate() {
    std::lock_guard lock(m_mutex);
    if (!m_enumerated) {
        const auto& inventory = Inventory::instance();
        for (std::size_t i = 0; i < inventory.devices.size(); ++i)
            m_devices.push_back(std::make_shared<VulkanDevice>("vulkan:" + std::to_string(i),
                                                               inventory.devices[i]));
        m_enumerated = true;
    }
    return m_devices;
}

} // namespace switchyard::vulkan
