// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>
#include <switchyard/registry/codeidentity.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/profiling/clocks.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/parity.h>
#include <switchyard/profiling/stats.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// How a row ended. The JSON ids are stable: "ok", "fail", "error", "crashed", "timed_out".
enum class RowStatus {
    Ok,       // measured, parity PASS
    Fail,     // measured, parity FAIL
    Error,    // the kernel threw or was unavailable
    Crashed,  // the worker died in this row
    TimedOut, // the row hung and the worker was killed
};
SWITCHYARD_CORE_EXPORT std::string_view to_string(RowStatus status) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<RowStatus>
row_status_from_string(std::string_view id) noexcept;

/// What timed the samples. JSON ids: "host" (steady_clock), "device" (device events).
enum class Timer { Host, Device };
SWITCHYARD_CORE_EXPORT std::string_view to_string(Timer timer) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<Timer> timer_from_string(std::string_view id) noexcept;

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, RowStatus status);
/// Throws std::runtime_error ("status: unknown status 'x'").
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RowStatus& status);
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, Timer timer);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, Timer& timer);

/// One row of a profile run before it runs: what to measure, where.
struct SWITCHYARD_CORE_EXPORT RowSpec {
    std::int64_t index = 0;
    std::string op;
    std::string size; // dims_to_string()
    Dims dims{};
    std::string device;      // device id the kernel runs on ("cpu", "cuda:0")
    std::string device_kind; // kernel key's device field
    std::string arch;
    std::string variant;
    std::string backend;
    std::string source;       // the cell's CellSource id: "builtin", "registered", "plugin"
    std::string resolved_for; // the device the resolution was for, when it fell back elsewhere
    std::int64_t workspace_bytes = 0;
    /// This cell is the one dispatch resolves for (op, device) (JSON "resolved": true). Set
    /// on every row of a default run; in --all-variants runs on the resolved cell only.
    bool resolved = false;
    /// The cell ("generic/row8") whose code this one runs on this device, where the cell says
    /// so (its meta's "runs_as", by the device's type: OpenCL's `default` runs `row8` on a CPU
    /// device); empty otherwise (JSON "runs_as", absent when empty). Dispatch findings take
    /// a gap between the two for the run's noise, not for a faster cell.
    std::string runs_as;
    /// The CPU threads the cell runs on, as its meta "threads" states it (1; the pool's size
    /// for `threaded`, OpenBLAS's for `openblas`); 0 where the cell states none, or more
    /// than kMaxThreads (every non-CPU cell, older reports). JSON "threads", absent when 0.
    /// Dispatch findings say when the fastest cell runs on other threads than the resolved
    /// one.
    /// The chain's pick ("x86-64-v2/tunable") where a tuning chose this cell instead (a
    /// resolved row of a run that followed tuning files); "" otherwise. JSON "tuned_from".
    std::string tuned_from;
    /// The identity of the cell's code (its backend, version and library's build ID): two
    /// rows with the same cell key and the same code measured identical code (compare says
    /// so, a tuning records it). JSON "code", absent where unknown.
    CodeIdentity code;
    std::int64_t threads = 0;
    static constexpr std::int64_t kMaxThreads = std::int64_t(1) << 20;

    /// The CPU reference rung (cpu, generic, reference): every row's speedup is against it.
    bool is_reference() const noexcept {
        return switchyard::device_kind(device_kind) == DeviceKind::Cpu && arch == "generic" &&
               variant == "reference";
    }

    /// "gemm 512x512x512 cpu x86-64-v3/default"
    std::string label() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key ("row.dims[1]: ...").
    static RowSpec from_json(const nlohmann::json& j);
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const RowSpec& spec);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RowSpec& spec);

/// One independent run of a row (`profile --repeat N`): its own samples' summary.
struct SWITCHYARD_CORE_EXPORT RunSummary {
    double median = 0;      // seconds per launch
    std::int64_t count = 0; // samples kept by the run's statistics
    double rel_noise = 0;   // the run's stddev / mean
    double clock_ghz = 0;   // the run's effective clock, where measured
    double memory_gbs = 0;  // the run's memory probe median (ProfileRow::memory), where timed
    /// Launches per sample in this run (each warm-up sizes its own batches; 0: not recorded).
    std::int64_t launches_per_sample = 0;
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const RunSummary& run);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RunSummary& run);

/// What the CPU's memory gave the probe of a row's ceiling beside the row (JSON "memory",
/// absent otherwise). A row judged against a measured CPU DRAM ceiling ("dram.copy.1t", or
/// "cpu:dram.copy.all" for a CPU OpenCL device) has that ceiling's probe timed in one-pass
/// windows before and after its samples (CpuMemoryProbe). The ceiling is the best the
/// probe got when the run began; on a shared host other tenants take a share of the memory's
/// bandwidth from moment to moment, so a row at the memory's limit in a busy moment reads
/// below its ceiling. `median_gbs` over the row's ceiling_value is the share of the ceiling
/// memory gave then; the row's gbps over `median_gbs` how close the row came to that.
struct SWITCHYARD_CORE_EXPORT RowMemory {
    std::string probe;        // the ceiling whose probe ran: the row's ceiling_id
    double median_gbs = 0;    // the median of the probe's windows (of each run's, merged)
    std::int64_t windows = 0; // windows timed (over every run)
    bool measured() const noexcept { return median_gbs > 0 && windows > 0; }
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const RowMemory& memory);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RowMemory& memory);

