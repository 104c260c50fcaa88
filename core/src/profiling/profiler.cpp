// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profiler.h>

#include <switchyard/buildinfo.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/clocks.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/sdk/registries.h>
#include <switchyard/sdk/version.h>

#include "util/difflib.h"
#include "util/textutil.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <stdexcept>

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string suggest(std::string_view what, std::string_view name,
                    const std::vector<std::string>& known) {
    std::string msg = "unknown " + std::string(what) + " '" + std::string(name) + "'";
    const auto close = difflib::get_close_matches(name, known);
    if (!close.empty()) {
        msg += "; did you mean " + text::join(close, " or ", text::quoted) + "?";
    }
    return msg + " (known: " + text::join(known) + ")";
}

std::int64_t workspace_of(const KernelCell& cell) {
    return std::max<std::int64_t>(0, cell.workspace_bytes);
}

// Device buffers of one row, released on every path out.
struct DeviceBuffers {
    Device& device;
    std::vector<void*> buffers;
    std::vector<void*> views; // BufferViews::view()s into `buffers`, released first
    explicit DeviceBuffers(Device& d) : device(d) {}
    ~DeviceBuffers() {
        if (auto* v = dynamic_cast<BufferViews*>(&device))
            for (void* view : views)
                v->release_view(view);
        for (void* b : buffers)
            device.release(b);
    }
    void* add(std::size_t bytes) {
        buffers.push_back(device.allocate(bytes));
        return buffers.back();
    }
};

} // namespace

std::vector<std::string> host_measurement_warnings() {
    std::vector<std::string> w;
    const auto host = host_info();
    if (host.governor.empty())
        w.push_back(
            "the CPU frequency governor cannot be read (no cpufreq in /sys, typical of VMs): "
            "frequency scaling cannot be ruled out");
    else if (host.governor != "performance")
        w.push_back(
            "CPU frequency governor is '" + host.governor +
            "', not 'performance': timings may drift (cpupower frequency-set -g performance)");
    if (std::string_view(core_build_type()) == "Debug")
        w.push_back("this is a Debug build: kernels are not optimised");
    double load[1] = {0};
    if (getloadavg(load, 1) == 1 && load[0] > 0.5 * double(cpu_info().logical_cpus) + 0.5)
        w.push_back("the system is busy (load average " + std::to_string(load[0]).substr(0, 4) +
                    "): other processes disturb the measurement");
    return w;
}

Profiler::Profiler(ProfileSettings settings, BackendRegistry& backends, DeviceRegistry& devices)
    : m_settings(std::move(settings)), m_backends(backends), m_devices(devices) {}
Profiler::~Profiler() = default;

