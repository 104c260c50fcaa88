// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/driftcontrol.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

// compare's verdict rule: the options, the verdict words, one row's verdict and what more
// runs would do. The statistics it uses are in report/statistics.h; the comparisons of
// whole reports (pairing rows, fingerprints, ceilings) in report/compare.h.
namespace switchyard {

/// How rows of two or more reports are judged against each other.
///
/// A difference is called only when it is both
/// - statistically significant after controlling the false-discovery rate over every test of
///   the comparison (Benjamini-Hochberg at `fdr`), and
/// - practically significant: at least the threshold max(`min_effect`, the rows' own noise,
///   the reports' probe spreads for the row's ceiling).
///
/// The test rests on the variation *between runs*: the samples of one run share that run's
/// machine state, so they say nothing about a second run. Where both rows hold two or more
/// independent runs (`profile --repeat N`, ProfileRow::runs) the test is Welch's t test on
/// the logarithms of the run medians and the rows' noise is their pooled relative standard
/// deviation; SAME needs the 90 % confidence interval of the ratio within the threshold
/// (two one-sided tests). Where either side has one run only, the variation between runs is
/// unknown: the within-run Mann-Whitney U test ranks the rows for the false-discovery control, and
/// a difference must also exceed `single_run_floor`.
struct SWITCHYARD_CORE_EXPORT CompareOptions {
    double fdr = 0.05;        // false-discovery rate (Benjamini-Hochberg), over all rows
    double min_effect = 0.02; // a difference under 2 % is never called
    /// Noise above this (between runs) cannot show sameness: such rows are AMBIGUOUS.
    double max_noise = 0.10;
    /// One run on either side: a difference must exceed this too (two identical one-run
    /// profiles of a loaded 2-core VM measured rows 0.85-1.58x apart).
    double single_run_floor = 0.30;
    std::size_t min_samples = 2; // per side, for the single-run U test
    /// Ceilings of the same id (context.devices[].ceilings) whose values differ by more
    /// than this relative amount mean the reports come from different machines. Where both
    /// reports record their probes' spread (ceiling_differences()), the limit is that
    /// spread, at least this; without it, this for compute ceilings (an FMA loop in
    /// registers: only the clock moves it) ...
    double ceiling_tolerance = 0.10;
    /// ... and this for bandwidth ceilings. The caches and memory a probe measures are
    /// shared with everything else on the machine (other processes on the other cores,
    /// other tenants' VMs on the same L3 and memory controllers): two runs on one loaded VM
    /// measured L3 and DRAM ceilings 20-50 % apart; a different machine class (another
    /// memory generation, another cache size) differs by more.
    double bandwidth_ceiling_tolerance = 0.35;
    /// Rows whose two sides ran identical code (SampleComparison::identical_code): false, a
    /// difference beyond the rule is the machine's (Verdict::Machine), never FASTER or SLOWER,
    /// and --fail-on-regression never fails on it; true (compare --judge-environment), the
    /// comparison judges the environment (a driver, a kernel, a VM type: what changed between
    /// the runs is the machine), and such a row is FASTER or SLOWER, about the machine.
    bool judge_environment = false;
    /// Reports made apart carry the machine's drift between them. A difference must also
    /// exceed what the two reports' drift controls (context.control, MachineDrift) can
    /// explain, and this: the machine's own spread between identical reports, measured by
    /// compare --calibrate (Calibration::apply_to sets it; 0: no calibration in use) ...
    double calibrated_floor = 0;
    std::string calibration_note; // ... and where it came from ("compare --calibrate, 2026-12-06")
    /// "fdr 0.05, min effect 2 %, max noise 10 %, one-run floor 30 %": what a comparison
    /// printed its verdicts under.
    std::string describe() const;
    nlohmann::json to_json() const;
};

/// Machine: the rows differ beyond the rule, but both sides ran identical code, so the
/// difference is the machine's, not the code's (CompareOptions::judge_environment unset).
enum class Verdict { Same, Faster, Slower, Ambiguous, Machine };
constexpr std::size_t kVerdictCount = 5;
SWITCHYARD_CORE_EXPORT const char*
to_string(Verdict v) noexcept; // "SAME", "FASTER", "SLOWER", "AMBIGUOUS", "MACHINE"

/// The verdict on B's row against A's.
struct SWITCHYARD_CORE_EXPORT SampleComparison {
    Verdict verdict = Verdict::Ambiguous;
    /// B over A (under 1: B is faster): the ratio of the geometric means of the run medians
    /// where both rows hold runs, else of the medians.
    double ratio = 0;
    double p_value = 1; // the test's two-sided p
    double q_value = 1; // Benjamini-Hochberg adjusted over the whole comparison
    /// The practical threshold this row was judged with: max(min_effect, noise) between
    /// runs, max(min_effect, probe_floor) with one run a side (single_run_floor on top).
    double threshold = 0;
    /// The rows' own relative noise between runs (pooled standard deviation of the log run
    /// medians); 0 when a side has one run.
    double noise = 0;
    /// The reports' probe spreads for the row's ceiling (CpuPeaks::spread, A's plus B's).
    double probe_floor = 0;
    /// What the machine alone can explain between the two reports: the larger of the drift
    /// their controls show (MachineDrift::explains()) and CompareOptions::calibrated_floor.
    /// A FASTER or SLOWER verdict needs a ratio beyond (1 + threshold) x (1 + the drift), and
    /// beyond the calibrated floor; a significant one short of that is AMBIGUOUS
    /// (machine_explains), and says so. 0: neither is known.
    double machine_floor = 0;
    /// The drift between the two reports' controls (unknown without both controls).
    MachineDrift drift;
    /// AMBIGUOUS because the difference, though beyond the threshold and significant, is
    /// within what the machine can explain: its drift (compounded with the threshold) or
    /// the calibrated spread. More runs do not settle it.
    bool machine_explains = false;
    /// Between runs: the half width of the 90 % confidence interval of the log ratio
    /// (Welch). SAME needs |log ratio| + this within log(1 + threshold): two one-sided
    /// tests, so a 10 % change hidden in 9 % noise is AMBIGUOUS, not SAME.
    double ci_half_width = 0;
    /// What the ratio is of: the geometric means of the run medians, else the medians.
    double center_a = 0, center_b = 0;
    std::size_t runs_a = 0, runs_b = 0;
    std::string note; // why AMBIGUOUS, or what the verdict rests on
    /// AMBIGUOUS between runs: how many runs per side would settle the verdict, worked out
    /// for the same rule with the ratio and the noise measured taken as true (a power
    /// calculation, for 80 % power): 0 where it does not apply (not AMBIGUOUS, or one run a side),
    /// -1 where no number up to kMaxRunsToSettle can (noise above max_noise with a difference
    /// within the threshold: sameness cannot be shown on a machine this noisy; or a difference that
    /// sits on the threshold).
    int runs_to_settle = 0;
    static constexpr int kMaxRunsToSettle = 30;
    /// Both rows ran the same code: the same cell of the same build of its library
    /// (RowSpec::code, build IDs recorded and equal). A difference then measures the
    /// machine, not the code: judge_identical_code() makes it Verdict::Machine.
    bool identical_code = false;
    /// The verdict as the text tables print it.
    std::string verdict_text() const { return to_string(verdict); }
};

/// The evidence of one row for the test: its run medians (seconds per launch) where it
/// has several runs, else its samples.
struct SWITCHYARD_CORE_EXPORT RowEvidence {
    std::span<const double> run_medians; // ProfileRow::run_medians(); size >= 2 to use
    std::span<const double> samples;
    double median = 0;
    double probe_spread = 0;               // the report's probe spread for the row's ceiling
    const DriftControl* control = nullptr; // the report's drift control (context.control)
};

/// Judges each (a, b) pair, then applies the false-discovery control across all of them
/// together. Deterministic: the same inputs give the same verdicts.
SWITCHYARD_CORE_EXPORT std::vector<SampleComparison> judge_rows(std::span<const RowEvidence> a,
                                                                std::span<const RowEvidence> b,
                                                                const CompareOptions& options = {});

/// The rule for a row of identical code (`c.identical_code` set): a FASTER or SLOWER verdict
/// becomes Verdict::Machine ("the machine ran this row 2.10x slower in B; the code is the
/// same"), unless `options.judge_environment` asks to judge the machine, where it stays and
/// says so. Rows of other code are left as they are.
SWITCHYARD_CORE_EXPORT void judge_identical_code(SampleComparison& c,
                                                 const CompareOptions& options);

/// What more runs would do for a comparison's AMBIGUOUS verdicts (SampleComparison::
/// runs_to_settle): the one `--repeat N` that would settle every one that runs can settle,
/// and how many cannot be settled by runs.
struct SWITCHYARD_CORE_EXPORT SettleAdvice {
    std::size_t ambiguous = 0;    // AMBIGUOUS verdicts
    std::size_t settleable = 0;   // ... that N runs a side would settle at the noise measured
    std::size_t unsettleable = 0; // ... that no number of runs would
    std::size_t one_run = 0;      // ... with one run on a side: the variation is unknown
    std::size_t machine = 0; // ... whose difference the machine's drift can explain: runs cannot
    int repeat = 0;          // the N for all settleable ones (0: none)
    int median_repeat = 0;   // the N for half of them
    /// One line for a comparison's summary ("" where nothing is AMBIGUOUS): "--repeat 6 on
    /// both sides would settle 20 of the 24 at the variation measured (half of them with
    /// --repeat 4), if the two reports differ only by their runs' noise: ...; 4 cannot be
    /// settled by more runs: ...". Measured on a shared 2-vCPU guest, two reports of 14 runs
    /// made minutes apart still differed by 2-4 % on some rows: the runs of one report share
    /// its moment, which the power calculation (independent runs) cannot see.
    std::string text() const;
    nlohmann::json to_json() const;
};
SWITCHYARD_CORE_EXPORT SettleAdvice settle_advice(std::span<const SampleComparison* const> rows);

} // namespace switchyard
