// SPDX-License-Identifier: MIT
#include "cudadevice.h"

#include "ceilings.h"
#include "cudaprobes.h"
#include "cudaruntime.h"

#include <switchyard/sdk/device.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard::cuda {
namespace {

// FP32 lanes per SM, by compute capability (the CUDA C++ Programming Guide's throughput
// table: 64 on Volta, Turing and GA100, 128 on GA10x, Ada, Hopper and Blackwell).
int fp32_lanes_per_sm(int major, int minor) {
    if (major <= 7 || (major == 8 && minor == 0))
        return 64;
    return 128;
}

// An attribute the runtime does not report reads 0 (unknown: the ceilings it feeds are left
// out) and is named in `missing`, so that one attribute never hides the device.
int attribute(cudaDeviceAttr attr, const char* name, int ordinal, std::string& missing) {
    int value = 0;
    const cudaError_t e = cudaDeviceGetAttribute(&value, attr, ordinal);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        missing += std::string(missing.empty() ? "" : "; ") + name + ": " + error_text(e);
        return 0;
    }
    return value;
}

DeviceInfo describe(int ordinal) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    // CUDA 13 dropped clockRate and the memory clock fields from cudaDeviceProp.
    std::string missing;
    const int clock_khz = attribute(cudaDevAttrClockRate, "cudaDevAttrClockRate", ordinal, missing);
    const int mem_clock_khz =
        attribute(cudaDevAttrMemoryClockRate, "cudaDevAttrMemoryClockRate", ordinal, missing);
    const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth,
                                   "cudaDevAttrGlobalMemoryBusWidth", ordinal, missing);
    int driver = 0, runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);

    DeviceInfo info;
    info.id = "cuda:" + std::to_string(ordinal);
    info.kind = "cuda";
    info.name = prop.name;
    info.arch = "sm_" + std::to_string(prop.major * 10 + prop.minor);
    const int lanes = fp32_lanes_per_sm(prop.major, prop.minor);
    info.properties = {
        {"ordinal", ordinal},
        {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
        {"multiprocessors", prop.multiProcessorCount},
        {"memory_bytes", std::uint64_t(prop.totalGlobalMem)},
        {"l2_cache_bytes", prop.l2CacheSize},
        {"shared_memory_per_sm_bytes", std::uint64_t(prop.sharedMemPerMultiprocessor)},
        {"registers_per_sm", prop.regsPerMultiprocessor},
        {"clock_mhz", clock_khz / 1000},
        {"memory_clock_mhz", mem_clock_khz / 1000},
        {"memory_bus_width_bits", bus_bits},
        {"fp32_lanes_per_sm", lanes},
        {"ecc", prop.ECCEnabled != 0},
        {"pci_bus_id", std::to_string(prop.pciDomainID) + ":" + std::to_string(prop.pciBusID) +
                           ":" + std::to_string(prop.pciDeviceID)},
        {"driver_version", version_text(driver)},
        {"runtime_version", version_text(runtime)},
    };
    // Theoretical: double data rate x bus width.
    info.peak_bandwidth_gbs = 2.0 * double(mem_clock_khz) * 1e3 * double(bus_bits) / 8.0 / 1e9;
    info.peak_bandwidth_source =
        "theoretical: 2 x memory clock x bus width / 8 (cudaDeviceGetAttribute)";
    info.peak_gflops =
        double(prop.multiProcessorCount) * double(clock_khz) * 1e3 * lanes * 2.0 / 1e9;
    info.peak_gflops_source = "theoretical: SMs x boost clock x FP32 lanes per SM x 2 (FMA)";
    info.has_device_timer = true;
    CudaAttributes attrs;
    attrs.multiprocessors = prop.multiProcessorCount;
    attrs.clock_khz = clock_khz;
    attrs.memory_clock_khz = mem_clock_khz;
    attrs.memory_bus_bits = bus_bits;
    attrs.fp32_lanes_per_sm = lanes;
    attrs.l2_bytes = prop.l2CacheSize;
    attrs.compute_capability = prop.major * 10 + prop.minor;
    info.properties["memory_level"] = memory_level(attrs);
    if (!missing.empty())
        info.properties["attributes_not_reported"] = missing;
    // The theoretical ceilings are known now; prepare() adds the measured ones.
    info.ceilings = theoretical_ceilings(attrs);
    return info;
}

