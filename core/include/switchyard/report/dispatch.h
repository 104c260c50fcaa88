// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/profilerow.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// A dispatch finding's verdict. JSON ids (stable): "ok", "regret", "uncertain".
///  - Regret: another cell is faster beyond the threshold;
///  - Ok: the resolved cell is the fastest, or none is faster beyond it;
///  - Uncertain: faster beyond the threshold, but the samples cannot tell (too few, or
///    p >= alpha).
enum class DispatchVerdict { Ok, Regret, Uncertain };
SWITCHYARD_CORE_EXPORT std::string_view to_string(DispatchVerdict verdict) noexcept;
/// nullopt for text that names no verdict.
SWITCHYARD_CORE_EXPORT std::optional<DispatchVerdict>
dispatch_verdict_from_string(std::string_view text) noexcept;

/// The fastest cell among those like the resolved one in some respect, judged the same way:
///  - on its CPU threads, where the fastest runs on another number (`threaded` or OpenBLAS
///    on all cores against a one-thread pick): a faster chain told from more cores, "at 1
///    thread the pick is the fastest";
///  - checked at its tolerance or a tighter one, where the fastest passes a looser one of its
///    own (TF32 gemm: on the H200, cuBLAS TF32 was 8.2x the own fp32 kernel, cuBLAS fp32
///    1.26x): a faster cell told from a cheaper numeric contract.
struct SWITCHYARD_CORE_EXPORT SameThreadsFinding {
    DispatchVerdict verdict = DispatchVerdict::Ok; // as DispatchFinding's
    std::string fastest, fastest_backend;
    std::int64_t fastest_index = -1;
    double fastest_median_s = 0;
    double speedup = 1, p_value = 1, threshold = 0;
};

/// "Dispatch regret": for one (op, size, device) of a run that measured several cells
/// (--all-variants), the cell dispatch resolves against the fastest cell that passed parity.
///
/// The fastest is called faster only when both hold: the two rows' samples differ (two-sided
/// Mann-Whitney U test, p < alpha) and the effect is practical (speedup above
/// 1 + max(min_effect, noise_factor × the larger of the two rows' relative noise)). In a
/// repeated run (profile --repeat, rows with runs) the runs are judged, as compare does:
/// Welch's t on the log run medians, the noise the larger spread between runs.
struct SWITCHYARD_CORE_EXPORT DispatchFinding {
    DispatchVerdict verdict = DispatchVerdict::Ok;
    std::string op, size, device;
    std::string resolved, resolved_backend; // "x86-64-v4/default", its backend
    std::string fastest, fastest_backend;   // the fastest cell that passed parity
    double resolved_median_s = 0, fastest_median_s = 0;
    double speedup = 1;   // resolved median / fastest median (> 1: the fastest is faster)
    double p_value = 1;   // of the U test between the two rows' samples (Welch's t on runs)
    double threshold = 0; // the practical threshold on speedup - 1 that was applied
    std::int64_t resolved_index = -1, fastest_index = -1; // rows' indices in the run
    /// The fastest cell is the code the resolved one runs on this device (RowSpec::runs_as):
    /// the verdict is "ok" and `speedup` measures the run's noise, not a faster cell. (Where
    /// another cell is the fastest, it is judged against the faster of the two rows.)
    bool same_code = false;
    /// The CPU threads of the resolved and the fastest cell (RowSpec::threads; 0: unstated).
    std::int64_t resolved_threads = 0, fastest_threads = 0;
    /// Set when both are stated and differ: the fastest at the resolved cell's threads.
    std::optional<SameThreadsFinding> same_threads;
    /// Set when the fastest cell passed parity at a looser tolerance than the resolved one
    /// (it states its own, ProfileRow::parity.tolerance): the fastest among the cells
    /// checked at the resolved one's tolerance or tighter.
    std::optional<SameThreadsFinding> same_tolerance;

    bool regret() const { return verdict == DispatchVerdict::Regret; }
    /// "dispatch picks x86-64-v4/default; x86-64-v3/threaded is 2.7x faster here"; where the
    /// threads differ, "dispatch picks x86-64-v3/default (1 thread); generic/openblas (cpu,
    /// 2 threads) is 1.70x faster here; at 1 thread the pick is the fastest"; where the
    /// fastest passed a looser tolerance, "...; it passed a looser tolerance than the pick (its
    /// own); at the pick's tolerance, generic/cublas (cuda-cublas) is 1.26x faster".
    std::string message() const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key.
    static DispatchFinding from_json(const nlohmann::json& j);
};

struct SWITCHYARD_CORE_EXPORT DispatchOptions {
    double alpha = 0.05;
    double min_effect = 0.05;  // at least 5 % faster ...
    double noise_factor = 2.0; // ... and at least twice the rows' relative noise
    std::size_t min_samples = 3;
};

/// One cell's rows against another's, judged as a finding judges its fastest against the pick:
/// `verdict` Regret when `other` is faster than `pick` beyond `threshold` and the samples (the
/// runs, in a repeated run) tell; `speedup` is pick median / other median.
struct SWITCHYARD_CORE_EXPORT CellJudgement {
    DispatchVerdict verdict = DispatchVerdict::Ok;
    double speedup = 1, p_value = 1, threshold = 0;
};
SWITCHYARD_CORE_EXPORT CellJudgement judge_cells(const ProfileRow& pick, const ProfileRow& other,
                                                 const DispatchOptions& options = {});

/// Whether `row` passed parity at `pick`'s tolerance or a tighter one (or either was not
/// checked at all): a candidate for replacing `pick` without a cheaper numeric contract.
SWITCHYARD_CORE_EXPORT bool within_tolerance_of(const ProfileRow& row, const ProfileRow& pick);

/// One finding per (op, size, device) whose rows hold the resolved cell (RowSpec::resolved)
/// and at least one other measured cell that passed parity besides the CPU reference; none
/// for a default run (the resolved cell and the reference only).
SWITCHYARD_CORE_EXPORT std::vector<DispatchFinding>
dispatch_findings(const std::vector<ProfileRow>& rows, const DispatchOptions& options = {});

} // namespace switchyard
