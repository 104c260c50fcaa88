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
/// both given the same CPU ceilings, so their 1-thread rows run on the same CPU. Both sides
/// hold a row at once and take turns sampling it, in lockstep (protocol::SliceCommand::
/// chunk_s): A B B A A B ..., each turn a `pairs`-th of the row's budget (at least kMinChunkS
/// and one sample) while the other side's worker waits, its waiting outside its budget. Each
/// pair of turns, next to each other in time, gives one log ratio log(B / A) of their
/// medians; the verdicts are judge_paired()'s (report/paired.h). What drifts (the neighbours'
/// load, the memory bandwidth left to us: 5-10 % between stretches 50 ms apart on a shared
/// guest) hits both turns of a pair alike; whole slices a side, 50-100 ms apart, left pairs
/// of a DRAM row 5-10 % apart, turns of one sample 3-5 %.
/// Both sides also run a row on the same memory: their CPU buffers are cut from one memory
/// file (CpuDevice::place_in_shared_file) at the same addresses, drawn afresh each row, and
/// their stacks at the same page offset, so no page, cache set or 4 KiB alias is one side's
/// alone (each gave a side a steady 1-25 % of its own on some row).
/// A side's worker that dies or hangs costs that row (crashed, timed out, its pairs so far)
/// and is started again for the next.
/// Thread-safe to cancel() from another thread; everything else is single-threaded.
class SWITCHYARD_CORE_EXPORT AbController {
public:
    struct Options {
        std::string executable;   // switchyard-cli ("/proc/self/exe" from the CLI)
        ProfileSettings settings; // what to run, and each side's budget per row
        AbSide a, b;
        std::int64_t pairs = kDefaultPairs;
        /// A row stops before its budget ends once it has at least this many pairs (checked
        /// at an even number, so each side went first as often) and settled_same() holds: a
        /// row the machine measures alike on both sides costs half. `pairs` (or more): every
        /// row runs its whole budget.
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
    /// Pairs per row by default: turns short enough (2 ms at 1 s a row, one sample of a DRAM
    /// row) that the two turns of a pair see the same moment of the machine. The signed-rank
    /// test needs 6 for p < 0.05 at all; a row whose samples outlast a turn gets fewer pairs
    /// (a 13 ms DRAM row: 76 at 1 s).
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
