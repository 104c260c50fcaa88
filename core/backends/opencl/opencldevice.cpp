// SPDX-License-Identifier: MIT
#include "opencldevice.h"

#include "clerror.h"
#include "launchevents.h"
#include "openclkernels.h"
#include "programcache.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace switchyard::opencl {

namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

struct Event {
    cl_event e = nullptr;
    ~Event() {
        if (e)
            clReleaseEvent(e);
    }
    double seconds() const {
        check(clWaitForEvents(1, &e), "clWaitForEvents");
        cl_ulong start = 0, end = 0;
        check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
              "clGetEventProfilingInfo");
        check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
              "clGetEventProfilingInfo");
        return end > start ? double(end - start) * 1e-9 : 0.0;
    }
};

struct Buffer {
    cl_mem m = nullptr;
    ~Buffer() {
        if (m)
            clReleaseMemObject(m);
    }
};

// The probes' one timing loop: sets the kernel's arguments, launches it kProbeRuns times
// over `global` work-items, and returns the best device time of all but the first run
// (which warms up page faults and clocks).
constexpr int kProbeRuns = 6;
template <class SetArgs>
double best_launch_seconds(cl_command_queue q, const ProgramCache::Kernel& k, std::size_t global,
                           std::size_t local, SetArgs set_args) {
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < kProbeRuns; ++run) {
        Event ev;
        {
            std::lock_guard lock(*k.lock);
            set_args(k.kernel);
            check(
                clEnqueueNDRangeKernel(q, k.kernel, 1, nullptr, &global, &local, 0, nullptr, &ev.e),
                "clEnqueueNDRangeKernel");
        }
        const double s = ev.seconds();
        if (run > 0 && s > 0)
            best = std::min(best, s);
    }
    if (!std::isfinite(best))
        throw std::runtime_error("the profiling events reported no time");
    return best;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

OpenClDevice::OpenClDevice(std::string id, const DeviceRecord& record) : m_record(record) {
    m_info.id = std::move(id);
    m_info.kind = "opencl";
    m_info.name = record.name;
    m_info.arch = "generic";
    m_info.has_device_timer = true;
    m_info.properties = {{"platform", record.platform_name},
                         {"platform_vendor", record.platform_vendor},
                         {"platform_version", record.platform_version},
                         {"vendor", record.vendor},
                         {"version", record.version},
                         {"driver_version", record.driver_version},
                         {"opencl_c_version", record.opencl_c_version},
                         {"device_type", record.type},
                         {"compute_units", record.compute_units},
                         {"global_memory_bytes", record.global_memory_bytes},
                         {"global_memory_cache_bytes", record.global_memory_cache_bytes},
                         {"local_memory_bytes", record.local_memory_bytes},
                         {"max_alloc_bytes", record.max_alloc_bytes},
                         {"max_work_group_size", record.max_work_group_size},
                         {"max_clock_mhz", record.max_clock_mhz}};
}

OpenClDevice::~OpenClDevice() {
    if (m_flush)
        clReleaseMemObject(m_flush);
    if (m_queue)
        clReleaseCommandQueue(m_queue);
    if (m_context)
        clReleaseContext(m_context);
}

cl_command_queue OpenClDevice::queue() {
    std::call_once(m_queue_once, [this] {
        cl_int rc = CL_SUCCESS;
        const cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(m_record.platform), 0};
        cl_context context = clCreateContext(props, 1, &m_record.device, nullptr, nullptr, &rc);
        check(rc, "clCreateContext");
        cl_command_queue queue =
            clCreateCommandQueue(context, m_record.device, CL_QUEUE_PROFILING_ENABLE, &rc);
        if (rc != CL_SUCCESS) {
            clReleaseContext(context);
            check(rc, "clCreateCommandQueue");
        }
        m_context = context;
        m_queue = queue;
    });
    return m_queue;
}

void* OpenClDevice::stream() {
    return queue();
}

void* OpenClDevice::allocate(std::size_t bytes) {
    queue();
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(m_context, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 16),
                              nullptr, &rc);
    check(rc, "clCreateBuffer");
    return m;
}