namespace {

// The ops named in the settings (every op when none is named), each once, in order.
// Throws std::invalid_argument for an unknown op, also as a key of --sizes.
std::vector<const OpInfo*> resolve_ops(const ProfileSettings& st) {
    std::vector<std::string> op_names;
    for (const auto& op : ops())
        op_names.emplace_back(op.name);
    std::vector<const OpInfo*> op_list;
    if (st.ops.empty()) {
        for (const auto& op : ops())
            op_list.push_back(&op);
    } else {
        for (const auto& name : st.ops) {
            const auto* op = find_op(name);
            if (!op)
                throw std::invalid_argument(suggest("op", name, op_names));
            if (std::find(op_list.begin(), op_list.end(), op) == op_list.end())
                op_list.push_back(op);
        }
    }
    for (const auto& [key, list] : st.sizes)
        if (key != "*" && !find_op(key))
            throw std::invalid_argument(suggest("op", key, op_names) + " in --sizes");
    return op_list;
}

// The devices matching `wanted` (an id such as "cpu" or "opencl:0", or a kind), each once,
// in order; every device when `wanted` is empty. Throws std::invalid_argument for a name
// that matches no device.
std::vector<std::shared_ptr<Device>>
resolve_devices(const std::vector<std::shared_ptr<Device>>& all_devices,
                const std::vector<std::string>& wanted) {
    if (wanted.empty())
        return all_devices;
    std::vector<std::string> known;
    for (const auto& d : all_devices) {
        known.push_back(d->info().id);
        if (d->info().kind != d->info().id)
            known.push_back(d->info().kind);
    }
    std::vector<std::shared_ptr<Device>> devices;
    for (const auto& want : wanted) {
        bool any = false;
        for (const auto& d : all_devices)
            if (d->info().id == want || d->info().kind == want) {
                any = true;
                if (std::find(devices.begin(), devices.end(), d) == devices.end())
                    devices.push_back(d);
            }
        if (!any)
            throw std::invalid_argument(suggest("device", want, known));
    }
    return devices;
}

// The sizes of `op`: its own --sizes entry, else the "*" entry, else the defaults for a
// cache of `llc` bytes. Throws std::invalid_argument for a malformed size.
std::vector<Dims> sizes_for(const OpInfo& op, const ProfileSettings& st, std::int64_t llc) {
    auto it = st.sizes.find(std::string(op.name));
    if (it == st.sizes.end())
        it = st.sizes.find("*");
    if (it == st.sizes.end())
        return default_sizes(op, llc);
    std::vector<Dims> sizes;
    for (const auto& text : it->second) {
        std::string error;
        auto d = parse_dims(op, text, &error);
        if (!d)
            throw std::invalid_argument(error);
        sizes.push_back(*d);
    }
    return sizes;
}

// A cell to run for a device, and the device it runs on (the host CPU when the chain fell
// through to the terminal rung).
struct CellOnDevice {
    KernelRegistry::CellPtr cell;
    std::string run_on;
    bool resolved = false; // the cell dispatch picks for this op on this device
};

// What the fallback chain of `op` for device `info` resolves to (nullptr: nothing).
KernelRegistry::CellPtr resolved_cell(const OpInfo& op, const DeviceInfo& info,
                                      const KernelRegistry& registry, const ProfileSettings& st) {
    std::vector<TupleKey> chain;
    try {
        chain = fallback_chain(op.name, Target{info.kind, info.arch}, st.variant);
    } catch (const std::exception&) {
        chain = fallback_chain(op.name, Target{info.kind, ""}, st.variant);
    }
    return registry.resolve_first(chain);
}

// The cells of `op` for device `info`: every available one with --all-variants, else the
// first of its fallback chain (none when nothing resolves).
std::vector<CellOnDevice> cells_for(const OpInfo& op, const DeviceInfo& info,
                                    const KernelRegistry& registry, const ProfileSettings& st) {
    std::vector<CellOnDevice> cells;
    auto cell = resolved_cell(op, info, registry, st);
    if (st.all_variants) {
        for (const auto& entry : registry.manifest()) {
            const auto& key = entry.cell->key;
            if (key[0] == op.name && key[1] == info.kind && entry.available)
                cells.push_back({entry.cell, info.id, cell && cell->key == key});
        }
        return cells;
    }
    if (!cell)
        return cells;
    // The terminal rung runs on the host CPU whatever device asked.
    std::string run_on = cell->key[1] == info.kind ? info.id : std::string("cpu");
    cells.push_back({std::move(cell), std::move(run_on), true});
    return cells;
}

// The rows of a plan, each (op, size, device, cell) once, numbered in order.
class RowList {
public:
    void add(const OpInfo& op, const Dims& dims, const KernelCell& cell,
             const std::string& device_id, const std::string& resolved_for, bool resolved) {
        RowSpec r;
        r.op = std::string(op.name);
        r.dims = dims;
        r.size = dims_to_string(op, dims);
        r.device = device_id;
        r.device_kind = cell.key[1];
        r.arch = cell.key[2];
        r.variant = cell.key[3];
        r.backend = cell.backend;
        r.source = std::string(to_string(cell.source));
        r.workspace_bytes = workspace_of(cell);
        r.resolved = resolved;
        if (resolved_for != device_id)
            r.resolved_for = resolved_for;
        const auto id = r.op + "|" + r.size + "|" + r.device + "|" + cell.key.to_string();
        if (const auto [it, added] = m_seen.emplace(id, m_rows.size()); added) {
            r.index = std::int64_t(m_rows.size());
            m_rows.push_back(std::move(r));
        } else if (resolved) {
            m_rows[it->second].resolved = true; // planned already (the reference rung)
        }
    }
    std::vector<RowSpec> take() { return std::move(m_rows); }

private:
    std::vector<RowSpec> m_rows;
    std::map<std::string, std::size_t> m_seen; // row id -> position
};

} // namespace

std::vector<RowSpec> Profiler::plan() const {
    m_backends.ensure_initialized();
    const auto op_list = resolve_ops(m_settings);
    // Device backends publish their providers when loaded: load the plugins that declare
    // kernels for a device kind this run may use before listing the devices.
    m_backends.load_device_backends(m_settings.devices);
    const auto devices = resolve_devices(m_devices.devices(), m_settings.devices);
    const auto llc = cpu_info().last_level_cache_bytes();
    const auto& registry = m_backends.kernel_registry();
    RowList rows;
    for (const auto* op : op_list) {
        // Every (op, size) times the CPU reference first, so each row of it has a speedup
        // over the reference (the rows stream in order: the reference is there before them).
        KernelRegistry::CellPtr reference;
        if (m_settings.reference_budget_s > 0)
            reference = registry.resolve_first(
                std::array<TupleKey, 1>{kernel_key(op->name, "cpu", "generic", "reference")});
        for (const auto& dims : sizes_for(*op, m_settings, llc)) {
            if (reference)
                rows.add(*op, dims, *reference, "cpu", "cpu", false);
            for (const auto& dev : devices)
                for (const auto& c : cells_for(*op, dev->info(), registry, m_settings))
                    rows.add(*op, dims, *c.cell, c.run_on, dev->info().id, c.resolved);
        }
    }
    return rows.take();
}

