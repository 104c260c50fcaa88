// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

/// What a profile run measures and how. Everything has a default; to_json()/from_json()
/// carry it to the worker process and into the report.
struct SWITCHYARD_CORE_EXPORT ProfileSettings {
    std::vector<std::string> ops;     // empty: every op
    std::vector<std::string> devices; // ids ("cuda:0") or kinds ("cuda"); empty: every device
    /// Sizes per op name; the key "*" applies to every op without its own entry. Strings
    /// as parse_dims() reads them. No entry: the op's default sweep.
    std::map<std::string, std::vector<std::string>> sizes;
    bool all_variants = false; // every available variant, not only the resolved cell
    /// Only these cells: "arch/variant" ("x86-64-v4/default") or "variant" (of every arch),
    /// each available one that matches, resolved or not (an A/B of named cells; with
    /// `repeat` they alternate pass after pass). Empty: as all_variants and variant say.
    std::vector<std::string> cells;
    std::string variant = "default"; // the variant resolution asks for
    /// The resolved cell follows the machine's tuning files where an entry applies (tuning/);
    /// false: the fallback chain alone (profile --no-tuning, and tune itself). JSON
    /// "use_tuning"; absent in a report from before tunings: false.
    bool use_tuning = true;
    bool cold = false; // evict caches before every sample (one launch per sample)

    double max_noise = 0.005;      // stop when the relative stddev falls under this...
    std::int64_t min_samples = 10; // ...with at least this many samples,
    double time_budget_s = 1.0;    // or when this much sampling time is spent (per row)
    std::int64_t max_samples = 100000;
    double warmup_s = 0.05;       // warm-up time per row (at least one launch)
    double min_sample_s = 100e-6; // short kernels: launches are batched to this per sample
    double row_timeout_s = 10.0;  // worker silent this long in a row: timed out
    std::uint64_t seed = 0x5eed;
    std::int64_t keep_samples = 2000; // samples stored per row (for compare); the rest thinned
    /// Every (op, size) also times the CPU reference rung, so every row has a speedup over
    /// it; the reference row samples for this long (at least kReferenceMinSamples). 0: the
    /// reference is timed only where the plan has it anyway (--all-variants).
    double reference_budget_s = 0.2;
    /// The sampling budget of a row: reference_budget_s for the CPU reference rows (when
    /// set), time_budget_s for the others.
    double row_budget_s(bool is_reference) const {
        return is_reference && reference_budget_s > 0 ? reference_budget_s : time_budget_s;
    }
    /// Samples whose effective clock is below this fraction of the row's best are dropped
    /// and counted (0: keep every sample), as nvbench's --throttle-threshold.
    double throttle_threshold = 0.75;
    /// Independent runs of every row (`profile --repeat N`): the plan runs N times over,
    /// pass after pass, so drift hits every cell alike; each row keeps its runs
    /// (ProfileRow::runs), which compare tests. 1: one run.
    std::int64_t repeat = 1;
    /// Each row's budget is spent in at least this many slices spread over the run: the run
    /// makes passes() passes over its plan, pass after pass as --repeat does, each with
    /// pass_settings()' share of the budget, so every row has runs (ProfileRow::runs) and its
    /// between-slice variation, and no verdict rests on one stretch of time. The total budget
    /// stays repeat * time_budget_s. 1: one stretch a run (`profile --slices N`; JSON
    /// "slices", absent in reports from before slices: 1). One worker makes every pass, and a
    /// row's later slices keep its first one's parity, batch size and workload
    /// (WorkerController), so 5 slices cost 1.25x one stretch (16 rows, 6.6 s against
    /// 5.3 s on a 2-vCPU Zen 4 guest).
    std::int64_t slices = kDefaultSlices;
    static constexpr std::int64_t kDefaultSlices = 5;
    /// A DRAM row has its ceiling's probe timed beside it (ProfileRow::memory). A sliced
    /// run's passes after the first leave it out (pass_settings): the probe's working set
    /// and windows took seconds a slice on a loaded 2-vCPU guest, five times over. JSON
    /// "memory_beside".
    bool memory_beside = true;
    /// A resolved row whose cell is the CPU reference (a tuning that picked the reference) is
    /// a row of its own, not the reference row marked resolved: `ab` pairs the two sides' rows
    /// by their place in the plan, so a tuned side must plan as many rows as an untuned one.
    /// JSON "resolved_apart".
    bool resolved_apart = false;
    static constexpr std::int64_t kReferenceMinSamples = 3;
    /// A slice takes at least this many samples (or min_samples, when fewer).
    static constexpr std::int64_t kSliceMinSamples = 3;
    /// A reference that took this many reference budgets (or more) to compute for the parity
    /// checks is timed by that computation alone (stop reason "reference_once").
    static constexpr double kReferenceOnceFactor = 10;
    static constexpr std::int64_t kMaxRepeat = 1000;

    /// The passes a run makes over its plan: max(repeat, slices).
    std::int64_t passes() const noexcept;
    /// The settings one pass runs with (`pass` from 0): the sampling budget, the reference's
    /// budget and the minimum samples are repeat / passes() of the run's (at least
    /// kSliceMinSamples samples), and every pass after the first warms up for that share of
    /// warmup_s (the first pass warms up fully) and times no memory beside its DRAM rows.
    /// passes() 1: these settings.
    ProfileSettings pass_settings(std::int64_t pass) const;
    /// The settings of one of `slices` slices of a row's budget (`first`: the row's first
    /// slice, which warms up fully and times the memory beside a DRAM row), as pass_settings()
    /// scales them.
    ProfileSettings slice_settings(std::int64_t slices, bool first) const;
    /// The settings of one slice of a paired A/B (`ab`): slice_settings(), but with the
    /// slice's share of min_samples (at least one, not kSliceMinSamples: each pair's ratio is
    /// one of 2 x pairs, and three samples a slice made a 30 ms row cost 3.6 s where its
    /// profile takes 0.2 s), the whole budget spent (no early stop at max_noise: two close
    /// samples ended most slices of small rows, so a pair's ratio rested on two batches), and
    /// after the first slice a warm-up of at most kPairedSliceWarmupS.
    ProfileSettings paired_slice_settings(std::int64_t slices, bool first) const;
    /// The warm-up of a paired row's later slices at most: the other side's worker ran
    /// between them, and a millisecond of launches fills the caches again (the share of
    /// warmup_s was a quarter of each 10 ms slice).
    static constexpr double kPairedSliceWarmupS = 1e-3;

    nlohmann::json to_json() const;
    /// Each setting as (its JSON key, its value as text), in the JSON's order: for a
    /// front end that lists them.
    std::vector<std::pair<std::string, std::string>> entries() const;
    /// Throws std::runtime_error naming the bad key.
    static ProfileSettings from_json(const nlohmann::json& j);
};
/// The `[op:]size` grammar of `--sizes` and of the GUI's size list, one rule for both
/// front ends: "SIZE" applies to every op of `ops` (every op when `ops` is empty) and goes
/// under the key "*"; "OP:SIZE" to OP alone. Each size is checked against every op it applies
/// to (parse_dims) and against this machine's memory (Workload::check_fits_in_memory).
/// Returns ProfileSettings::sizes. Throws std::invalid_argument: an unknown op (the close
/// one suggested), a size that is not one of the op's, or one larger than memory.
SWITCHYARD_CORE_EXPORT std::map<std::string, std::vector<std::string>>
parse_size_tokens(const std::vector<std::string>& tokens, const std::vector<std::string>& ops);

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const ProfileSettings& settings);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, ProfileSettings& settings);

} // namespace switchyard
