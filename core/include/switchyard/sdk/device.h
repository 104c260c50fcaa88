// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/value.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchyard {

/// One roofline ceiling of a device: the bandwidth of a memory level or a compute peak,
/// with how it was obtained. The profiler judges each row against one of them; the GUI
/// draws each as a line of the roofline.
struct SWITCHYARD_CORE_EXPORT Ceiling {
    /// Stable id, unique within its device: "l2.triad.all", "dram.read.1t", "fma.fp32.all",
    /// "hbm.copy", "l2.copy", "theoretical.dram", "theoretical.fma.fp32".
    std::string id;
    std::string kind;     // "bandwidth" (value in GB/s) or "compute" (value in GFLOP/s)
    std::string level;    // bandwidth: "L1", "L2", "L3", "DRAM", "HBM", "device"; compute: ""
    double value = 0;     // GB/s or GFLOP/s
    int threads = 0;      // 1: single thread; 0: all threads / the whole device
    bool measured = true; // false: theoretical, from the device's attributes
    /// How it was measured: "STREAM triad, fp32, all threads, 1200 MiB".
    std::string method;
    double working_set_bytes = 0; // the probe's working set (0 for compute ceilings)
    /// Bandwidth ceilings of a cache: the bytes that level holds for the threads the
    /// ceiling counts (per-core caches times the cores for all-thread ceilings). 0: no
    /// limit (DRAM, HBM, device memory) or a compute ceiling. The profiler picks the
    /// smallest level a row's working set fits in by it. JSON key "capacity_bytes".
    double capacity_bytes = 0;
};

/// What the profiler and the GUI know about one device. (Its JSON form, and Ceiling's, are the
/// core's: switchyard/hardware/json.h.)
struct SWITCHYARD_CORE_EXPORT DeviceInfo {
    std::string id;   // "cpu", "cuda:0", "opencl:0"
    std::string kind; // the kernel key's device field: "cpu", "cuda", "opencl"
    std::string name; // "AMD EPYC 7B13", "NVIDIA H100 80GB HBM3"
    std::string arch; // most specific arch: where the fallback chain starts ("x86-64-v3", "sm_90")
    Value properties = Value::object(); // free-form (memory, clocks, CUs, ...)
    double peak_bandwidth_gbs = 0;      // 0: unknown
    std::string peak_bandwidth_source;
    double peak_gflops = 0; // fp32; 0: unknown
    std::string peak_gflops_source;
    bool has_device_timer = false; // samples come from device-side timers (CUDA/OpenCL events)
    /// Every ceiling known for this device (measured by prepare(), plus theoretical ones);
    /// empty until prepare() ran. JSON key "ceilings".
    std::vector<Ceiling> ceilings;
};

/// One device the profiler can run kernels on. The CPU is built in; the OpenCL and CUDA
/// backends provide theirs through a DeviceProvider (deviceregistry.h).
///
/// Buffers are opaque handles the device's kernels understand (host pointers on the CPU,
/// CUDA device pointers, cl_mem cast to void*); they go into KernelArgs as they are.
class SWITCHYARD_CORE_EXPORT Device {
public:
    virtual ~Device() = default;

    /// Cheap: no probing. Peak figures that must be measured are 0 until prepare() ran.
    virtual const DeviceInfo& info() const = 0;
    /// Measures what needs measuring (the CPU's triad and FMA probes) once; idempotent.
    /// The profiler calls it before the first row on this device. One that takes long
    /// announces its steps (announce_prepare_step()).
    virtual void prepare() {}