const Workload& Profiler::workload(const std::string& op, const Dims& dims,
                                   const Progress& progress) {
    const auto key = op + "|" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                     std::to_string(dims[2]);
    if (!m_workload || m_workload_key != key) {
        m_workload.reset();
        if (progress)
            progress("inputs", 0);
        m_workload = std::make_unique<Workload>(*find_op(op), dims, m_settings.seed);
        m_workload_key = key;
    }
    if (progress)
        progress("reference", 0);
    (void)m_workload->reference();
    return *m_workload;
}

namespace {

// What a kernel must not touch, watched around each launch: guard zones of canary values
// before and after every output and workspace buffer, and the inputs, compared with the
// host copy after the launch. Guard zones need a buffer inside a larger one: pointer
// arithmetic where buffers are addresses (the CPU, CUDA device pointers), a sub-buffer
// where the device offers BufferViews (OpenCL); other devices' buffers get none.
struct Guards {
    static constexpr std::size_t kBytes = 4096;          // each side: 1,024 floats
    static constexpr std::uint32_t kCanary = 0x7fa5a5a5; // a NaN with a payload of its own
    struct Zone {
        std::string name;    // "out", "workspace"
        const void* base;    // the allocation: guard, buffer, guard
        std::size_t bytes;   // the buffer's size
        std::size_t element; // 4 (floats) or 1 (workspace bytes)
    };
    struct Input {
        std::string name;
        const void* buffer;
        const std::vector<float>* host;
    };
    std::vector<Zone> zones;
    std::vector<Input> inputs;
};

// How a device's buffers are reached at an offset, for the guard zones.
struct Offsets {
    Device& device;
    BufferViews* views = nullptr; // handles; nullptr: addresses
    bool addresses = false;

