// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// The effective CPU clock during a row: read from the hardware cycle counter
// through perf_event_open where the kernel allows it, else estimated by a calibrated chain
// of dependent integer adds timed before and after the row. Samples taken below a
// threshold of the row's best clock (0.75, nvbench's --throttle-threshold) are discarded
// and counted.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace switchyard {

/// nvbench's default --throttle-threshold: a sample below 75 % of the best clock is dropped.
inline constexpr double kDefaultThrottleThreshold = 0.75;

/// What one CpuClockCounter::start()/stop() pair counted.
struct SWITCHYARD_CORE_EXPORT CpuClockSample {
    bool valid = false;          // false: no counter, not scheduled at all, or another thread
    double cycles = 0;           // core cycles, user space only, scaled for multiplexing
    double ref_cycles = 0;       // reference cycles (constant rate) when has_ref_cycles(), else 0
    double elapsed_ns = 0;       // steady_clock between start() and stop()
    double enabled_ns = 0;       // the kernel's time_enabled delta: this thread's time on a CPU
    double running_fraction = 0; // time_running / time_enabled (< 1: multiplexed, scaled)

    /// cycles / ns on a CPU (enabled_ns; elapsed_ns where the kernel gave no time): the
    /// effective clock while the thread ran. 0 when not valid.
    double ghz() const noexcept;
};

/// The hardware cycle counter of the thread that constructs it (perf_event_open with
/// pid 0, cpu -1: PERF_COUNT_HW_CPU_CYCLES and, where the PMU has it,
/// PERF_COUNT_HW_REF_CPU_CYCLES; user space only, not inherited by new threads).
/// start() and stop() must be called on that thread (elsewhere stop() gives an invalid
/// sample); neither ever throws, and both are no-ops when !available().
class SWITCHYARD_CORE_EXPORT CpuClockCounter {
public:
    CpuClockCounter();
    /// Counts another perf event in place of the cycles (and no ref-cycles), so the
    /// counter's reading and scaling can be tested where there is no PMU:
    /// PERF_TYPE_SOFTWARE (1) / PERF_COUNT_SW_TASK_CLOCK (1) counts ns on a CPU on every
    /// kernel, so its "GHz" is ~1. method() is then "perf_event_open type 1 config 1".
    CpuClockCounter(std::uint32_t perf_type, std::uint64_t perf_config);
    ~CpuClockCounter();
    CpuClockCounter(const CpuClockCounter&) = delete;
    CpuClockCounter& operator=(const CpuClockCounter&) = delete;
    CpuClockCounter(CpuClockCounter&& other) noexcept;
    CpuClockCounter& operator=(CpuClockCounter&& other) noexcept;

    bool available() const noexcept { return m_cycles_fd >= 0; }
    bool has_ref_cycles() const noexcept { return m_ref_fd >= 0; }
    /// "perf_event_open cycles" ("... + ref-cycles"), or why there is no counter:
    /// "perf_event_open: EACCES (kernel.perf_event_paranoid=3)", "perf_event_open: ENOENT (no
    /// CPU PMU in /sys/bus/event_source/devices: a VM without a virtual PMU?)".
    std::string method() const { return m_method; }

    /// Begins a sample; false when there is no counter or it could not be read.
    bool start() noexcept;
    /// The cycles counted since start() (and the times to turn them into a clock).
    CpuClockSample stop() noexcept;

private:
    struct Reading {
        std::uint64_t value = 0, enabled = 0, running = 0;
    };
    static bool read_counter(int fd, Reading& out) noexcept;
    void open_cycles(std::uint32_t type, std::uint64_t config, bool with_ref);
    void close_all() noexcept;

    int m_cycles_fd = -1;
    int m_ref_fd = -1;
    std::thread::id m_thread;
    std::string m_method;
    bool m_started = false;
    Reading m_cycles_start, m_ref_start;
    std::int64_t m_start_ns = 0;
};

/// Adds in one block of the chain (one loop iteration).
inline constexpr int kDependentAddsPerIteration = 128;
/// One pass ~0.14 ms at 3.7 GHz, ~0.2 ms at 2.6 GHz; a call runs three (~0.45 ms measured here).
inline constexpr int kDefaultChainIterations = 4096;

/// The effective clock in GHz from a chain of `iterations` x kDependentAddsPerIteration
/// dependent integer adds (each waits for the one before: one add per cycle on every x86
/// core), timed with steady_clock. The chain runs three times and the fastest is kept
/// (an interrupt only ever makes one slower); the loop's own instructions run beside the
/// chain, off its critical path. 0 when iterations <= 0.
SWITCHYARD_CORE_EXPORT double dependent_add_chain_ghz(int iterations = kDefaultChainIterations);

/// A row's clock as the report keeps it. GHz figures are 0 when unknown.
struct SWITCHYARD_CORE_EXPORT RowClock {
    double best_ghz = 0;
    double median_ghz = 0;
    double min_ghz = 0;
    std::string method;        // CpuClockCounter::method() or "dependent-add chain"
    int samples_discarded = 0; // samples below threshold x best_ghz
    double threshold = kDefaultThrottleThreshold;
    bool throttled = false; // samples were discarded, or the chain fell below the threshold
    /// Why the row has no clock ("core OpenCL has no query for a device's clock ..."); set
    /// (and `method` "none") where nothing measured one. JSON "none_reason", only then.
    std::string none_reason;

    bool measured() const noexcept { return none_reason.empty() && !method.empty(); }
    /// A row that ran with no clock, and why.
    static RowClock none(std::string reason);

    nlohmann::json to_json() const;
    /// Throws jsonread::Error (a std::runtime_error) naming the bad key
    /// ("clock.best_ghz: expected a number, got string").
    static RowClock from_json(const nlohmann::json& j);
};
/// {"best_ghz", "median_ghz", "min_ghz", "method", "samples_discarded", "threshold",
/// "throttled"}; every key is required; "none_reason" where the row has no clock.
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const RowClock& clock);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RowClock& clock);

/// The method string of the chain fallback.
inline constexpr const char* kDependentAddChainMethod = "dependent-add chain";

/// What was read of a row's clock.
struct SWITCHYARD_CORE_EXPORT RowClockReadings {
    /// One per sample, GHz (CpuClockSample::ghz()); NaN, 0, negative or infinite: unknown.
    std::vector<double> sample_ghz;
    /// dependent_add_chain_ghz() before and after the row; NaN or <= 0: not taken.
    double chain_before_ghz = 0;
    double chain_after_ghz = 0;
    std::string method;
};

/// The throttle rule's verdict.
struct SWITCHYARD_CORE_EXPORT ThrottleVerdict {
    std::vector<bool> keep; // one per sample_ghz: false = discard
    int discarded = 0;
    RowClock clock;
};

/// The throttle rule, a pure function. With per-sample clocks (any known), a sample is kept
/// when its clock >= threshold x the best known clock, and unknown clocks are kept; best,
/// median and min are over the known clocks, discarded ones included; throttled when any
/// was discarded. Without any known per-sample clock, the chain readings make the summary
/// (best/min of the two, median their mean), nothing is discarded, and throttled means
/// after < threshold x before. With neither, every GHz is 0 and nothing is discarded.
/// Throws std::invalid_argument unless 0 <= threshold <= 1.
SWITCHYARD_CORE_EXPORT ThrottleVerdict apply_throttle_threshold(
    const RowClockReadings& readings, double threshold = kDefaultThrottleThreshold);

} // namespace switchyard
