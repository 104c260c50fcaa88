// SPDX-License-Identifier: MIT
#include "opencldevice.h"

#include "clerror.h"
#include "launchevents.h"
#include "openclkernels.h"
#include "programcache.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
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
constexpr int kProbeRuns = 8;
// The working-set sweep: 16 KiB ... 512 MiB (x2), 3 launches a point (best of the last 2).
constexpr std::size_t kSweepMinBytes = std::size_t(16) << 10;
constexpr std::size_t kSweepMaxBytes = std::size_t(512) << 20;
constexpr int kSweepRuns = 3;
template <class SetArgs>
double best_launch_seconds(cl_command_queue q, const ProgramCache::Kernel& k, std::size_t global,
                           std::size_t local, SetArgs set_args, int runs = kProbeRuns) {
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < runs; ++run) {
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

namespace {

// Float4s per work-item for a launch over n4 of them: enough work-groups for every compute
// unit several times over, at most 64 (a 256 KiB block per 256-item group).
std::uint32_t per_item_for(cl_ulong n4, std::size_t local, cl_uint units) {
    const cl_ulong groups_wanted = cl_ulong(std::max<cl_uint>(units, 1)) * 8;
    const cl_ulong per = n4 / (cl_ulong(local) * groups_wanted);
    return std::uint32_t(std::clamp<cl_ulong>(per, 1, 64));
}
// Consecutive float4s per work-item (groups of one) on a CPU device: 8 work-items per
// compute unit, at most 64 Ki float4s (1 MiB) each.
std::uint32_t contiguous_per_item(cl_ulong n4, cl_uint units) {
    const cl_ulong items = cl_ulong(std::max<cl_uint>(units, 1)) * 8;
    return std::uint32_t(std::clamp<cl_ulong>(n4 / items, 1, 65536));
}
std::size_t global_for(cl_ulong n4, std::size_t local, std::uint32_t per_item) {
    const cl_ulong block = cl_ulong(local) * per_item;
    return std::size_t((n4 + block - 1) / block) * local;
}

// The host's data caches as a CPU OpenCL device sees them (sysfs; PoCL runs work-groups
// on every core): each level's size times the devices' compute units that have their own
// copy of it. Empty where sysfs has none.
std::vector<SweepCache> host_cache_levels(cl_uint units) {
    std::vector<SweepCache> out;
    for (int index = 0; index < 16; ++index) {
        const std::string dir =
            "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        auto read = [&](const char* name) {
            std::ifstream f(dir + name);
            std::string v;
            std::getline(f, v);
            return v;
        };
        const std::string level = read("level"), type = read("type"), size = read("size");
        if (level.empty())
            break;
        if (type == "Instruction" || size.empty())
            continue;
        double bytes = std::atof(size.c_str());
        if (size.back() == 'K')
            bytes *= 1024.0;
        else if (size.back() == 'M')
            bytes *= 1024.0 * 1024.0;
        // CPUs sharing this cache: "0-7", "0,1", "3".
        int sharing = 0;
        std::stringstream list(read("shared_cpu_list"));
        for (std::string part; std::getline(list, part, ',');) {
            const auto dash = part.find('-');
            sharing += dash == std::string::npos
                           ? 1
                           : std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
        }
        const double copies =
            std::max(1.0, double(std::max<cl_uint>(units, 1)) / double(std::max(sharing, 1)));
        out.push_back({"L" + level, bytes * copies});
    }
    std::sort(out.begin(), out.end(), [](const SweepCache& a, const SweepCache& b) {
        return a.capacity_bytes < b.capacity_bytes;
    });
    return out;
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

std::string OpenClDevice::prepared_identity() const {
    return "OpenCL | " + m_record.platform_name + " " + m_record.platform_version + " | " +
           m_record.name + " | driver " + m_record.driver_version + " | " +
           std::to_string(m_record.compute_units) + " CUs, " +
           std::to_string(m_record.global_memory_bytes) + " bytes";
}

void OpenClDevice::adopt_prepared(const DeviceInfo& measured) {
    std::call_once(m_peaks_once, [&] {
        m_info.peak_bandwidth_gbs = measured.peak_bandwidth_gbs;
        m_info.peak_bandwidth_source = measured.peak_bandwidth_source;
        m_info.peak_gflops = measured.peak_gflops;
        m_info.peak_gflops_source = measured.peak_gflops_source;
        m_info.ceilings = measured.ceilings;
        if (const Value* sweep = measured.properties.find("sweep"))
            m_info.properties["sweep"] = *sweep;
        for (const auto& c : m_info.ceilings)
            if (c.id == "device.copy")
                m_probe_copy_bytes = c.working_set_bytes;
    });
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
        try {
            add_sweep_ceilings();
        } catch (const std::exception& e) {
            m_info.properties["sweep"] = {{"error", e.what()}};
        }
    });
}