    Offsets(Device& d, const std::string& kind)
        : device(d), views(dynamic_cast<BufferViews*>(&d)),
          addresses(kind == "cpu" || kind == "cuda") {}
    bool usable() const { return addresses || views; }
    void upload(void* base, std::size_t offset, const void* src, std::size_t bytes) {
        if (addresses)
            device.upload(static_cast<char*>(base) + offset, src, bytes);
        else
            views->upload_at(base, offset, src, bytes);
    }
    void download(void* dst, const void* base, std::size_t offset, std::size_t bytes) {
        if (addresses)
            device.download(dst, static_cast<const char*>(base) + offset, bytes);
        else
            views->download_at(dst, base, offset, bytes);
    }
};

// A buffer of `bytes` with guard zones on both sides where the device allows; returns the
// buffer.
void* add_guarded(Offsets& at, DeviceBuffers& bufs, Guards& guards, std::size_t bytes,
                  std::string name, std::size_t element) {
    if (!at.usable())
        return bufs.add(bytes);
    void* base = bufs.add(bytes + 2 * Guards::kBytes);
    void* inner = nullptr;
    if (at.addresses) {
        inner = static_cast<char*>(base) + Guards::kBytes;
    } else {
        inner = at.views->view(base, Guards::kBytes, bytes);
        if (!inner) // the device cannot start a buffer there: unguarded
            return bufs.add(bytes);
        bufs.views.push_back(inner);
    }
    const std::vector<std::uint32_t> canary(Guards::kBytes / 4, Guards::kCanary);
    at.upload(base, 0, canary.data(), Guards::kBytes);
    at.upload(base, Guards::kBytes + bytes, canary.data(), Guards::kBytes);
    guards.zones.push_back({std::move(name), base, bytes, element});
    return inner;
}

// What the last launches did outside their buffers, or to their inputs.
std::vector<std::string> check_guards(Device& device, const std::string& kind,
                                      const Guards& guards) {
    Offsets at(device, kind);
    std::vector<std::string> out;
    std::vector<std::uint32_t> zone(Guards::kBytes / 4);
    for (const auto& z : guards.zones) {
        const char* label = z.element == 1 ? " bytes " : " elements ";
        const std::string unit_name = z.element == 1 ? "the workspace" : "`" + z.name + "`";
        // Before: the element farthest from the buffer that changed.
        at.download(zone.data(), z.base, 0, Guards::kBytes);
        for (std::size_t i = 0; i < zone.size(); ++i)
            if (zone[i] != Guards::kCanary) {
                out.push_back("wrote " + std::to_string((Guards::kBytes - 4 * i) / z.element) +
                              label + "before " + unit_name);
                break;
            }
        at.download(zone.data(), z.base, Guards::kBytes + z.bytes, Guards::kBytes);
        for (std::size_t i = zone.size(); i-- > 0;)
            if (zone[i] != Guards::kCanary) {
                out.push_back("wrote " + std::to_string(4 * (i + 1) / z.element) + label + "past " +
                              unit_name);
                break;
            }
    }
    for (const auto& in : guards.inputs) {
        std::vector<float> now(in.host->size());
        device.download(now.data(), in.buffer, now.size() * sizeof(float));
        std::size_t changed = 0, first = 0;
        for (std::size_t i = 0; i < now.size(); ++i)
            if (std::memcmp(&now[i], &(*in.host)[i], sizeof(float)) != 0 && changed++ == 0)
                first = i;
        if (changed > 0) {
            char buf[128];
            std::snprintf(buf, sizeof buf, " (%zu elements; %s[%zu]: %g -> %g)", changed,
                          in.name.c_str(), first, double((*in.host)[first]), double(now[first]));
            out.push_back("modified input `" + in.name + "`" + buf);
        }
    }
    return out;
}

// Device buffers for the op's inputs (uploaded), outputs (with their initial contents)
// and workspace; the kernel's arguments point at them. `guards` records what to watch.
KernelArgs make_args(const OpInfo& op, const RowSpec& spec, const Workload& w, Device& device,
                     DeviceBuffers& bufs, std::int64_t workspace, Guards& guards) {
    Offsets at(device, spec.device_kind);
    KernelArgs args;
    args.dims = spec.dims;
    args.scalars = w.scalars;
    args.stream = device.stream();
    for (std::size_t s = 0; s < op.inputs.size(); ++s) {
        const auto& host = w.input(int(s));
        void* d = bufs.add(host.size() * sizeof(float));
        device.upload(d, host.data(), host.size() * sizeof(float));
        args.in[s] = static_cast<const float*>(d);
        guards.inputs.push_back({std::string(op.inputs[s]), d, &host});
    }
    auto initial = w.make_outputs();
    for (std::size_t s = 0; s < op.outputs.size(); ++s) {
        void* d = add_guarded(at, bufs, guards, initial[s].size() * sizeof(float),
                              std::string(op.outputs[s]), sizeof(float));
        device.upload(d, initial[s].data(), initial[s].size() * sizeof(float));
        args.out[s] = static_cast<float*>(d);
    }
    if (workspace > 0) {
        args.workspace = add_guarded(at, bufs, guards, std::size_t(workspace), "workspace", 1);
        args.workspace_bytes = std::size_t(workspace);
    }
    return args;
}

// A FAIL for what the launches did outside their outputs (the first violation leads).
void add_violations(ParityResult& parity, std::vector<std::string> violations) {
    if (violations.empty())
        return;
    parity.pass = false;
    parity.first_failure = violations.front();
    for (auto& v : violations)
        if (std::find(parity.violations.begin(), parity.violations.end(), v) ==
            parity.violations.end())
            parity.violations.push_back(std::move(v));
}

// The op's tolerance, unless the cell states its own ("tolerance": {"atol", "rtol"}).
Tolerance tolerance_of(const KernelCell& cell, const OpInfo& op, const Dims& dims) {
    Tolerance t = op.tolerance(dims);
    const auto it = cell.meta.find("tolerance");
    if (it != cell.meta.end() && it->is_object()) {
        t.atol = it->value("atol", t.atol);
        t.rtol = it->value("rtol", t.rtol);
    }
    return t;
}

// One launch on fresh inputs, compared with the reference; then the guard zones and the
// inputs are checked.
ParityResult check_once(const OpInfo& op, const RowSpec& spec, const Workload& w, Device& device,
                        const KernelArgs& args, const std::function<void()>& launch,
                        const Tolerance& tolerance, const Guards& guards) {
    launch();
    device.synchronize();
    auto got = w.make_outputs();
    for (std::size_t s = 0; s < op.outputs.size(); ++s)
        device.download(got[s].data(), args.out[s], got[s].size() * sizeof(float));
    auto parity = check_parity(op, spec.dims, got, w.reference(), tolerance);
    add_violations(parity, check_guards(device, spec.device_kind, guards));
    return parity;
}

// Warm-up, which also sizes the batches of short kernels: returns launches per sample.
std::int64_t warm_up(Device& device, const std::function<void()>& launch,
                     const ProfileSettings& st) {
    std::int64_t warm = 0;
    const auto w0 = Clock::now();
    double warm_s = 0;
    do {
        warm_s += device.time_launches(launch, 1);
        ++warm;
    } while (seconds_since(w0) < st.warmup_s && warm < 1000000);
    const double per_launch = warm_s / double(warm);
    if (st.cold || per_launch <= 0 || per_launch >= st.min_sample_s)
        return 1;
    return std::clamp<std::int64_t>(std::int64_t(std::ceil(st.min_sample_s / per_launch)), 1,
                                    1 << 20);
}

// Where a row's clock comes from: the calling thread's cycle counter (CPU rows on a PMU),
// the device's own per-sample clock (SampleClock), or neither (then the dependent-add
// chain around the row, on the CPU). Found once per row, not per sample.
struct RowClockSource {
    std::optional<CpuClockCounter> counter; // available, or empty
    const SampleClock* device = nullptr;    // non-CPU devices that report one
    bool chain = false;                     // CPU rows without a counter