    virtual void* allocate(std::size_t bytes) = 0;
    virtual void release(void* buffer) noexcept = 0;
    virtual void upload(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void download(void* dst, const void* src, std::size_t bytes) = 0;

    /// The queue kernels receive in KernelArgs::stream (nullptr on the CPU).
    virtual void* stream() { return nullptr; }
    /// Waits until everything queued has finished.
    virtual void synchronize() {}

    /// Seconds that `count` back-to-back launches took. The default times on the host
    /// around the launches plus synchronize(); a device with timers overrides it
    /// (CUDA events around the launches, OpenCL profiling events).
    virtual double time_launches(const std::function<void()>& launch, int count);

    /// Cold-cache mode: evicts this device's caches before a sample.
    virtual void flush_caches() {}
};

/// A second interface a Device may implement when its buffers are handles, not addresses
/// (OpenCL's cl_mem): the profiler's guard zones (canaries before and after every output and
/// workspace buffer) need a buffer inside a larger one, and transfers at an offset. Found by
/// dynamic_cast, so a device built against an SDK without it keeps working: its buffers get
/// no guard zones. (The CPU and CUDA, whose buffers are addresses, need none of this.)
class SWITCHYARD_CORE_EXPORT BufferViews {
public:
    virtual ~BufferViews() = default;
    /// A buffer for bytes [offset, offset + bytes) of `buffer`, usable wherever a buffer of
    /// this device is (OpenCL: a sub-buffer); nullptr when the device cannot make one there
    /// (an offset that breaks its alignment rule).
    virtual void* view(void* buffer, std::size_t offset, std::size_t bytes) = 0;
    /// Releases a view; called before its buffer is released.
    virtual void release_view(void* view) noexcept = 0;
    virtual void upload_at(void* dst, std::size_t offset, const void* src, std::size_t bytes) = 0;
    virtual void download_at(void* dst, const void* src, std::size_t offset, std::size_t bytes) = 0;
};

/// Optional: a device that measures its own clock during each timed sample (CUDA: SM 0's
/// clock64() against %globaltimer, stamped on the stream before and after the launches, as
/// nvbench does). Found by dynamic_cast, like BufferViews; the profiler reads it after each
/// time_launches() and drops the samples that ran throttled.
class SWITCHYARD_CORE_EXPORT SampleClock {
public:
    virtual ~SampleClock() = default;
    /// The effective clock (GHz) during the last time_launches(); 0 when it is unknown.
    virtual double last_sample_clock_ghz() const noexcept = 0;
    /// How it is measured ("clock64() / %globaltimer on SM 0, per sample").
    virtual std::string sample_clock_method() const = 0;
};

/// Optional: a device whose prepare() measures figures that outlive the run (its ceilings'
/// probes and sweeps), so that the host can keep them between runs and hand them back, as it
/// does the CPU's. Found by dynamic_cast, like BufferViews: a device without it is prepared
/// every run.
class SWITCHYARD_CORE_EXPORT PreparedState {
public:
    virtual ~PreparedState() = default;
    /// What the measured figures depend on besides the host and the core: the runtime, the
    /// device and its driver ("OpenCL | Portable Computing Language | pthread-haswell-AMD EPYC
    /// | 5.0+debian"). Kept figures are used only for the same identity; "" keeps nothing.
    /// Cheap: no probing.
    virtual std::string prepared_identity() const = 0;
    /// What an earlier prepare() of a device with the same identity measured (that device's
    /// info() after it). prepare() then measures nothing and info() holds these figures.
    /// Called before prepare(); once prepare() ran it changes nothing.
    virtual void adopt_prepared(const DeviceInfo& measured) = 0;
};

/// The seam device backends plug into: enumerates the devices of one kind.
class SWITCHYARD_CORE_EXPORT DeviceProvider {
public:
    virtual ~DeviceProvider() = default;
    /// "cpu", "cuda", "opencl": the kernel key's device field.
    virtual std::string kind() const = 0;
    /// The devices present now; an empty list when the runtime or the hardware is missing.
    /// Ids are "<kind>:<n>" (the CPU is just "cpu").
    virtual std::vector<std::shared_ptr<Device>> enumerate() = 0;
};

/// The steps of a long preparation (a Device::prepare()'s probes, sweeps and kernel builds,
/// the CPU's ceiling probes) told, as each starts, to the listener of the thread that runs
/// them. A profile worker turns them into heartbeats ("preparing: CPU ceilings, DRAM triad,
/// all threads"), so its controller sees a slow machine at work rather than a hung worker,
/// and names the step that hung when one does. Without a listener it does nothing.
SWITCHYARD_CORE_EXPORT void announce_prepare_step(const std::string& step);

/// The host's side: listens to this thread's announced steps until the scope ends (scopes
/// nest; the inner one hears them).
class SWITCHYARD_CORE_EXPORT PrepareStepScope {
public:
    using Listener = std::function<void(const std::string& step)>;
    explicit PrepareStepScope(Listener listener);
    ~PrepareStepScope();
    PrepareStepScope(const PrepareStepScope&) = delete;
    PrepareStepScope& operator=(const PrepareStepScope&) = delete;

private:
    Listener m_previous;
};

} // namespace switchyard