/// One measured row of a report.
struct SWITCHYARD_CORE_EXPORT ProfileRow {
    RowSpec spec;
    RowStatus status = RowStatus::Ok;
    std::string reason; // why, for every status but ok
    Timer timer = Timer::Host;
    std::int64_t launches_per_sample = 1;
    std::string stop_reason;     // StoppingRule::to_string
    SampleStats stats;           // seconds per launch
    std::vector<double> samples; // seconds per launch (thinned to keep_samples)
    double bytes = 0, flops = 0;
    double gbps = 0, gflops = 0; // from the median
    /// The device's headline figures, for information only: a row is judged against the
    /// ceiling of its level (below), never against these (format_version 3 dropped the
    /// fractions of them, which read 160-360 % for cache-resident rows).
    double peak_bandwidth_gbs = 0, peak_gflops = 0;
    /// The ceiling this row is judged against (DeviceInfo::ceilings): the bandwidth of the
    /// memory level its working set fits in, or the FMA peak for compute-bound ops. JSON
    /// keys "ceiling_id", "level" ("L2", "DRAM", "HBM", "compute"), "ceiling_value" (GB/s or
    /// GFLOP/s), "ceiling_fraction" (achieved / ceiling), "intensity" (FLOP/byte).
    std::string ceiling_id;
    std::string level;
    double ceiling_value = 0, ceiling_fraction = 0;
    double intensity = 0;
    ParityResult parity;
    std::vector<std::string> warnings;
    /// The CPU reference's median over this row's (JSON "speedup_vs_reference"; 0 when the
    /// run has no measured reference row for its op and size). Set by
    /// apply_reference_speedups().
    double reference_speedup = 0;
    /// The effective clock during the row's samples (JSON "clock", absent when not
    /// measured: rows of devices other than the CPU). Samples below `clock.threshold` of
    /// the best clock were dropped before the statistics (`clock.samples_discarded`).
    RowClock clock;
    /// The memory beside the row, for rows judged against a measured CPU DRAM ceiling.
    RowMemory memory;
    /// The CPU a 1-thread CPU row ran on, held there from its buffers' first touch to its
    /// last sample: its ceilings' CPU (CpuPeaks::pinned_cpu, one_thread_cpu()). -1: not
    /// pinned (rows on all threads or other devices, SWITCHYARD_PIN_CPU=off, older reports).
    /// JSON "pinned_cpu", absent when -1.
    int pinned_cpu = -1;
    /// The independent runs of this row, in the order they ran (JSON "runs", present with
    /// two or more: `profile --repeat N`). Each pass of a repeated profile runs every row
    /// once, so drift between passes hits every cell alike; the row's statistics and
    /// samples are the runs' pooled (merge_runs()). compare tests the run medians.
    std::vector<RunSummary> runs;

    /// The run medians (seconds per launch) of a row with two or more runs, else empty.
    std::vector<double> run_medians() const;
    bool measured() const noexcept { return status == RowStatus::Ok || status == RowStatus::Fail; }
    /// Measured, but its sampling stopped (time budget, sample cap) before the relative noise
    /// fell under `max_noise`, and it stays above it.
    bool missed_noise_target(double max_noise) const noexcept;
    /// (op, size, backend, device, arch, variant): how compare pairs rows.
    std::string key() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key ("row.samples[2]: expected a number,
    /// got string"; inside a report "rows[3].samples[2]: ...").
    static ProfileRow from_json(const nlohmann::json& j);
};
/// One row from its independent runs (the same spec, each measured once, in run order):
/// the pooled samples (thinned to `keep_samples`) and their statistics, throughput and
/// ceiling fraction from the pooled median, `runs` one summary per measured run, warnings
/// merged. A run that did not measure (crashed, timed out) is left out of the pool and
/// said in the warnings; when none measured, the first run's row is returned as it is.
SWITCHYARD_CORE_EXPORT ProfileRow merge_runs(std::vector<ProfileRow> runs,
                                             std::int64_t keep_samples);

/// Sets each measured row's reference_speedup from the measured reference row of the same
/// (op, size), if the rows hold one.
SWITCHYARD_CORE_EXPORT void apply_reference_speedups(std::vector<ProfileRow>& rows);
/// The reference's median over `row`'s: 0 unless both are measured with a median.
SWITCHYARD_CORE_EXPORT double reference_speedup(const ProfileRow& row, const ProfileRow& reference);

/// How many of a run's rows missed the noise target: when more than a quarter did, the
/// machine is too noisy for the target (a shared or busy machine, a short budget), not the
/// rows; the CLI and the GUI then say so once, with what helps, instead of row by row.
struct SWITCHYARD_CORE_EXPORT NoiseVerdict {
    std::size_t measured = 0, missed = 0;
    double max_noise = 0;    // the target the rows were held to
    double median_noise = 0; // the median relative noise of the rows that missed it

    bool noisy_machine() const noexcept { return measured > 0 && missed * 4 > measured; }
    /// "12 of 16 rows missed the 0.5 % noise target (their median noise is 14 %): this machine
    /// is too noisy for it. What helps: …" — empty unless noisy_machine().
    std::string message() const;
};
SWITCHYARD_CORE_EXPORT NoiseVerdict noise_verdict(const std::vector<ProfileRow>& rows,
                                                  double max_noise);

/// A row is its spec's members plus the measurement, in one flat object.
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const ProfileRow& row);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, ProfileRow& row);

} // namespace switchyard