    RowClockSource(const Device& d, bool on_cpu) {
        if (on_cpu) {
            counter.emplace();
            if (!counter->available()) {
                counter.reset();
                chain = true;
            }
        } else {
            device = dynamic_cast<const SampleClock*>(&d);
        }
    }
    bool measured() const { return counter || device || chain; }
    std::string method() const {
        if (counter)
            return counter->method();
        if (device)
            return device->sample_clock_method();
        return std::string(kDependentAddChainMethod) + " before and after the row";
    }
};

// Samples (seconds per launch) until `rule` says stop; each sample's effective clock (GHz)
// goes to `sample_ghz` where `clock` gives one per sample.
std::vector<double> take_samples(Device& device, const std::function<void()>& launch,
                                 std::int64_t batch, const ProfileSettings& st, StoppingRule& rule,
                                 const Profiler::Progress& progress, RowClockSource& clock,
                                 std::vector<double>& sample_ghz) {
    CpuClockCounter* counter = clock.counter ? &*clock.counter : nullptr;
    std::vector<double> samples;
    const auto s0 = Clock::now();
    auto last_beat = s0;
    while (true) {
        if (st.cold)
            device.flush_caches();
        if (counter)
            counter->start();
        const double t = device.time_launches(launch, int(batch)) / double(batch);
        if (counter)
            sample_ghz.push_back(counter->stop().ghz());
        else if (clock.device)
            sample_ghz.push_back(clock.device->last_sample_clock_ghz());
        samples.push_back(t);
        if (rule.add(t, seconds_since(s0)) != StoppingRule::Stop::None)
            break;
        if (progress && seconds_since(last_beat) > 0.2) {
            last_beat = Clock::now();
            progress("sampling", std::int64_t(samples.size()));
        }
    }
    return samples;
}

// The throttle rule on a row's clock readings: the row's clock, its samples below the
// threshold dropped, and a warning when it ran throttled.
void apply_throttle(ProfileRow& row, const RowClockReadings& clocks, double threshold,
                    std::vector<double>& samples) {
    const auto verdict = apply_throttle_threshold(clocks, threshold);
    row.clock = verdict.clock;
    if (verdict.discarded > 0 && verdict.discarded < std::int64_t(samples.size())) {
        std::vector<double> kept;
        for (std::size_t i = 0; i < samples.size(); ++i)
            if (verdict.keep[i])
                kept.push_back(samples[i]);
        samples.swap(kept);
    }
    if (!row.clock.throttled)
        return;
    char buf[256];
    if (verdict.discarded > 0)
        std::snprintf(buf, sizeof buf,
                      "throttled: %d samples ran below %.0f %% of the row's best clock (%.2f "
                      "GHz) and were dropped",
                      verdict.discarded, row.clock.threshold * 100, row.clock.best_ghz);
    else
        std::snprintf(buf, sizeof buf,
                      "throttled: the clock fell from %.2f GHz before the row to %.2f GHz after "
                      "it (below %.0f %%)",
                      clocks.chain_before_ghz, clocks.chain_after_ghz, row.clock.threshold * 100);
    row.warnings.push_back(buf);
}

// Statistics and throughput.
void summarize(ProfileRow& row, const StoppingRule& rule, std::vector<double> samples,
               std::int64_t keep_samples) {
    row.stop_reason = std::string(StoppingRule::to_string(rule.stopped()));
    row.stats = SampleStats::from(samples);
    thin_samples(samples, keep_samples);
    row.samples = std::move(samples);
    if (row.stats.median > 0) {
        row.gbps = row.bytes / row.stats.median / 1e9;
        row.gflops = row.flops / row.stats.median / 1e9;
    }
}

// Whether bandwidth ceiling `c` is preferred to `than` for its level: measured before
// theoretical, then the higher value (the level's best: a kernel that mostly reads moves
// more bytes per second than a triad, so the read ceiling bounds it, not the triad).
bool preferred(const Ceiling& c, const Ceiling& than) {
    if (c.measured != than.measured)
        return c.measured;
    return c.value > than.value;
}

// Whether a row runs on all threads: the cell's meta "threads" when it states it, else
// by variant ("threaded", "openblas"); device rows always use the whole device.
bool row_uses_all_threads(const RowSpec& spec, const KernelCell& cell) {
    if (spec.device_kind != "cpu")
        return true;
    const auto it = cell.meta.find("threads");
    if (it != cell.meta.end() && it->is_number_integer())
        return it->get<std::int64_t>() > 1;
    return spec.variant.find("threaded") != std::string::npos || spec.variant == "openblas";
}

// Judges a summarized row against the ceiling its working set and intensity pick.
void judge(ProfileRow& row, const DeviceInfo& info, double working_set_bytes, bool all_threads) {
    const auto choice = choose_ceiling(info, working_set_bytes, row.flops, all_threads, row.bytes);
    row.intensity = choice.intensity;
    row.level = choice.level;
    if (!choice.ceiling)
        return;
    const Ceiling& c = *choice.ceiling;
    row.ceiling_id = c.id;
    row.level = choice.level;
    row.ceiling_value = c.value;
    const double achieved = c.kind == "compute" ? row.gflops : row.gbps;
    row.ceiling_fraction = c.value > 0 ? achieved / c.value : 0;
    if (row.ceiling_fraction > kCeilingTolerance) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "measured %.0f %% of its ceiling %s (%.1f %s), above the %.0f %% "
                      "tolerance: the ceiling (",
                      row.ceiling_fraction * 100, c.id.c_str(), c.value,
                      c.kind == "compute" ? "GFLOP/s" : "GB/s", kCeilingTolerance * 100);
        row.warnings.push_back(std::string(buf) + c.method +
                               ") or the op's byte/flop count is wrong; this is a bug");
    }
}

