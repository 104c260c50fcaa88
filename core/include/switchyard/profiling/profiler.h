// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

class Workload;
class BackendRegistry;
class DeviceRegistry;

/// The profiling engine, in-process: plans rows (ops x sizes x devices x cells) and
/// measures one row at a time. The worker process (switchyard-cli) runs it; the
/// WorkerController (workercontroller.h) isolates it from the caller.
/// How a run's rows have their clocks measured, and the clock when it began (the report's
/// context.clock).
struct SWITCHYARD_CORE_EXPORT RunClock {
    std::string method;
    bool per_sample = false; // a cycle counter per sample; else a chain before and after rows
    double chain_ghz = 0;    // the dependent-add chain's clock at the start (0: not read)
};
/// This process's: the counter's method where there is one, and a dependent-add chain now.
SWITCHYARD_CORE_EXPORT RunClock run_clock();

/// Every name a run's settings use, checked before anything runs (the CLI before its worker
/// starts, fleet submit before it writes a script, the GUI before a run): the ops, the ops
/// of OP:SIZE sizes (each in the run) and every size, device ids and kinds (a kind the core
/// knows or a backend provides, alone or as KIND:N), --cells and --variant (check_variant:
/// some declared cell of the run's ops has it; one this device lacks still falls back).
/// `here`: each --cells name must also be available on this machine (a run here); false for
/// a run elsewhere (fleet submit: declared is enough). Nothing is loaded or measured.
/// Throws std::invalid_argument naming the input and the close names.
SWITCHYARD_CORE_EXPORT void check_profile_names(const ProfileSettings& settings,
                                                BackendRegistry& backends, bool here = true);

class SWITCHYARD_CORE_EXPORT Profiler {
public:
    /// Called while a row runs: phase ("inputs", "reference", "parity", "warmup",
    /// "sampling") and samples so far. The worker turns these into heartbeats.
    using Progress = std::function<void(const std::string& phase, std::int64_t samples)>;

    /// Resolves cells in `backends` (its kernel registry) and runs them on `devices`;
    /// both must outlive the profiler.
    Profiler(ProfileSettings settings, BackendRegistry& backends, DeviceRegistry& devices);
    ~Profiler();

    const ProfileSettings& settings() const noexcept { return m_settings; }
    /// The settings the next rows run with: a pass's or a slice's share of the budget
    /// (ProfileSettings::pass_settings, slice_settings). What plan() reads (ops, sizes,
    /// devices, cells) must stay as it was; the last (op, size)'s inputs are kept.
    void use_settings(ProfileSettings settings) { m_settings = std::move(settings); }

    /// The cell a tuning picks instead of the chain's `pick` for (op, dims) on `device`; null
    /// for the chain's. The composition root sets it (tuning/tunedresolve.h, tuned_picker())
    /// where ProfileSettings::use_tuning holds; the plan's resolved rows then run the tuned
    /// cell (RowSpec::tuned_from names the pick it replaced).
    using TunedPicker = std::function<KernelRegistry::CellPtr(
        const OpInfo& op, const Dims& dims, const DeviceInfo& device, const KernelCell& pick)>;
    void set_tuned_picker(TunedPicker picker) { m_tuned_picker = std::move(picker); }

    /// Where the devices other than the CPU keep what their prepare() measured between runs
    /// (prepare_device()); without one they measure every run. The CPU's ceilings are given
    /// to its device by the front end (CpuDevice::set_peaks()).
    void set_ceiling_cache(std::optional<CeilingCache> cache, CeilingCachePolicy policy = {}) {
        m_ceiling_cache = std::move(cache);
        m_ceiling_policy = policy;
    }
    /// What prepare_device() said of each device prepared so far, by id (RunContext's
    /// device_ceiling_sets).
    std::map<std::string, nlohmann::json> device_ceiling_sets() const;

    /// Every row of the run, in order. Loads the backend registry first. Throws
    /// std::invalid_argument for an unknown op, device or malformed size (with suggestions).
    std::vector<RowSpec> plan() const;

