// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/abreport.h>
#include <switchyard/report/compare.h>
#include <switchyard/worker/protocol.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

class BackendRegistry;
class DeviceRegistry;

/// A paired A/B run of two builds (or two tunings) in one run (`switchyard-cli ab`): one
/// worker process per side (`__worker slices`, each with its side's plugin folder and tuning),
/// both given the same CPU ceilings, so their 1-thread rows run on the same CPU. Each row is
/// measured in `pairs` pairs of short slices that alternate between the sides, A B B A A B ...,
/// each slice a `pairs`-th of the row's budget, while the other side's worker waits: what drifts
/// hits both sides of a pair alike. Each pair gives one log ratio log(B / A) of the slices'
/// medians; the verdicts are judge_paired()'s (report/paired.h). A side's worker that dies or
/// hangs costs that row (crashed, timed out, no pairs) and is started again for the next.
/// Thread-safe to cancel() from another thread; everything else is single-threaded.
class SWITCHYARD_CORE_EXPORT AbController {
public:
    struct Options {
        std::string executable;   // switchyard-cli ("/proc/self/exe" from the CLI)
        ProfileSettings settings; // what to run, and each side's budget per row
        AbSide a, b;
        std::int64_t pairs = kDefaultPairs;
        /// A row stops before `pairs` once it has at least this many (an even number, so
        /// each side went first as often) and settled_same() holds: a row the machine
        /// measures alike on both sides costs half. `pairs` (or more): every row runs all.
        std::int64_t min_pairs = kSettlePairs;
        CompareOptions compare; // the verdicts' threshold and false-discovery rate
        std::vector<std::pair<std::string, std::string>> environment; // added to both workers'
        double startup_timeout_s = 60; // silence allowed while a worker prepares and plans
        /// As WorkerController's: given ceilings, else the cache's, else side A's worker
        /// measures them and side B's takes them.
        std::optional<CpuPeaks> cpu_peaks;
        nlohmann::json ceiling_set;
        std::optional<CeilingCache> ceiling_cache;
        CeilingCachePolicy ceiling_policy;
    };
    /// Pairs per row by default: the signed-rank test needs 6 for p < 0.05 at all, and 10
    /// left a 5 % change AMBIGUOUS on a loaded 2-vCPU guest (load average 8) once a few pairs
    /// were hit and the false-discovery control took its share; 20 called it on each row whose
    /// slices held several samples.
    static constexpr std::int64_t kDefaultPairs = 500;
    /// Pairs before a row may stop settled (Options::min_pairs).
    static constexpr std::int64_t kSettlePairs = 250;
    /// A chunk (a side's turn) lasts at least this long, whatever `pairs` asks: each turn
    /// costs a round trip through the controller (tens of microseconds).
    static constexpr double kMinChunkS = 0.002;

    struct Callbacks {
        std::function<void(const std::vector<RowSpec>& plan)> on_plan; // side A's plan
        /// A slice starts: row `index`, side 'A' or 'B', pair `pair` (from 0).
        std::function<void(std::int64_t index, char side, std::int64_t pair)> on_slice;
        /// A row's pairs are all measured; its verdict is judged alone (the run's
        /// false-discovery control comes with the report).
        std::function<void(const AbRow& row)> on_row;
        std::function<void(char side, const std::string& line)> on_worker_stderr;
    };

    explicit AbController(Options options);
    /// The run, judged. Throws WorkerUsageError for bad settings or sides whose plans differ,
    /// WorkerError when a side's worker cannot run at all.
    AbReport run(const Callbacks& callbacks = {});
    void cancel() noexcept;
    bool cancelled() const noexcept { return m_cancel.load(); }

private:
    struct Side;
    Options m_options;
    std::atomic<bool> m_cancel{false};
    std::atomic<int> m_pid_a{0}, m_pid_b{0};
};

/// The worker side of a paired A/B run (`__worker slices`): plans as the profile worker does
/// (context and plan messages on `fd`), then runs one slice per SliceCommand line read from
/// `commands` (row_start and row messages), until end of file (done). Returns the exit code.
SWITCHYARD_CORE_EXPORT int run_slice_worker(const protocol::ProfileRequest& request,
                                            std::istream& commands, int fd,
                                            BackendRegistry& backends, DeviceRegistry& devices);

} // namespace switchyard