// Is the measurement suspect? `throttle_before` is the host's throttle count before the
// row (-1: not a CPU row).
void add_warnings(ProfileRow& row, const StoppingRule& rule, const ProfileSettings& st,
                  std::int64_t throttle_before) {
    if (rule.stopped() != StoppingRule::Stop::Converged && row.stats.rel_noise > st.max_noise)
        row.warnings.push_back(
            "noisy: relative noise " + std::to_string(row.stats.rel_noise * 100).substr(0, 5) +
            " % is above the " + std::to_string(st.max_noise * 100).substr(0, 5) + " % threshold");
    if (row.stats.count < rule.criteria().min_samples)
        row.warnings.push_back("only " + std::to_string(row.stats.count) +
                               " samples before the time budget ended");
    if (throttle_before >= 0) {
        const auto after = host_info().throttle_count;
        if (after > throttle_before)
            row.warnings.push_back("the CPU was thermally throttled during this row (" +
                                   std::to_string(after - throttle_before) + " events)");
    }
    if (row.stats.median > 0 && row.stats.median * double(row.launches_per_sample) < 2e-6 &&
        row.timer == Timer::Host)
        row.warnings.push_back("samples are shorter than the host timer resolves reliably");
}

} // namespace

bool shares_host_caches(const DeviceInfo& info) {
    if (info.kind == "cpu")
        return false;
    const auto it = info.properties.find("device_type");
    return it != info.properties.end() && it->is_string() && it->get<std::string>() == "CPU";
}

CeilingChoice choose_ceiling(const DeviceInfo& info, double working_set_bytes, double flops,
                             bool all_threads, double traffic_bytes) {
    CeilingChoice out;
    const double bytes = traffic_bytes > 0 ? traffic_bytes : working_set_bytes;
    if (bytes > 0)
        out.intensity = flops / bytes;
    const int want = all_threads ? 0 : 1;
    // The preferred bandwidth ceiling of each level, in order of capacity (memory last).
    std::vector<const Ceiling*> levels;
    for (const auto& c : info.ceilings) {
        if (c.kind != "bandwidth" || c.threads != want || !(c.value > 0))
            continue;
        auto it = std::find_if(levels.begin(), levels.end(),
                               [&](const Ceiling* l) { return l->level == c.level; });
        if (it == levels.end())
            levels.push_back(&c);
        else if (preferred(c, **it))
            *it = &c;
    }
    std::stable_sort(levels.begin(), levels.end(), [](const Ceiling* a, const Ceiling* b) {
        const double ca = a->capacity_bytes > 0 ? a->capacity_bytes : 1e300;
        const double cb = b->capacity_bytes > 0 ? b->capacity_bytes : 1e300;
        return ca < cb;
    });
    const Ceiling* bw = nullptr;
    for (const auto* l : levels)
        if (l->capacity_bytes <= 0 || working_set_bytes <= kLevelSlack * l->capacity_bytes) {
            bw = l;
            break;
        }
    if (!bw && !levels.empty())
        bw = levels.back(); // larger than every level known: the largest one
    // A device that states a cache but has no ceiling for it (OpenCL devices report
    // global_memory_cache_bytes and probe only their memory): a row that fits in that cache
    // runs from it, faster than the memory probe (PoCL on this CPU: 2-6x device.copy), and
    // nothing here bounds it. Such a row is not judged; its level says why.
    bool unmeasured_cache = false;
    if (bw && bw->capacity_bytes <= 0) {
        const auto it = info.properties.find("global_memory_cache_bytes");
        if (it != info.properties.end() && it->is_number() && it->get<double>() > 0 &&
            working_set_bytes <= kLevelSlack * it->get<double>()) {
            unmeasured_cache = true;
            bw = nullptr;
        }
    }
    const Ceiling* fma = nullptr;
    for (const auto& c : info.ceilings)
        if (c.kind == "compute" && c.threads == want && c.value > 0 &&
            (!fma || (c.measured && !fma->measured)))
            fma = &c;
    // Compute-bound: the intensity is past the ridge point of memory (the last level), as
    // in the classic roofline. The in-cache ridge points are far lower, and the nominal flop
    // counts of the elementwise ops would make small in-cache rows look compute-bound.
    const Ceiling* memory = levels.empty() ? nullptr : levels.back();
    if (fma && flops > 0 && (!memory || out.intensity > fma->value / memory->value)) {
        out.ceiling = fma;
        out.level = "compute";
    } else if (bw) {
        out.ceiling = bw;
        out.level = bw->level;
    } else if (unmeasured_cache) {
        out.level = "cache";
    }
    return out;
}