void OpenClDevice::release(void* buffer) noexcept {
    if (buffer)
        clReleaseMemObject(static_cast<cl_mem>(buffer));
}

void OpenClDevice::upload(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0)
        return;
    check(clEnqueueWriteBuffer(queue(), static_cast<cl_mem>(dst), CL_TRUE, 0, bytes, src, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
}

void OpenClDevice::download(void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0)
        return;
    check(clEnqueueReadBuffer(queue(), static_cast<cl_mem>(const_cast<void*>(src)), CL_TRUE, 0,
                              bytes, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
}

void* OpenClDevice::view(void* buffer, std::size_t offset, std::size_t bytes) {
    cl_uint align_bits = 0;
    if (clGetDeviceInfo(m_record.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                        &align_bits, nullptr) != CL_SUCCESS ||
        align_bits == 0 || offset % (align_bits / 8 ? align_bits / 8 : 1) != 0)
        return nullptr;
    cl_buffer_region region{offset, std::max<std::size_t>(bytes, 1)};
    cl_int rc = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(static_cast<cl_mem>(buffer), CL_MEM_READ_WRITE,
                                   CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
    return rc == CL_SUCCESS ? sub : nullptr;
}

void OpenClDevice::release_view(void* view) noexcept {
    release(view);
}

void OpenClDevice::upload_at(void* dst, std::size_t offset, const void* src, std::size_t bytes) {
    if (bytes == 0)
        return;
    check(clEnqueueWriteBuffer(queue(), static_cast<cl_mem>(dst), CL_TRUE, offset, bytes, src, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
}

void OpenClDevice::download_at(void* dst, const void* src, std::size_t offset, std::size_t bytes) {
    if (bytes == 0)
        return;
    check(clEnqueueReadBuffer(queue(), static_cast<cl_mem>(const_cast<void*>(src)), CL_TRUE, offset,
                              bytes, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
}

void OpenClDevice::synchronize() {
    check(clFinish(queue()), "clFinish");
}

double OpenClDevice::time_launches(const std::function<void()>& launch, int count) {
    queue();
    synchronize();
    LaunchEvents events;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        launch();
    const double device_s = events.seconds();
    if (events.count() > 0)
        return device_s;
    synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void OpenClDevice::flush_caches() {
    auto* q = queue();
    if (!m_flush) {
        m_flush_bytes = std::size_t(std::min<cl_ulong>(
            std::max<cl_ulong>(2 * m_record.global_memory_cache_bytes, 32 * kMiB),
            std::max<cl_ulong>(m_record.max_alloc_bytes, 16 * kMiB)));
        m_flush = static_cast<cl_mem>(allocate(m_flush_bytes));
    }
    const cl_float one = 1.0f;
    check(clEnqueueFillBuffer(q, m_flush, &one, sizeof one, 0, m_flush_bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
    synchronize();
}

void OpenClDevice::prepare() {
    std::call_once(m_peaks_once, [this] {
        try {
            probe_bandwidth();
        } catch (const std::exception& e) {
            m_info.peak_bandwidth_gbs = 0;
            m_info.peak_bandwidth_source = std::string("OpenCL copy probe failed: ") + e.what();
        }
        try {
            probe_flops();
        } catch (const std::exception& e) {
            m_info.peak_gflops = 0;
            m_info.peak_gflops_source = std::string("OpenCL FMA probe failed: ") + e.what();
        }
        // The same two figures as the device's ceilings (the roofline's lines); a failed
        // probe keeps its entry with value 0 and the reason.
        Ceiling copy;
        copy.id = "device.copy";
        copy.kind = "bandwidth";
        copy.level = "device";
        copy.value = m_info.peak_bandwidth_gbs;
        copy.method = m_info.peak_bandwidth_source.rfind("measured: ", 0) == 0
                          ? m_info.peak_bandwidth_source.substr(10)
                          : m_info.peak_bandwidth_source;
        copy.working_set_bytes = m_probe_copy_bytes;
        Ceiling fma;
        fma.id = "fma.fp32.all";
        fma.kind = "compute";
        fma.value = m_info.peak_gflops;
        fma.method = m_info.peak_gflops_source.rfind("measured: ", 0) == 0
                         ? m_info.peak_gflops_source.substr(10)
                         : m_info.peak_gflops_source;
        m_info.ceilings = {copy, fma};
    });
}

void OpenClDevice::probe_bandwidth() {
    auto* q = queue();
    // 256 MiB per buffer where the device allows it (max alloc, a quarter of its memory).
    std::size_t bytes = 256 * kMiB;
    bytes = std::size_t(std::min<cl_ulong>(bytes, m_record.max_alloc_bytes));
    bytes = std::size_t(std::min<cl_ulong>(bytes, m_record.global_memory_bytes / 4));
    bytes = bytes / kMiB * kMiB;
    if (bytes < kMiB)
        throw std::runtime_error("the device allows no 1 MiB buffer");
    Buffer src{static_cast<cl_mem>(allocate(bytes))}, dst{static_cast<cl_mem>(allocate(bytes))};
    const cl_float zero = 0.0f;
    check(clEnqueueFillBuffer(q, src.m, &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
    check(clEnqueueFillBuffer(q, dst.m, &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
    const auto k = programs().kernel(q, "probe_copy");
    const cl_ulong n4 = bytes / 16;
    const std::size_t local = std::min<std::size_t>(256, k.max_work_group);
    const std::size_t global = (std::size_t(n4) + local - 1) / local * local;
    const double best = best_launch_seconds(q, k, global, local, [&](cl_kernel kernel) {
        check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &src.m), "clSetKernelArg");
        check(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dst.m), "clSetKernelArg");
        check(clSetKernelArg(kernel, 2, sizeof n4, &n4), "clSetKernelArg");
    });
    m_info.peak_bandwidth_gbs = 2.0 * double(bytes) / best / 1e9;
    m_probe_copy_bytes = 2.0 * double(bytes);
    m_info.peak_bandwidth_source = "measured: OpenCL copy probe, " + std::to_string(bytes / kMiB) +
                                   " MiB, read+write, best of " + std::to_string(kProbeRuns - 1);
}

void OpenClDevice::probe_flops() {
    auto* q = queue();
    const auto k = programs().kernel(q, "probe_fma");
    const std::size_t local = std::min<std::size_t>(256, k.max_work_group);
    const std::size_t items = std::max<std::size_t>(m_record.compute_units, 1) * 2048;
    const std::size_t global = (items + local - 1) / local * local;
    const cl_int iterations = 1024;
    Buffer out{static_cast<cl_mem>(allocate(global * sizeof(float)))};
    const cl_float a = 0.999f, b = 0.001f;
    const double best = best_launch_seconds(q, k, global, local, [&](cl_kernel kernel) {
        check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &out.m), "clSetKernelArg");
        check(clSetKernelArg(kernel, 1, sizeof iterations, &iterations), "clSetKernelArg");
        check(clSetKernelArg(kernel, 2, sizeof a, &a), "clSetKernelArg");
        check(clSetKernelArg(kernel, 3, sizeof b, &b), "clSetKernelArg");
    });
    const double flops = double(global) * double(iterations) * 128.0;
    m_info.peak_gflops = flops / best / 1e9;
    m_info.peak_gflops_source =
        "measured: OpenCL FMA probe, " + std::to_string(global) + " work-items x " +
        std::to_string(iterations) + " x 8 float8 FMA chains, best of " +
        std::to_string(kProbeRuns - 1) + " (" + fixed(flops / 1e9, 2) + " GFLOP each)";
}

std::vector<std::shared_ptr<Device>> OpenClProvider::enumerate() {
    std::lock_guard lock(m_mutex);
    if (!m_enumerated) {
        const auto& inventory = Inventory::instance();
        for (std::size_t i = 0; i < inventory.devices.size(); ++i)
            m_devices.push_back(std::make_shared<OpenClDevice>("opencl:" + std::to_string(i),
                                                               inventory.devices[i]));
        m_enumerated = true;
    }
    return m_devices;
}

} // namespace switchyard::opencl
