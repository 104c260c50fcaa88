// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profiler.h>

#include <switchyard/buildinfo.h>
#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/clocks.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/sdk/registries.h>
#include <switchyard/sdk/version.h>

#include "hardware/affinity.h"
#include "profiling/guards.h"
#include "profiling/profilerdetail.h"
#include "profiling/vectorstate.h"
#include "util/sanitizer.h"
#include "util/textutil.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>

namespace switchyard {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The pinned_cpu of a set of ceilings, -1 without one.
int pinned_cpu_of(const std::optional<CpuPeaks>& peaks) {
    return peaks ? peaks->pinned_cpu : -1;
}

} // namespace

std::vector<std::string> host_measurement_warnings(int ceilings_cpu) {
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
    if (const auto pin = pin_cpu_problem(ceilings_cpu); !pin.empty())
        w.push_back(pin);
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

const Workload& Profiler::workload(const std::string& op, const Dims& dims,
                                   const Progress& progress) {
    const auto key = op + "|" + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                     std::to_string(dims[2]);
    auto found = m_workloads.find(key);
    if (found == m_workloads.end()) {
        const OpInfo& info = *find_op(op);
        const std::int64_t bytes = Workload::bytes_needed(info, dims);
        // What may stay: one workload, or (parity once) those that fit the limit together.
        std::int64_t limit = 0;
        if (m_parity_once) {
            const auto memory = physical_memory_bytes();
            limit = memory > 0 ? std::min(kKeptWorkloadBytes, memory / 8) : kKeptWorkloadBytes;
        }
        std::int64_t kept = 0;
        for (const auto& [k, w] : m_workloads)
            kept += w.bytes;
        while (!m_workloads.empty() && kept + bytes > limit) {
            auto oldest = m_workloads.begin();
            for (auto it = m_workloads.begin(); it != m_workloads.end(); ++it)
                if (it->second.used < oldest->second.used)
                    oldest = it;
            kept -= oldest->second.bytes;
            m_workloads.erase(oldest);
        }
        if (progress)
            progress("inputs", 0);
        found =
            m_workloads
                .emplace(key, KeptWorkload{std::make_unique<Workload>(info, dims, m_settings.seed),
                                           bytes, 0})
                .first;
    }
    found->second.used = ++m_workload_uses;
    if (progress)
        progress("reference", 0);
    (void)found->second.workload->reference();
    return *found->second.workload;
}

namespace {

// The op's tolerance, unless the cell states its own ("tolerance": {"atol", "rtol"}).
Tolerance tolerance_of(const KernelCell& cell, const OpInfo& op, const Dims& dims) {
    Tolerance t = op.tolerance(dims);
    if (const Value* stated = cell.meta.find("tolerance")) {
        t.atol = stated->number_or("atol", t.atol);
        t.rtol = stated->number_or("rtol", t.rtol);
    }
    return t;
}

} // namespace

ParityResult check_cpu_cell(const KernelCell& cell, const OpInfo& op, const Dims& dims,
                            const KernelCell* judged_as) {
    if (device_kind(cell.key[1]) != DeviceKind::Cpu || !cell.is_loaded())
        throw std::invalid_argument(cell.key.to_string() +
                                    ": only a loaded CPU cell is checked in this process");
    const Workload w(op, dims);
    auto outputs = w.make_outputs();
    auto args = w.args(outputs);
    // The workspace it declares, 64-byte aligned as the profiler gives it.
    std::vector<std::byte> workspace(std::size_t(std::max<std::int64_t>(0, cell.workspace_bytes)) +
                                     64);
    args.workspace =
        workspace.data() + (64 - reinterpret_cast<std::uintptr_t>(workspace.data()) % 64) % 64;
    args.workspace_bytes = workspace.size() - 64;
    cell.fn(args);
    return check_parity(op, dims, outputs, w.reference(),
                        tolerance_of(judged_as ? *judged_as : cell, op, dims));
}

namespace {

// One launch on fresh inputs, compared with the reference; then the guard zones and the
// inputs are checked.
ParityResult check_once(const OpInfo& op, const RowSpec& spec, const Workload& w, Device& device,
                        const KernelArgs& args, const std::function<void()>& launch,
                        const Tolerance& tolerance, const detail::Guards& guards) {
    launch();
    device.synchronize();
    auto got = w.make_outputs();
    for (std::size_t s = 0; s < op.outputs.size(); ++s)
        device.download(got[s].data(), args.out[s], got[s].size() * sizeof(float));
    auto parity = check_parity(op, spec.dims, got, w.reference(), tolerance);
    detail::add_violations(parity, detail::check_guards(device, spec.device_kind, guards));
    return parity;
}

// Warm-up, which also sizes the batches of short kernels: returns launches per sample.
std::int64_t warm_up(Device& device, const std::function<void()>& launch, const ProfileSettings& st,
                     double* launch_s = nullptr) {
    std::int64_t warm = 0;
    const auto w0 = Clock::now();
    double warm_s = 0;
    do {
        warm_s += device.time_launches(launch, 1);
        ++warm;
    } while (seconds_since(w0) < st.warmup_s && warm < 1000000);
    const double per_launch = warm_s / double(warm);
    if (launch_s)
        *launch_s = per_launch;
    if (st.cold || per_launch <= 0 || per_launch >= st.min_sample_s)
        return 1;
    return std::clamp<std::int64_t>(std::int64_t(std::ceil(st.min_sample_s / per_launch)), 1,
                                    1 << 20);
}

// Whether a device other than the CPU runs its kernels on the host's own cores (an OpenCL
// CPU device: PoCL), so the host's clock is the clock its rows ran at.
bool runs_on_host_cpu(const DeviceInfo& info) {
    return info.properties.text_or("device_type", std::string()) == "CPU";
}

// Where a row's clock comes from: the calling thread's cycle counter (CPU rows on a PMU),
// the device's own per-sample clock (SampleClock), the dependent-add chain around the row
// (CPU rows without a counter, and devices that run on the host's cores: the counter counts
// this thread's cycles, not their worker threads'), or nothing, with the reason. Found once
// per row, not per sample.
struct RowClockSource {
    std::optional<CpuClockCounter> counter; // available, or empty
    const SampleClock* device = nullptr;    // non-CPU devices that report one
    bool chain = false;
    std::string host_device; // the device's id where a host-CPU device uses the chain
    std::string none_reason; // why no clock, where none is measured

    RowClockSource(const Device& d, bool on_cpu) {
        if (on_cpu) {
            counter.emplace();
            if (!counter->available()) {
                counter.reset();
                chain = true;
            }
            return;
        }
        device = dynamic_cast<const SampleClock*>(&d);
        if (device)
            return;
        const DeviceInfo& info = d.info();
        if (runs_on_host_cpu(info)) {
            chain = true;
            host_device = info.id;
        } else if (device_kind(info.kind) == DeviceKind::OpenCl) {
            none_reason = "core OpenCL has no query for a device's clock while a kernel runs (" +
                          info.id + " is not a CPU device, so the host's clock does not apply)";
        } else if (device_kind(info.kind) == DeviceKind::Vulkan) {
            none_reason = "Vulkan has no query for a device's clock while a shader runs (" +
                          info.id + " is not a CPU device, so the host's clock does not apply)";
        } else {
            none_reason = info.id + " reports no clock (its backend measures none)";
        }
    }
    bool measured() const { return counter || device || chain; }
    std::string method() const {
        if (counter)
            return counter->method();
        if (device)
            return device->sample_clock_method();
        if (!host_device.empty())
            return std::string(kDependentAddChainMethod) +
                   " before and after the row (the host's "
                   "clock: " +
                   host_device + " runs on the host CPU)";
        return std::string(kDependentAddChainMethod) + " before and after the row";
    }
};

// Samples (seconds per launch) until `rule` says stop; each sample's effective clock (GHz)
// goes to `sample_ghz` where `clock` gives one per sample.
std::vector<double> take_samples(Device& device, const std::function<void()>& launch,
                                 std::int64_t batch, const ProfileSettings& st, StoppingRule& rule,
                                 const Profiler::Progress& progress, RowClockSource& clock,
                                 std::vector<double>& sample_ghz,
                                 const Profiler::SampleHook& hook) {
    CpuClockCounter* counter = clock.counter ? &*clock.counter : nullptr;
    std::vector<double> samples;
    auto s0 = Clock::now();
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
        const bool last = rule.add(t, seconds_since(s0)) != StoppingRule::Stop::None;
        if (hook) {
            double waited = 0;
            const bool go_on = hook(samples, last, waited);
            // The time it waited (the other side's turn) is not this row's budget.
            s0 += std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(std::max(0.0, waited)));
            last_beat = Clock::now();
            if (!go_on)
                break;
        }
        if (last)
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

// Is the measurement suspect? `throttle_before` is the host's throttle count before the
// row (-1: not a CPU row).
void add_warnings(ProfileRow& row, const StoppingRule& rule, const ProfileSettings& st,
                  std::int64_t throttle_before) {
    if (row.missed_noise_target(st.max_noise))
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

// Measures `cpu`'s ceilings again (1-thread probes on the CPU of the set's) and keeps each
// ceiling's higher value.
void raise_ceilings(CpuDevice& cpu) {
    CpuPeaks merged = cpu.peaks().value(); // prepared: the row ran on it
    const CpuPeaks fresh = measure_cpu_peaks(merged.pinned_cpu);
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
    cpu.set_peaks(std::move(merged)); // and so into its info(): dinfo
}

} // namespace

ProfileRow Profiler::run_row(const RowSpec& spec, const Progress& progress) {
    ProfileRow row;
    row.spec = spec;
    // Long steps inside a row (a device's first prepare(): probes, sweeps, kernel builds, as
    // in a worker restarted past its first row) beat as the row's progress, so a worker's
    // controller does not take a slow machine for a hung row.
    const PrepareStepScope heartbeat([&](const std::string& step) {
        if (progress)
            progress("preparing: " + step, 0);
    });
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
    prepare(*device);
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
    const bool on_cpu = device_kind(spec.device_kind) == DeviceKind::Cpu;
    const auto throttle_before = on_cpu ? host_info().throttle_count : -1;

    // The reference rung is timed for the speedups on its own small budget. Where computing
    // the reference for the parity checks took ProfileSettings::kReferenceOnceFactor times
    // that budget or more (gemm 4096^3: 30-60 s on one core), that computation is its one
    // sample: parity, a warm-up and three samples more would take minutes.
    const bool reference_budget = spec.is_reference() && m_settings.reference_budget_s > 0;
    if (reference_budget && w.reference_seconds() >= ProfileSettings::kReferenceOnceFactor *
                                                         m_settings.reference_budget_s) {
        // No buffers, no launch: it is the reference, compared with itself.
        row.parity = check_parity(*op, spec.dims, w.reference(), w.reference(),
                                  tolerance_of(*cell, *op, spec.dims));
        row.launches_per_sample = 1;
        StoppingRule once({m_settings.max_noise, 1, 0.0, 1});
        summarize(row, once, {w.reference_seconds()}, m_settings.keep_samples);
        row.stop_reason = "reference_once";
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "timed once: the reference took %.1f s when it was computed for the parity "
                      "checks, and that run is its sample",
                      w.reference_seconds());
        row.warnings.push_back(buf);
        detail::judge(row, dinfo, working_set_bytes(*op, spec.dims), false,
                      read_share(*op, spec.dims), *cell);
        row.status = RowStatus::Ok;
        return;
    }
    const bool all_threads = detail::row_uses_all_threads(spec, *cell);
    const bool host_caches = shares_host_caches(dinfo);
    // The host CPU's ceilings, where the row runs on its cores: their CPU and memory probes.
    std::optional<CpuPeaks> host_peaks;
    if (on_cpu || host_caches)
        host_peaks = cpu_peaks();
    // A 1-thread CPU row runs on its ceilings' CPU (one_thread_cpu()), from its buffers'
    // first touch to its last sample: one CPU is not another (a VM's vCPUs differed by 12 %
    // in DRAM bandwidth, a hybrid part's cores by more), and unpinned samples land on either.
    // Released before a re-probe, whose all-thread probes must not start from one CPU.
    std::optional<detail::ScopedCpuPin> pin;
    if (on_cpu && !all_threads) {
        pin.emplace(one_thread_cpu(pinned_cpu_of(host_peaks)));
        row.pinned_cpu = pin->cpu();
    }
    detail::clear_vector_upper_state(); // the row before it does not slow this one
    detail::DeviceBuffers bufs(*device);
    detail::Guards guards;
    const KernelArgs args = detail::make_args(
        *op, spec, w, *device, bufs,
        std::max<std::int64_t>(spec.workspace_bytes, detail::workspace_of(*cell)), guards);
    const KernelFn& fn = cell->fn;
    const std::function<void()> launch = [&] { fn(args); };

    // set_parity_once(): a row run before takes its first run's parity.
    const FirstRun* earlier = nullptr;
    if (m_parity_once)
        if (const auto it = m_first_runs.find(spec.index);
            it != m_first_runs.end() && it->second.label == spec.label())
            earlier = &it->second;
    if (earlier) {
        row.parity = earlier->parity;
    } else {
        if (progress)
            progress("parity", 0);
        row.parity = check_once(*op, spec, w, *device, args, launch,
                                tolerance_of(*cell, *op, spec.dims), guards);
    }
    if (progress)
        progress("warmup", 0);
    double launch_s = 0;
    if (earlier && earlier->launch_s >= m_settings.warmup_s)
        row.launches_per_sample = earlier->launches_per_sample; // a launch outlasts the warm-up
    else
        row.launches_per_sample = warm_up(*device, launch, m_settings, &launch_s);
    const double ws =
        working_set_bytes(*op, spec.dims) +
        double(std::max<std::int64_t>(spec.workspace_bytes, detail::workspace_of(*cell)));
    const double share = read_share(*op, spec.dims);
    // Judges a row of this spec against the ceiling its working set and intensity pick.
    auto judge_row = [&](ProfileRow& r) {
        if (host_caches) {
            // A CPU OpenCL device (PoCL) runs on this CPU's cores and caches: the host's
            // per-level ceilings (all threads) bound it, not its own memory probe.
            auto host = m_devices.find("cpu");
            if (host) {
                host->prepare();
                detail::judge(r, host->info(), ws, true, share, *cell);
                if (!r.ceiling_id.empty())
                    r.ceiling_id = "cpu:" + r.ceiling_id;
            }
            if (!host || r.ceiling_id.empty())
                detail::judge(r, dinfo, ws, all_threads, share, *cell);
        } else {
            detail::judge(r, dinfo, ws, all_threads, share, *cell);
        }
    };
    // The memory beside a row that will be judged against a measured CPU DRAM ceiling (the
    // choice depends on the op's bytes, flops and working set, not on the timings): that
    // ceiling's probe, timed before and after the samples (ProfileRow::memory).
    std::string memory_probe;
    if (on_cpu || host_caches) {
        ProfileRow planned;
        planned.bytes = row.bytes;
        planned.flops = row.flops;
        judge_row(planned);
        memory_probe = planned.ceiling_id;
    }
    const std::string host_probe =
        memory_probe.rfind("cpu:", 0) == 0 ? memory_probe.substr(4) : memory_probe;
    std::optional<CpuMemoryProbe> memory;
    if (host_probe.rfind("dram.", 0) == 0 && host_peaks && m_settings.memory_beside)
        memory.emplace(host_probe, *host_peaks); // its working set allocated once, for both sides
    std::vector<double> memory_windows;
    auto time_memory = [&] {
        if (!memory || !memory->valid())
            return;
        if (progress)
            progress("memory", std::int64_t(memory_windows.size()));
        const auto got = memory->time(kSanitized ? 1 : 4);
        memory_windows.insert(memory_windows.end(), got.begin(), got.end());
    };
    time_memory();
    StoppingRule rule({m_settings.max_noise,
                       reference_budget
                           ? std::min(m_settings.min_samples, ProfileSettings::kReferenceMinSamples)
                           : m_settings.min_samples,
                       m_settings.row_budget_s(spec.is_reference()), m_settings.max_samples});
    // The effective clock: per sample from the cycle counter where the kernel has one, else a
    // dependent-add chain before and after the samples (CPU rows: this thread runs them).
    RowClockSource clock(*device, on_cpu);
    RowClockReadings clocks;
    clocks.method = clock.method();
    if (clock.chain)
        clocks.chain_before_ghz = dependent_add_chain_ghz();
    auto samples = take_samples(*device, launch, row.launches_per_sample, m_settings, rule,
                                progress, clock, clocks.sample_ghz, m_sample_hook);
    if (clock.chain)
        clocks.chain_after_ghz = dependent_add_chain_ghz();
    time_memory();
    if (!memory_windows.empty())
        row.memory = {memory_probe, SampleStats::from(memory_windows).median,
                      std::int64_t(memory_windows.size())};
    pin.reset();
    if (clock.measured())
        apply_throttle(row, clocks, m_settings.throttle_threshold, samples);
    else
        row.clock = RowClock::none(clock.none_reason);
    // Every timed launch since: a canary once overwritten stays so; inputs are compared again.
    detail::add_violations(row.parity,
                           detail::check_guards(*device, spec.device_kind, guards, !earlier));
    if (m_parity_once && !earlier)
        m_first_runs[spec.index] = {spec.label(), row.parity, row.launches_per_sample, launch_s};
    summarize(row, rule, std::move(samples), m_settings.keep_samples);
    const auto warnings_before = row.warnings.size();
    judge_row(row);
    const auto cpu = std::dynamic_pointer_cast<CpuDevice>(device);
    if (row.ceiling_fraction > kCeilingTolerance && cpu && m_reprobes < kMaxReprobes) {
        ++m_reprobes;
        const std::string first_id = row.ceiling_id;
        const double first_value = row.ceiling_value, first_fraction = row.ceiling_fraction;
        // The probes take seconds (tens on a loaded machine); their steps beat as the row's
        // progress (as run_row's do), named for what they are here.
        std::int64_t steps = 0;
        const PrepareStepScope heartbeat([&](const std::string& step) {
            if (progress)
                progress("re-measuring the CPU ceilings: " + step, ++steps);
        });
        raise_ceilings(*cpu);
        row.warnings.resize(warnings_before);
        judge_row(row);
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

RunClock run_clock() {
    const CpuClockCounter counter; // here for its method(): why there is none, if none
    RunClock c;
    c.method = counter.available() ? counter.method()
                                   : std::string(kDependentAddChainMethod) +
                                         " before and after each row (" + counter.method() + ")";
    c.per_sample = counter.available();
    c.chain_ghz = dependent_add_chain_ghz();
    return c;
}

std::vector<DeviceInfo> Profiler::context_devices() const {
    std::vector<DeviceInfo> infos;
    std::set<std::string> wanted(m_settings.devices.begin(), m_settings.devices.end());
    for (const auto& d : m_devices.devices()) {
        const auto& info = d->info();
        if (!wanted.empty() && !wanted.count(info.id) && !wanted.count(info.kind) &&
            info.id != "cpu")
            continue;
        announce_prepare_step("ceilings of " + info.id);
        prepare(*d);
        infos.push_back(d->info());
    }
    return infos;
}

void Profiler::prepare(Device& device) const {
    const auto& info = device.info();
    if (device_kind(info.kind) == DeviceKind::Cpu || m_device_sets.count(info.id)) {
        device.prepare(); // idempotent
        return;
    }
    auto set =
        prepare_device(device, m_ceiling_cache ? &*m_ceiling_cache : nullptr, m_ceiling_policy);
    m_device_sets[info.id] = std::move(set);
}

std::map<std::string, nlohmann::json> Profiler::device_ceiling_sets() const {
    std::map<std::string, nlohmann::json> out;
    for (const auto& [id, set] : m_device_sets)
        if (!set.is_null())
            out.emplace(id, set);
    return out;
}

std::optional<CpuPeaks> Profiler::cpu_peaks() const {
    const auto cpu = find_cpu_device(m_devices);
    if (!cpu)
        return std::nullopt;
    cpu->prepare();
    return cpu->peaks();
}

std::vector<std::string> Profiler::context_warnings() const {
    const auto cpu = find_cpu_device(m_devices);
    auto warnings = host_measurement_warnings(pinned_cpu_of(cpu ? cpu->peaks() : std::nullopt));
    if (const auto w = openblas_core_warning(openblas_info()); !w.empty())
        warnings.push_back(w);
    return warnings;
}

} // namespace switchyard