ProfileRow Profiler::run_row(const RowSpec& spec, const Progress& progress) {
    ProfileRow row;
    row.spec = spec;
    try {
        measure(row, progress);
    } catch (const std::exception& e) {
        row.status = RowStatus::Error;
        row.reason = e.what();
    } catch (...) {
        row.status = RowStatus::Error;
        row.reason = "the kernel threw an unknown exception";
    }
    return row;
}

void Profiler::measure(ProfileRow& row, const Progress& progress) {
    const RowSpec& spec = row.spec;
    const auto* op = find_op(spec.op);
    if (!op)
        throw std::invalid_argument("unknown op '" + spec.op + "'");
    auto device = m_devices.find(spec.device);
    if (!device)
        throw std::invalid_argument("unknown device '" + spec.device + "'");
    device->prepare();
    const auto& dinfo = device->info();
    row.timer = dinfo.has_device_timer ? Timer::Device : Timer::Host;
    row.bytes = op->bytes(spec.dims);
    row.flops = op->flops(spec.dims);
    row.peak_bandwidth_gbs = dinfo.peak_bandwidth_gbs;
    row.peak_gflops = dinfo.peak_gflops;

    const TupleKey key = kernel_key(spec.op, spec.device_kind, spec.arch, spec.variant);
    const std::array<TupleKey, 1> one = {key};
    const auto cell = m_backends.kernel_registry().resolve_first(one);
    if (!cell) {
        row.status = RowStatus::Error;
        row.reason = m_backends.kernel_registry().lookup(key)
                         ? "the cell is not available on this machine"
                         : "no such cell is registered";
        return;
    }
    const Workload& w = workload(spec.op, spec.dims, progress);
    const auto throttle_before = spec.device_kind == "cpu" ? host_info().throttle_count : -1;

    DeviceBuffers bufs(*device);
    Guards guards;
    const KernelArgs args =
        make_args(*op, spec, w, *device, bufs,
                  std::max<std::int64_t>(spec.workspace_bytes, workspace_of(*cell)), guards);
    const KernelFn& fn = cell->fn;
    const std::function<void()> launch = [&] { fn(args); };

    if (progress)
        progress("parity", 0);
    row.parity = check_once(*op, spec, w, *device, args, launch,
                            tolerance_of(*cell, *op, spec.dims), guards);
    if (progress)
        progress("warmup", 0);
    row.launches_per_sample = warm_up(*device, launch, m_settings);
    // The reference rung is timed for the speedups on its own small budget.
    const bool reference_budget = spec.is_reference() && m_settings.reference_budget_s > 0;
    StoppingRule rule({m_settings.max_noise,
                       reference_budget
                           ? std::min(m_settings.min_samples, ProfileSettings::kReferenceMinSamples)
                           : m_settings.min_samples,
                       reference_budget ? m_settings.reference_budget_s : m_settings.time_budget_s,
                       m_settings.max_samples});
    // The effective clock: per sample from the cycle counter where the kernel has one, else a
    // dependent-add chain before and after the samples (CPU rows: this thread runs them).
    RowClockSource clock(*device, spec.device_kind == "cpu");
    RowClockReadings clocks;
    clocks.method = clock.method();
    if (clock.chain)
        clocks.chain_before_ghz = dependent_add_chain_ghz();
    auto samples = take_samples(*device, launch, row.launches_per_sample, m_settings, rule,
                                progress, clock, clocks.sample_ghz);
    if (clock.chain)
        clocks.chain_after_ghz = dependent_add_chain_ghz();
    if (clock.measured())
        apply_throttle(row, clocks, m_settings.throttle_threshold, samples);
    // Every timed launch since: a canary once overwritten stays so; inputs are compared again.
    add_violations(row.parity, check_guards(*device, spec.device_kind, guards));
    summarize(row, rule, std::move(samples), m_settings.keep_samples);
    const double ws = working_set_bytes(*op, spec.dims) +
                      double(std::max<std::int64_t>(spec.workspace_bytes, workspace_of(*cell)));
    const bool all_threads = row_uses_all_threads(spec, *cell);
    const auto warnings_before = row.warnings.size();
    if (shares_host_caches(dinfo)) {
        // A CPU OpenCL device (PoCL) runs on this CPU's cores and caches: the host's
        // per-level ceilings (all threads) bound it, not its own memory probe.
        auto host = m_devices.find("cpu");
        if (host) {
            host->prepare();
            judge(row, host->info(), ws, true);
            if (!row.ceiling_id.empty())
                row.ceiling_id = "cpu:" + row.ceiling_id;
        }
        if (!host || row.ceiling_id.empty())
            judge(row, dinfo, ws, all_threads);
    } else {
        judge(row, dinfo, ws, all_threads);
    }
    if (row.ceiling_fraction > kCeilingTolerance && spec.device_kind == "cpu" &&
        m_reprobes < kMaxReprobes) {
        ++m_reprobes;
        const std::string first_id = row.ceiling_id;
        const double first_value = row.ceiling_value, first_fraction = row.ceiling_fraction;
        CpuPeaks merged = cpu_peaks();
        const CpuPeaks fresh = measure_cpu_peaks();
        for (auto& c : merged.ceilings)
            if (const auto* f = fresh.find(c.id); f && f->value > c.value) {
                c.value = f->value;
                c.method = f->method + "; re-measured during the run";
                if (const auto it = fresh.spread.find(c.id); it != fresh.spread.end())
                    merged.spread[c.id] = it->second;
            }
        if (const auto* t = merged.find("dram.triad.all"); t && t->value > merged.triad_gbs)
            merged.triad_gbs = t->value;
        if (const auto* f = merged.find("fma.fp32.all"); f && f->value > merged.fma_gflops)
            merged.fma_gflops = f->value;
        set_cpu_peaks(merged);
        device->prepare(); // copies the raised ceilings into dinfo
        row.warnings.resize(warnings_before);
        judge(row, dinfo, ws, all_threads);
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "read %.0f %% of %s (%.1f) at first: the CPU's ceilings were measured "
                      "again and the higher values kept (%s now %.1f), so the first probes "
                      "were disturbed; the report's context holds the first values",
                      first_fraction * 100, first_id.c_str(), first_value, row.ceiling_id.c_str(),
                      row.ceiling_value);
        row.warnings.push_back(buf);
    }
    add_warnings(row, rule, m_settings, throttle_before);

    row.status = row.parity.pass ? RowStatus::Ok : RowStatus::Fail;
    if (!row.parity.pass)
        row.reason = "parity FAIL: " + row.parity.first_failure;
}