// The empirical per-level ceilings: sweep the working set, find the bandwidth plateaus and
// label each with the cache it matches (the host's levels for a CPU device, its global
// memory cache otherwise). Each cache plateau becomes "<level>.copy" with that cache's
// capacity, so a row that fits in a cache is judged against that cache's plateau instead
// of going unjudged; the memory plateau is kept in properties.sweep only (device.copy is
// the memory ceiling).
void OpenClDevice::add_sweep_ceilings() {
    std::size_t max_bytes = kSweepMaxBytes;
    max_bytes = std::size_t(std::min<cl_ulong>(max_bytes, m_record.max_alloc_bytes));
    max_bytes = std::size_t(std::min<cl_ulong>(max_bytes, m_record.global_memory_bytes / 4));
    if (max_bytes < 4 * kSweepMinBytes)
        return;
    const bool cpu_device = this->cpu_device();
    std::vector<SweepCache> caches =
        cpu_device ? host_cache_levels(m_record.compute_units) : std::vector<SweepCache>{};
    if (caches.empty() && m_record.global_memory_cache_bytes > 0)
        caches.push_back({cpu_device ? "LLC" : "L2", double(m_record.global_memory_cache_bytes)});
    const auto points = sweep_working_sets(max_bytes);
    const auto plateaus = detect_plateaus(points, caches, "device");
    for (auto& c : plateau_ceilings(plateaus, "x = a x + b in place, read+write"))
        m_info.ceilings.push_back(std::move(c));
    m_info.properties["sweep"] = sweep_json(points, plateaus, caches);
}

bool OpenClDevice::cpu_device() const {
    return m_record.type.find("CPU") != std::string::npos;
}

void OpenClDevice::probe_bandwidth() {
    auto* q = queue();
    // 256 MiB per buffer where the device allows it (max alloc, a quarter of its memory),
    // and 8x its global memory cache when it allows that: source and destination together
    // are then 16x the cache (PoCL on a 32 MiB L3: 512 MiB). A cache that large calls for no
    // more than 2x it per buffer, 4x together, as the CPU's DRAM probes hold (PoCL on a VM
    // that reports the host's 480 MiB L3: 1 GiB each instead of 3.75 GiB, which held ~8 GB
    // and took a minute).
    const cl_ulong cache = m_record.global_memory_cache_bytes;
    std::size_t bytes = std::size_t(std::max<cl_ulong>(
        256 * kMiB, std::min<cl_ulong>(8 * cache, std::max<cl_ulong>(1024 * kMiB, 2 * cache))));
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
    announce_prepare_step(m_info.id + ": building the probe kernels");
    const auto k = programs().kernel(q, "probe_copy");
    const cl_ulong n4 = bytes / 16;
    // Shapes, the best of each taken: one float4 per work-item in groups of 256 (what a
    // GPU likes), strided blocks of several, and on a CPU device contiguous runs per
    // work-item in groups of one (what PoCL vectorises: the first shape alone read
    // 1.15-1.40x below PoCL's own kernels).
    struct Shape {
        std::size_t local;
        std::uint32_t per_item, contiguous;
    };
    const std::size_t wide = std::min<std::size_t>(256, k.max_work_group);
    std::vector<Shape> shapes = {{wide, 1, 0}};
    // (Strided blocks read 2-6 GB/s on PoCL, against 23-31 for the others: GPUs only.)
    if (const auto p = per_item_for(n4, wide, m_record.compute_units); p > 1 && !cpu_device())
        shapes.push_back({wide, p, 0});
    if (cpu_device())
        shapes.push_back({1, contiguous_per_item(n4, m_record.compute_units), 1});
    double best = std::numeric_limits<double>::infinity();
    Shape best_shape = shapes.front();
    // Every form and shape's figure, for properties.copy_probe.
    Value tried = Value::array();
    auto note = [&](const char* form, const Shape& shape, double s) {
        tried.push_back({{"form", form},
                         {"local", shape.local},
                         {"per_item", shape.per_item},
                         {"contiguous", shape.contiguous != 0},
                         {"gbs", 2.0 * double(bytes) / s / 1e9}});
    };
    for (const auto& shape : shapes) {
        announce_prepare_step(m_info.id + ": copy probe, " + std::to_string(bytes / kMiB) + " MiB");
        const std::size_t global = shape.contiguous
                                       ? std::size_t((n4 + shape.per_item - 1) / shape.per_item)
                                       : global_for(n4, shape.local, shape.per_item);
        const double s = best_launch_seconds(q, k, global, shape.local, [&](cl_kernel kernel) {
            check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &src.m), "clSetKernelArg");
            check(clSetKernelArg(kernel, 1, sizeof(cl_mem), &dst.m), "clSetKernelArg");
            check(clSetKernelArg(kernel, 2, sizeof n4, &n4), "clSetKernelArg");
            check(clSetKernelArg(kernel, 3, sizeof shape.per_item, &shape.per_item),
                  "clSetKernelArg");
            check(clSetKernelArg(kernel, 4, sizeof shape.contiguous, &shape.contiguous),
                  "clSetKernelArg");
        });
        note("copy", shape, s);
        if (s < best) {
            best = s;
            best_shape = shape;
        }
    }
    // The in-place update x = a x + b over the source, with the same shapes: it reads and
    // writes every byte once as the copy does, but writes the lines it just read, so no
    // write-allocate read of a destination is hidden in its time. A row counts its bytes
    // the same way (inputs read + outputs written once), so the bound on a row is the
    // faster of the two: on PoCL the copy alone read 1.15-1.40x below PoCL's own kernels
    // (a copy moves 3 bytes per 2 it is credited with, flow_match_step 4 per 3).
    bool in_place = false;
    const auto u = programs().kernel(q, "probe_sweep");
    for (const auto& shape : shapes) {
        announce_prepare_step(m_info.id + ": in-place update probe, " +
                              std::to_string(bytes / kMiB) + " MiB");
        const std::size_t global = shape.contiguous
                                       ? std::size_t((n4 + shape.per_item - 1) / shape.per_item)
                                       : global_for(n4, shape.local, shape.per_item);
        const std::uint32_t trials = 1;
        const cl_float a = 0.999f, b = 0.001f;
        const double s = best_launch_seconds(q, u, global, shape.local, [&](cl_kernel kernel) {
            check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &src.m), "clSetKernelArg");
            check(clSetKernelArg(kernel, 1, sizeof n4, &n4), "clSetKernelArg");
            check(clSetKernelArg(kernel, 2, sizeof shape.per_item, &shape.per_item),
                  "clSetKernelArg");
            check(clSetKernelArg(kernel, 3, sizeof shape.contiguous, &shape.contiguous),
                  "clSetKernelArg");
            check(clSetKernelArg(kernel, 4, sizeof trials, &trials), "clSetKernelArg");
            check(clSetKernelArg(kernel, 5, sizeof a, &a), "clSetKernelArg");
            check(clSetKernelArg(kernel, 6, sizeof b, &b), "clSetKernelArg");
        });
        note("in-place update", shape, s);
        if (s < best) {
            best = s;
            best_shape = shape;
            in_place = true;
        }
    }
    const std::uint32_t best_per_item = best_shape.per_item;
    m_info.properties["copy_probe"] = tried;
    m_info.peak_bandwidth_gbs = 2.0 * double(bytes) / best / 1e9;
    m_probe_copy_bytes = 2.0 * double(bytes);
    m_info.peak_bandwidth_source =
        "measured: OpenCL copy probe, " + std::to_string(bytes / kMiB) + " MiB, read+write" +
        (in_place ? " (in-place update x = a x + b)" : " (copy)") + ", " +
        std::to_string(best_per_item) + (best_shape.contiguous ? " consecutive" : "") +
        " float4 per work-item, best of " + std::to_string(kProbeRuns - 1);
}