    /// Parity once a row: from then on, a row this profiler has run before (the same index and
    /// label) takes the parity of its first run (its one checking launch, its outputs compared
    /// with the reference, its inputs compared after the samples) and checks only its guard
    /// zones. `ab`'s workers run each row in 2 x pairs slices of the same code on the same
    /// inputs: checking each slice again was three quarters of a DRAM row's slice (a 134 MB
    /// row: 280 ms a slice for a 10 ms budget). A row whose one launch took longer than the
    /// warm-up budget the first time is not warmed up again (one launch is what it was).
    void set_parity_once(bool on) { m_parity_once = on; }
    /// The workloads a Profiler with set_parity_once() keeps between rows, at most.
    static constexpr std::int64_t kKeptWorkloadBytes = std::int64_t(1) << 30;

    /// Called after each timed sample of the rows run from now on (empty: none), with the
    /// row's samples so far (seconds per launch, in order) and whether the row's budget ended
    /// with it. It may block, as a paired run's side does while the other side samples
    /// (worker/abcontroller.h, lockstep): the seconds it reports in `waited` do not count
    /// toward the row's budget. It returns false to end the row's sampling there.
    using SampleHook =
        std::function<bool(const std::vector<double>& samples, bool last, double& waited)>;
    void set_sample_hook(SampleHook hook) { m_sample_hook = std::move(hook); }

    /// Measures one row; never throws (a failure becomes the row's status).
    ProfileRow run_row(const RowSpec& spec, const Progress& progress = {});

    /// plan() + run_row() for each, in this process (no isolation).
    std::vector<ProfileRow> run(const std::function<void(const ProfileRow&)>& on_row = {});

    /// The devices of the run (those the settings name, and the CPU), each prepared: their
    /// properties and ceilings, for the report's context (report/runcontext.h, run_context()).
    std::vector<DeviceInfo> context_devices() const;
    /// The run's CPU ceilings: those of the devices' CPU device (find_cpu_device), prepared
    /// first, so measured when it has none yet; none when the registry has no CPU device.
    std::optional<CpuPeaks> cpu_peaks() const;
    /// The run-level warnings: what makes this host's measurements suspect (governor,
    /// pinning, a Debug build, a busy system) and an OpenBLAS core that is a fallback.
    std::vector<std::string> context_warnings() const;

private:
    // run_row without the catch: fills `row` (spec set) or throws.
    void measure(ProfileRow& row, const Progress& progress);
    const Workload& workload(const std::string& op, const Dims& dims, const Progress& progress);
    // prepare() of a device, through the ceiling cache for one other than the CPU.
    void prepare(Device& device) const;

    ProfileSettings m_settings;
    TunedPicker m_tuned_picker;
    SampleHook m_sample_hook;
    BackendRegistry& m_backends;
    DeviceRegistry& m_devices;
    // By (op, dims): the last one, which consecutive rows share; with set_parity_once(), every
    // one that fits kKeptWorkloadBytes (and an eighth of the machine's memory), so a row's
    // later slices, a pass apart, make their inputs and reference once (least recently used
    // first out).
    struct KeptWorkload {
        std::unique_ptr<Workload> workload;
        std::int64_t bytes = 0;
        std::uint64_t used = 0;
    };
    std::map<std::string, KeptWorkload> m_workloads;
    std::uint64_t m_workload_uses = 0;
    int m_reprobes = 0; // CPU ceilings re-measured after a row read above them (kMaxReprobes)
    bool m_parity_once = false;
    struct FirstRun {
        std::string label;
        ParityResult parity;
        std::int64_t launches_per_sample = 1;
        double launch_s = 0; // one launch, as the warm-up timed it
    };
    std::map<std::int64_t, FirstRun> m_first_runs; // by row index (set_parity_once)
    std::optional<CeilingCache> m_ceiling_cache;
    CeilingCachePolicy m_ceiling_policy;
    // By device id, every device prepared through prepare() (null: it keeps nothing).
    mutable std::map<std::string, nlohmann::json> m_device_sets;
};

/// A row may read up to this fraction of its ceiling before it is flagged: measured
/// ceilings are best-of-N probes, and a kernel timed on a quiet moment can beat one by a
/// few per cent. Above it the row gets a warning (the ceiling or the byte count is wrong);
/// tst_profiler fails on such a row. Documented in docs/json.md.
inline constexpr double kCeilingTolerance = 1.10;

/// A CPU row above kCeilingTolerance makes the profiler measure the CPU's ceilings again
/// (at most this many times per Profiler) and keep each ceiling's higher value: on a
/// shared machine a probe timed while a neighbour used the cache or the other core
/// understates its level. The row is judged again and says so; a row still above is a bug.
inline constexpr int kMaxReprobes = 2;