std::vector<ProfileRow> Profiler::run(const std::function<void(const ProfileRow&)>& on_row) {
    std::vector<ProfileRow> out;
    for (const auto& spec : plan()) {
        out.push_back(run_row(spec));
        if (on_row)
            on_row(out.back());
    }
    return out;
}

namespace {

// How rows' clocks are measured here, and the clock now (the report's context.clock).
nlohmann::json clock_context() {
    const CpuClockCounter counter; // here for its method(): why there is none, if none
    return {{"method", counter.available()
                           ? counter.method()
                           : std::string(kDependentAddChainMethod) +
                                 " before and after each row (" + counter.method() + ")"},
            {"per_sample", counter.available()},
            {"chain_ghz", dependent_add_chain_ghz()}};
}

} // namespace

nlohmann::json Profiler::context() const {
    auto devices = nlohmann::json::array();
    std::vector<DeviceInfo> infos;
    std::set<std::string> wanted(m_settings.devices.begin(), m_settings.devices.end());
    for (const auto& d : m_devices.devices()) {
        const auto& info = d->info();
        if (!wanted.empty() && !wanted.count(info.id) && !wanted.count(info.kind) &&
            info.id != "cpu")
            continue;
        d->prepare();
        infos.push_back(d->info());
        devices.push_back(infos.back().to_json());
    }
    auto warnings = host_measurement_warnings();
    if (const auto w = openblas_core_warning(openblas_info()); !w.empty())
        warnings.push_back(w);
    return {{"switchyard",
             {{"version", std::string(core_version())},
              {"git_hash", std::string(core_git_hash())},
              {"build_type", std::string(core_build_type())},
              {"compiler", SWITCHYARD_COMPILER}}},
            {"date", text::utc_now_iso8601()},
            {"host", host_info().to_json()},
            {"cpu", cpu_info().to_json()},
            {"cpu_peaks", cpu_peaks().to_json()},
            {"clock", clock_context()},
            {"openblas", openblas_info().to_json()},
            {"devices", devices},
            {"fingerprint", machine_fingerprint(infos)},
            {"settings", m_settings.to_json()},
            {"warnings", warnings}};
}

} // namespace switchyard