class CudaDevice final : public Device, public SampleClock, public PreparedState {
public:
    CudaDevice(int ordinal, DeviceInfo info) : m_ordinal(ordinal), m_info(std::move(info)) {}
    // Nothing is released here: devices live until the process exits, when the static
    // runtime may already be gone; the driver reclaims everything then.
    ~CudaDevice() override = default;

    const DeviceInfo& info() const override { return m_info; }

    void prepare() override {
        std::call_once(m_probe_once, [this] {
            select();
            const int sms = int(m_info.properties.integer_or("multiprocessors", 0));
            const std::int64_t l2 = m_info.properties.integer_or("l2_cache_bytes", 0);
            const std::int64_t mem = m_info.properties.integer_or("memory_bytes", 0);
            const std::string level = m_info.properties.text_or("memory_level", "HBM");
            std::vector<Ceiling> measured;
            auto add = [&](std::string id, std::string kind, std::string lvl, double value,
                           std::string method, double ws, double capacity) {
                Ceiling c;
                c.id = std::move(id);
                c.kind = std::move(kind);
                c.level = std::move(lvl);
                c.value = value;
                c.threads = 0;
                c.method = std::move(method);
                c.working_set_bytes = ws;
                c.capacity_bytes = capacity;
                measured.push_back(std::move(c));
            };
            try {
                announce_prepare_step(m_info.id + ": copy, L2 and FMA probes");
                const auto r = run_cuda_probes(queue(), sms, l2, mem);
                const auto mib = [](std::int64_t b) { return std::to_string(b >> 20) + " MiB"; };
                add(level == "HBM" ? "hbm.copy" : "device.copy", "bandwidth", level, r.hbm_copy_gbs,
                    "device-to-device copy (copy kernel and cudaMemcpyAsync, best), read + "
                    "write bytes, " +
                        mib(r.hbm_copy_bytes),
                    double(r.hbm_copy_bytes), 0);
                if (r.hbm_triad_gbs > 0)
                    add(level == "HBM" ? "hbm.triad" : "device.triad", "bandwidth", level,
                        r.hbm_triad_gbs,
                        "triad kernel a = b + s c (two reads, a write), one float4 per thread, "
                        "read + write bytes, " +
                            mib(r.hbm_triad_bytes),
                        double(r.hbm_triad_bytes), 0);
                if (r.l2_copy_gbs > 0)
                    add("l2.copy", "bandwidth", "L2", r.l2_copy_gbs,
                        "L2-resident copy kernel, read + write bytes, " +
                            std::to_string(r.l2_copy_bytes >> 10) + " KiB",
                        double(r.l2_copy_bytes), double(l2));
                add("fma.fp32.all", "compute", "", r.fma_gflops,
                    "fp32 FMA chains, 8 per thread, 8 blocks of 256 threads per SM", 0, 0);
            } catch (const std::exception& e) {
                (void)cudaGetLastError();
                add(level == "HBM" ? "hbm.copy" : "device.copy", "bandwidth", level, 0,
                    std::string("not measured: ") + e.what(), 0, 0);
            }
            m_info.ceilings.insert(m_info.ceilings.begin(), measured.begin(), measured.end());
            try {
                sweep(sms, l2, mem);
            } catch (const std::exception& e) {
                (void)cudaGetLastError();
                m_info.properties["sweep"] = {{"error", e.what()}};
            }
        });
    }

    // The GPU (its name, compute capability, SMs, memory and PCI slot) and the driver and
    // runtime the probes ran on.
    std::string prepared_identity() const override {
        const auto& p = m_info.properties;
        return "CUDA | " + m_info.name + " | sm " + p.text_or("compute_capability", "?") + ", " +
               std::to_string(p.integer_or("multiprocessors", 0)) + " SMs, " +
               std::to_string(p.integer_or("memory_bytes", 0)) + " bytes | PCI " +
               p.text_or("pci_bus_id", "?") + " | driver " + p.text_or("driver_version", "?") +
               ", runtime " + p.text_or("runtime_version", "?");
    }

