// SPDX-License-Identifier: MIT
#pragma once

#include "inventory.h"

#include <switchyard/sdk/device.h>
#include <switchyard/sdk/plateaus.h>

#include <CL/cl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace switchyard::opencl {

/// One OpenCL device: an in-order queue with profiling enabled (created on first use),
/// buffers as cl_mem cast to void*, samples from profiling events.
class OpenClDevice final : public Device, public BufferViews, public PreparedState {
public:
    OpenClDevice(std::string id, const DeviceRecord& record);
    ~OpenClDevice() override;

    const DeviceInfo& info() const override { return m_info; }
    /// Measures the peaks through the device: a copy kernel (bandwidth) and an FMA
    /// kernel (fp32 FLOP/s). A failed probe leaves the peak at 0 and says why in its source.
    void prepare() override;
    /// The platform, the device, its driver and OpenCL versions, its compute units and
    /// memory: what the probes' figures depend on.
    std::string prepared_identity() const override;
    /// Takes an earlier prepare()'s peaks, ceilings and sweep instead of probing.
    void adopt_prepared(const DeviceInfo& measured) override;

    void* allocate(std::size_t bytes) override;
    void release(void* buffer) noexcept override;
    void upload(void* dst, const void* src, std::size_t bytes) override;
    void download(void* dst, const void* src, std::size_t bytes) override;

    /// Sub-buffers (clCreateSubBuffer) where the offset keeps CL_DEVICE_MEM_BASE_ADDR_ALIGN,
    /// and transfers at an offset: the profiler's guard zones around OpenCL buffers.
    void* view(void* buffer, std::size_t offset, std::size_t bytes) override;
    void release_view(void* view) noexcept override;
    void upload_at(void* dst, std::size_t offset, const void* src, std::size_t bytes) override;
    void download_at(void* dst, const void* src, std::size_t offset, std::size_t bytes) override;

    /// The cl_command_queue.
    void* stream() override;
    void synchronize() override;
    /// The sum of the launches' start→end times from their profiling events (host time
    /// when the launches enqueued nothing through this plugin).
    double time_launches(const std::function<void()>& launch, int count) override;
    /// Overwrites a buffer twice the device's global memory cache.
    void flush_caches() override;

private:
    cl_command_queue queue();
    void probe_bandwidth();
    void probe_flops();
    void add_sweep_ceilings();
    bool cpu_device() const;
    std::vector<SweepPoint> sweep_working_sets(std::size_t max_bytes);

    DeviceRecord m_record;
    DeviceInfo m_info;
    std::once_flag m_queue_once;
    std::once_flag m_peaks_once;
    double m_probe_copy_bytes = 0; // the copy probe's working set (source + destination)
    cl_context m_context = nullptr;
    cl_command_queue m_queue = nullptr;
    cl_mem m_flush = nullptr;
    std::size_t m_flush_bytes = 0;
};

/// Enumerates the OpenCL devices once (Inventory) as `opencl:0`, `opencl:1`, ...
class OpenClProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "opencl"; }
    std::vector<std::shared_ptr<Device>> enumerate() override;

private:
    std::mutex m_mutex;
    bool m_enumerated = false;
    std::vector<std::shared_ptr<Device>> m_devices;
};

} // namespace switchyard::opencl