std::vector<SweepPoint> OpenClDevice::sweep_working_sets(std::size_t max_bytes) {
    auto* q = queue();
    const auto k = programs().kernel(q, "probe_sweep");
    const bool cpu = cpu_device();
    const std::size_t local = cpu ? 1 : std::min<std::size_t>(256, k.max_work_group);
    const std::uint32_t contiguous = cpu ? 1 : 0;
    Buffer x{static_cast<cl_mem>(allocate(max_bytes))};
    const cl_float one = 1.0f;
    check(clEnqueueFillBuffer(q, x.m, &one, sizeof one, 0, max_bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
    std::vector<SweepPoint> points;
    for (std::size_t ws = kSweepMinBytes; ws <= max_bytes; ws *= 2) {
        announce_prepare_step(
            m_info.id + ": working-set sweep at " +
            (ws >= kMiB ? std::to_string(ws / kMiB) + " MiB" : std::to_string(ws / 1024) + " KiB"));
        const cl_ulong n4 = ws / 16;
        const std::uint32_t per_item = cpu ? contiguous_per_item(n4, m_record.compute_units)
                                           : per_item_for(n4, local, m_record.compute_units);
        // ~64 MiB read and written per launch, so a cache-sized set is timed over many
        // passes, not over the launch's overhead.
        const std::uint32_t trials =
            std::uint32_t(std::clamp<std::size_t>((64 * kMiB) / ws, 1, 4096));
        const cl_float a = 0.999f, b = 0.001f;
        const std::size_t global =
            cpu ? std::size_t((n4 + per_item - 1) / per_item) : global_for(n4, local, per_item);
        const double s = best_launch_seconds(
            q, k, global, local,
            [&](cl_kernel kernel) {
                check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &x.m), "clSetKernelArg");
                check(clSetKernelArg(kernel, 1, sizeof n4, &n4), "clSetKernelArg");
                check(clSetKernelArg(kernel, 2, sizeof per_item, &per_item), "clSetKernelArg");
                check(clSetKernelArg(kernel, 3, sizeof contiguous, &contiguous), "clSetKernelArg");
                check(clSetKernelArg(kernel, 4, sizeof trials, &trials), "clSetKernelArg");
                check(clSetKernelArg(kernel, 5, sizeof a, &a), "clSetKernelArg");
                check(clSetKernelArg(kernel, 6, sizeof b, &b), "clSetKernelArg");
            },
            kSweepRuns);
        points.push_back({double(ws), 2.0 * double(ws) * double(trials) / s / 1e9});
    }
    return points;
}

void OpenClDevice::probe_flops() {
    announce_prepare_step(m_info.id + ": FMA probe");
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