    void adopt_prepared(const DeviceInfo& measured) override {
        std::call_once(m_probe_once, [&] {
            m_info.peak_bandwidth_gbs = measured.peak_bandwidth_gbs;
            m_info.peak_bandwidth_source = measured.peak_bandwidth_source;
            m_info.peak_gflops = measured.peak_gflops;
            m_info.peak_gflops_source = measured.peak_gflops_source;
            m_info.ceilings = measured.ceilings;
            if (const Value* sweep = measured.properties.find("sweep"))
                m_info.properties["sweep"] = *sweep;
        });
    }

    void* allocate(std::size_t bytes) override {
        select();
        void* p = nullptr;
        const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            throw std::runtime_error("cudaMalloc of " + std::to_string(bytes) + " bytes on " +
                                     m_info.id + " failed: " + error_text(e));
        }
        return p;
    }
    void release(void* buffer) noexcept override {
        if (!buffer)
            return;
        select();
        (void)cudaFree(buffer);
    }
    void upload(void* dst, const void* src, std::size_t bytes) override {
        // Async on our stream, then wait: a plain cudaMemcpy from pageable memory may
        // return before the data lands, and our stream does not wait for the legacy stream.
        select();
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, queue()),
              "cudaMemcpyAsync (upload)");
        check(cudaStreamSynchronize(queue()), "cudaStreamSynchronize");
    }
    void download(void* dst, const void* src, std::size_t bytes) override {
        select();
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, queue()),
              "cudaMemcpyAsync (download)");
        check(cudaStreamSynchronize(queue()), "cudaStreamSynchronize");
    }
    void* stream() override {
        select();
        return queue();
    }
    void synchronize() override {
        select();
        check(cudaStreamSynchronize(queue()), "cudaStreamSynchronize");
    }

    double time_launches(const std::function<void()>& launch, int count) override {
        select();
        std::call_once(m_events_once, [this] {
            check(cudaEventCreate(&m_start), "cudaEventCreate");
            check(cudaEventCreate(&m_stop), "cudaEventCreate");
            try {
                m_clock = std::make_unique<ClockStamps>(
                    int(m_info.properties.integer_or("multiprocessors", 1)));
            } catch (const std::exception&) {
                (void)cudaGetLastError(); // no per-sample clock; the timing still works
            }
        });
        m_last_ghz = 0;
        // The clock stamps sit outside the timed events: they cost a launch each.
        if (m_clock)
            m_clock->record(queue(), 0);
        check(cudaEventRecord(m_start, queue()), "cudaEventRecord");
        for (int i = 0; i < count; ++i)
            launch();
        check(cudaEventRecord(m_stop, queue()), "cudaEventRecord");
        if (m_clock)
            m_clock->record(queue(), 1);
        check(cudaEventSynchronize(m_stop), "the kernel failed (cudaEventSynchronize)");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, m_start, m_stop), "cudaEventElapsedTime");
        if (m_clock) {
            check(cudaStreamSynchronize(queue()), "cudaStreamSynchronize");
            m_last_ghz = m_clock->ghz();
        }
        return double(ms) * 1e-3;
    }

    double last_sample_clock_ghz() const noexcept override { return m_last_ghz; }
    std::string sample_clock_method() const override {
        return "clock64() / %globaltimer on SM 0, stamped before and after each sample";
    }

    void flush_caches() override {
        // Writing 2x the L2 evicts whatever the kernel left there (cudaMemsetAsync is a
        // kernel, so it goes through L2), on the stream, before the timed launches.
        select();
        std::call_once(m_flush_once, [this] {
            const auto l2 = m_info.properties.integer_or("l2_cache_bytes", 0);
            m_flush_bytes = std::size_t(std::max<std::int64_t>(l2, 1 << 20)) * 2;
            check(cudaMalloc(&m_flush, m_flush_bytes), "cudaMalloc (cache flush buffer)");
        });
        check(cudaMemsetAsync(m_flush, int(++m_flush_value & 0xff), m_flush_bytes, queue()),
              "cudaMemsetAsync");
    }