/// A working set up to this factor above a level's capacity is still judged against that
/// level: the level keeps serving most of it (victim caches, prefetch), and the default
/// sweep's L2 size sits exactly at the L2 capacity. Documented in docs/json.md.
inline constexpr double kLevelSlack = 1.25;

/// What a row is judged against: `ceiling` (nullptr when the device has none that fits)
/// and the level label the row shows ("L1" ... "DRAM", "HBM", "device", or "compute").
struct SWITCHYARD_CORE_EXPORT CeilingChoice {
    const Ceiling* ceiling = nullptr;
    std::string level;
    double intensity = 0; // FLOP per byte of traffic (the op's bytes)
};
/// The ceiling a row is judged against. Among `info`'s bandwidth ceilings for
/// `all_threads` (threads 0) or one thread (threads 1), the smallest level whose
/// capacity_bytes holds `working_set_bytes` (within kLevelSlack; capacity 0: memory,
/// always fits), and of that level the highest measured ceiling (read or triad or copy;
/// theoretical ones only when no measured one exists). When the row's intensity (flops /
/// traffic_bytes, the bytes the op moves; the working set when 0) is above memory's ridge
/// point (compute peak / the last level's bandwidth) the compute ceiling of the same thread
/// count wins and the level is "compute". The working set (inputs + outputs + workspace)
/// only picks the level. A memory-bound row that fits in a cache the device states
/// (properties "global_memory_cache_bytes", within kLevelSlack) but has no ceiling for gets
/// no ceiling and the level "cache": its memory ceiling does not bound it.
/// `compute` is the arithmetic the cell does (its metadata's "compute", "fp32" when it
/// states none): only compute ceilings of that kind bound it (ids "fma.fp32.all",
/// "theoretical.tensor.tf32": the kind is a dot-separated part of the id). A cell of
/// another kind that the device has no ceiling for is compute-bound with no ceiling: its
/// level is "compute", and it is not judged against FP32 lanes it does not use.
/// `read_share` is the reads' share of the row's traffic (read_share in ops.h; 0: unknown).
/// A bandwidth ceiling whose id names its access pattern ("read" 1, "triad" 2/3, "copy" 1/2
/// of its bytes read) bounds only rows that read at least that share: memory serves reads
/// faster than writes, so a copy-like row (rms_norm) is bounded by the level's copy, not
/// its triad, where the level has one. A level with no ceiling of a share the row reaches
/// keeps its preferred one, as do rows of unknown share.
SWITCHYARD_CORE_EXPORT CeilingChoice choose_ceiling(const DeviceInfo& info,
                                                    double working_set_bytes, double flops,
                                                    bool all_threads, double traffic_bytes = 0,
                                                    std::string_view compute = "fp32",
                                                    double read_share = 0);

/// Whether ceiling `c` is preferred to `than` of the same level: measured before
/// theoretical, then the higher value. How choose_ceiling picks each level's bandwidth
/// ceiling, and how the GUI's roofline picks each level's roof.
SWITCHYARD_CORE_EXPORT bool preferred_ceiling(const Ceiling& c, const Ceiling& than);

/// A device that is not the CPU but runs on its cores and caches (an OpenCL device of type
/// CPU, such as PoCL's): its rows are judged against the host CPU's per-level ceilings.
SWITCHYARD_CORE_EXPORT bool shares_host_caches(const DeviceInfo& info);

/// Measurement warnings about the host (governor not `performance`, debug build, ...).
/// `ceilings_cpu`: the pinned_cpu of the CPU ceilings in use (-1: none), which may overrule
/// the CPU SWITCHYARD_PIN_CPU names (pin_cpu_problem()).
SWITCHYARD_CORE_EXPORT std::vector<std::string> host_measurement_warnings(int ceilings_cpu);

/// One launch of a CPU cell in this process on fresh inputs of (op, dims), its outputs
/// checked against the reference at the tolerance of `judged_as` (its meta "tolerance", else
/// the op's; `cell` itself when null), as a profile row checks them: what a tuned choice
/// passes, at the overridden cell's tolerance, before it is first used (no timing, no
/// ceilings). Throws std::invalid_argument for a cell of another device kind or one not
/// loaded; what the kernel throws passes through.
SWITCHYARD_CORE_EXPORT ParityResult check_cpu_cell(const KernelCell& cell, const OpInfo& op,
                                                   const Dims& dims,
                                                   const KernelCell* judged_as = nullptr);

} // namespace switchyard