private:
    // The empirical per-level ceilings (sweep_plan, add_sweep_results in ceilings.h): the
    // in-place update over growing working sets, its plateaus matched to the SMs' L1s and
    // the L2.
    void sweep(int sms, std::int64_t l2, std::int64_t mem) {
        const auto plan = sweep_plan(sms, mem, kProbeBlockThreads);
        if (plan.working_sets.empty())
            return;
        const std::string cc = m_info.properties.text_or("compute_capability", "0.0");
        const auto dot = cc.find('.');
        const int major = std::atoi(cc.c_str());
        const int minor = dot == std::string::npos ? 0 : std::atoi(cc.c_str() + dot + 1);
        CudaAttributes attrs;
        attrs.multiprocessors = sms;
        attrs.l2_bytes = l2;
        const std::int64_t largest = plan.working_sets.back();
        void* x = allocate(std::size_t(largest));
        struct Release {
            CudaDevice* device;
            void* p;
            ~Release() { device->release(p); }
        } const release{this, x};
        check(cudaMemsetAsync(x, 0, std::size_t(largest), queue()), "cudaMemsetAsync (sweep)");
        std::vector<SweepPoint> points;
        for (std::size_t i = 0; i < plan.working_sets.size(); ++i) {
            const std::int64_t bytes = plan.working_sets[i];
            announce_prepare_step(m_info.id + ": working-set sweep at " +
                                  (bytes >= (std::int64_t(1) << 20)
                                       ? std::to_string(bytes >> 20) + " MiB"
                                       : std::to_string(bytes >> 10) + " KiB"));
            const double s = time_sweep_probe(queue(), static_cast<float*>(x), bytes, plan.blocks,
                                              plan.trials[i], 3);
            if (s > 0)
                points.push_back({double(bytes), 2.0 * double(bytes) * plan.trials[i] / s / 1e9});
        }
        add_sweep_results(m_info, points, sweep_caches(attrs, major, minor));
    }

    void select() { check(cudaSetDevice(m_ordinal), "cudaSetDevice"); }
    cudaStream_t queue() {
        std::call_once(m_stream_once, [this] {
            check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
        });
        return m_stream;
    }

    int m_ordinal;
    DeviceInfo m_info;
    std::once_flag m_stream_once, m_events_once, m_flush_once, m_probe_once;
    cudaStream_t m_stream = nullptr;
    cudaEvent_t m_start = nullptr, m_stop = nullptr;
    std::unique_ptr<ClockStamps> m_clock; // per-sample clock; null when it cannot be made
    double m_last_ghz = 0;
    void* m_flush = nullptr;
    std::size_t m_flush_bytes = 0;
    unsigned m_flush_value = 0;
};

class CudaProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "cuda"; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        // The same Device objects every time: they own streams and events.
        std::lock_guard lock(m_mutex);
        if (!m_done) {
            // A runtime that cannot start (no driver for it, a driver too old, a device node
            // it may not open) says so; no device at all is not an error.
            const auto& status = runtime_status();
            std::string failed = status.device_count == 0 &&
                                         status.error.find("cudaErrorNoDevice") == std::string::npos
                                     ? status.error
                                     : std::string();
            const char* containment = std::getenv("SWITCHYARD_CONTAINMENT");
            if (failed.find("cudaErrorOperatingSystem") != std::string::npos && containment &&
                std::string(containment).starts_with("pid"))
                failed += " (the CUDA driver cannot start in a PID namespace of its own, where "
                          "/proc names other processes: unset SWITCHYARD_CONTAINMENT or set it "
                          "to subreaper)";
            for (int d = 0; d < status.device_count; ++d) {
                try {
                    m_devices.push_back(std::make_shared<CudaDevice>(d, describe(d)));
                } catch (const std::exception& e) {
                    (void)cudaGetLastError();
                    failed += (failed.empty() ? "" : "; ") + ("cuda:" + std::to_string(d)) + ": " +
                              e.what();
                }
            }
            m_failed = failed;
            m_done = true;
        }
        // The devices that could be described are listed; when none could, the error says
        // why, each time (DeviceRegistry::enumeration_errors() keeps it).
        if (m_devices.empty() && !m_failed.empty())
            throw std::runtime_error(m_failed);
        return m_devices;
    }

private:
    std::mutex m_mutex;
    bool m_done = false;
    std::vector<std::shared_ptr<Device>> m_devices;
    std::string m_failed;
};

} // namespace

std::shared_ptr<DeviceProvider> make_device_provider() {
    return std::make_shared<CudaProvider>();
}

} // namespace switchyard::cuda
