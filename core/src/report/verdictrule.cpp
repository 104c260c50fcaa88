// SPDX-License-Identifier: MIT
#include <switchyard/profiling/stats.h>
#include <switchyard/report/statistics.h>
#include <switchyard/report/verdictrule.h>

#include "verdicttext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace switchyard {

namespace {
using verdicttext::format;
using verdicttext::percent;
} // namespace

const char* to_string(Verdict v) noexcept {
    switch (v) {
    case Verdict::Same:
        return "SAME";
    case Verdict::Faster:
        return "FASTER";
    case Verdict::Slower:
        return "SLOWER";
    case Verdict::Machine:
        return "MACHINE";
    case Verdict::Ambiguous:
        break;
    }
    return "AMBIGUOUS";
}

std::string CompareOptions::describe() const {
    return "false-discovery rate " + format("%g", fdr) + " (Benjamini-Hochberg over all rows); " +
           "a difference must exceed max(" + percent(min_effect) +
           ", the rows' noise between runs); SAME needs the 90 % interval of the ratio within "
           "that and noise under " +
           percent(max_noise) +
           "; with one run per side a difference must "
           "also exceed the probes' spread and " +
           percent(single_run_floor) +
           "; between reports of one machine made apart, a difference must exceed that "
           "beyond what the machine's drift (their drift controls) can explain" +
           (calibrated_floor > 0 ? ", and the machine's spread between identical reports, " +
                                       percent(calibrated_floor) + " (" + calibration_note + ")"
                                 : std::string()) +
           (judge_environment ? "; identical code is judged as the environment's verdict"
                              : "; a difference on identical code is the machine's (MACHINE)");
}

nlohmann::json CompareOptions::to_json() const {
    return {{"fdr", fdr},
            {"min_effect", min_effect},
            {"max_noise", max_noise},
            {"single_run_floor", single_run_floor},
            {"min_samples", min_samples},
            {"judge_environment", judge_environment},
            {"calibrated_floor", calibrated_floor}};
}

namespace {

// The runs per side that would settle an AMBIGUOUS verdict between runs (SampleComparison::
// runs_to_settle): the smallest n for which the same rule, fed n runs a side with the ratio
// and the noise measured, gives a verdict with 80 % power. A difference beyond the threshold
// needs Welch's p
// (times this row's false-discovery adjustment, q / p) under the rate; a difference within
// it needs the 90 % interval inside the threshold, which noise above max_noise never allows.
// The chance the advised runs still do not settle a row whose ratio and noise are as measured.
constexpr double kMissRate = 0.20;

int runs_needed(const SampleComparison& c, const CompareOptions& options) {
    const double effect = std::fabs(std::log(c.ratio));
    const double sigma = c.noise;
    const double bound = std::log1p(c.threshold);
    if (!(sigma > 0) || !std::isfinite(effect))
        return 0;
    const bool toward_difference = effect >= bound;
    if (!toward_difference && sigma > options.max_noise)
        return -1;
    const double adjust = c.p_value > 0 ? std::max(1.0, c.q_value / c.p_value) : 1.0;
    const int already = int(std::max(c.runs_a, c.runs_b));
    for (int n = 2; n <= SampleComparison::kMaxRunsToSettle; ++n) {
        const double se = sigma * std::sqrt(2.0 / n);
        const double df = 2.0 * n - 2;
        // With 80 % power: the runs would give the verdict four times in five, not one in two
        // as a bare "the measured ratio just passes" would.
        const double power = student_t_upper_quantile(kMissRate, df);
        const bool settles =
            toward_difference
                ? effect / se >= student_t_upper_quantile(options.fdr / (2 * adjust), df) + power
                : effect + (student_t_upper_quantile(0.05, df) + power) * se <= bound;
        if (settles) // never fewer than a side already has: those did not settle it
            return std::min(std::max(n, already + 1), SampleComparison::kMaxRunsToSettle);
    }
    return -1;
}

// runs_needed() into the row and its note.
void add_runs_advice(SampleComparison& c, const CompareOptions& options) {
    c.runs_to_settle = runs_needed(c, options);
    const std::string n = std::to_string(c.runs_to_settle);
    if (c.runs_to_settle > 0)
        c.note += "; at the variation measured, " + n + " runs a side would settle it (--repeat " +
                  n + ")";
    else if (c.runs_to_settle < 0 && c.noise > options.max_noise && c.ratio > 0 &&
             std::fabs(std::log(c.ratio)) < std::log1p(c.threshold))
        c.note += "; no number of runs can show sameness on a machine this noisy";
    else if (c.runs_to_settle < 0)
        c.note += "; no number of runs up to " +
                  std::to_string(SampleComparison::kMaxRunsToSettle) +
                  " a side would settle it: the difference sits on the threshold";
}

} // namespace

std::vector<SampleComparison> judge_rows(std::span<const RowEvidence> a,
                                         std::span<const RowEvidence> b,
                                         const CompareOptions& options) {
    if (a.size() != b.size())
        throw std::invalid_argument("judge_rows: " + std::to_string(a.size()) + " rows in A, " +
                                    std::to_string(b.size()) + " in B");
    std::vector<SampleComparison> out(a.size());
    std::vector<bool> by_runs(a.size(), false), testable(a.size(), false);
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto& c = out[i];
        const auto& ea = a[i];
        const auto& eb = b[i];
        c.probe_floor = ea.probe_spread + eb.probe_spread;
        if (ea.control && eb.control)
            c.drift = MachineDrift::between(*ea.control, *eb.control);
        c.machine_floor = std::max(c.drift.explains(), options.calibrated_floor);
        c.runs_a = ea.run_medians.size() >= 2 ? ea.run_medians.size() : 1;
        c.runs_b = eb.run_medians.size() >= 2 ? eb.run_medians.size() : 1;
        if (!(ea.median > 0) || !std::isfinite(ea.median) || !(eb.median > 0) ||
            !std::isfinite(eb.median)) {
            // A zero-time baseline makes any ratio meaningless: never FASTER at 0.000.
            c.ratio = std::numeric_limits<double>::quiet_NaN();
            c.note = "the ratio is undefined: a median time is 0";
            continue;
        }
        if (const auto runs = compare_runs(ea.run_medians, eb.run_medians)) {
            // Sameness is claimed only when all of the interval lies within the threshold.
            c.ratio = runs->ratio;
            c.noise = runs->noise;
            c.p_value = runs->p_value;
            c.ci_half_width = runs->ci_half_width;
            c.center_a = runs->center_a;
            c.center_b = runs->center_b;
            by_runs[i] = testable[i] = true;
        } else {
            c.ratio = eb.median / ea.median;
            c.center_a = ea.median;
            c.center_b = eb.median;
            if (ea.samples.size() < options.min_samples ||
                eb.samples.size() < options.min_samples) {
                c.note =
                    "too few samples (need " + std::to_string(options.min_samples) + " per side)";
                continue;
            }
            c.p_value = mann_whitney_p(ea.samples, eb.samples);
            testable[i] = true;
        }
        // Between runs, the rows' own noise is measured for these very rows; with one run a
        // side the reports' probe spreads stand in for it (how much the machine moved
        // while it measured its ceilings).
        c.threshold = by_runs[i] ? std::max(options.min_effect, c.noise)
                                 : std::max(options.min_effect, c.probe_floor);
    }
    std::vector<double> p;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (testable[i]) {
            p.push_back(out[i].p_value);
            where.push_back(i);
        }
    const auto q = benjamini_hochberg(p);
    for (std::size_t k = 0; k < where.size(); ++k) {
        auto& c = out[where[k]];
        c.q_value = q[k];
        const double effect = std::fabs(std::log(c.ratio));
        const bool significant = c.q_value < options.fdr;
        const bool runs = by_runs[where[k]];
        const double needed = runs ? c.threshold : std::max(c.threshold, options.single_run_floor);
        // Between reports made apart, the machine's own movement can explain a difference up
        // to machine_floor: the drift its controls show, on top of which the rows' own noise
        // (the threshold) still applies, and the calibrated spread between identical reports
        // (which holds both). Only a difference beyond it is the code's.
        const double beyond_machine = std::max(std::log1p(needed) + std::log1p(c.drift.explains()),
                                               std::log1p(options.calibrated_floor));
        if (significant && effect >= beyond_machine) {
            c.verdict = c.ratio < 1 ? Verdict::Faster : Verdict::Slower;
            if (!runs)
                c.note = "one run per side: beyond the one-run floor";
            if (c.machine_floor > 0)
                c.note += std::string(c.note.empty() ? "" : "; ") + "beyond the " +
                          percent(c.machine_floor) + " the machine can explain";
        } else if (significant && effect >= std::log1p(needed)) {
            c.machine_explains = true;
            c.note =
                percent(std::fabs(c.ratio - 1)) + " apart, but within the " +
                percent(c.machine_floor) +
                " the machine alone can explain between these "
                "reports (" +
                (c.drift.known && c.drift.explains() >= options.calibrated_floor
                     ? c.drift.text()
                     : "this machine's identical reports differ by up to " +
                           percent(options.calibrated_floor) + ", " + options.calibration_note) +
                "); more runs do not remove the drift between reports made apart: an A/B of "
                "both in one run alternates them";
        } else if (runs) {
            if (effect + c.ci_half_width <= std::log1p(c.threshold) &&
                c.noise <= options.max_noise) {
                c.verdict = Verdict::Same;
            } else if (c.noise > options.max_noise) {
                c.note = "the runs vary by " + percent(c.noise) + ", above the " +
                         percent(options.max_noise) + " that can show sameness";
            } else if (effect >= std::log1p(c.threshold)) {
                c.note = percent(std::fabs(c.ratio - 1)) + " beyond the " + percent(c.threshold) +
                         " threshold, but not significant after the false-discovery control (q " +
                         format("%.3g", c.q_value) + ")";
            } else {
                c.note = "within the " + percent(c.threshold) +
                         " threshold, but the runs cannot show it: the 90 % interval reaches " +
                         percent(std::expm1(effect + c.ci_half_width));
            }
            if (c.verdict == Verdict::Ambiguous)
                add_runs_advice(c, options);
        } else if (effect < std::log1p(options.min_effect)) {
            c.verdict = Verdict::Same;
            c.note = "one run per side: within " + percent(options.min_effect);
        } else {
            c.note = "one run per side: the variation between runs is unknown (profile --repeat N)";
        }
    }
    return out;
}

void judge_identical_code(SampleComparison& c, const CompareOptions& options) {
    if (!c.identical_code || (c.verdict != Verdict::Faster && c.verdict != Verdict::Slower))
        return;
    const bool slower = c.verdict == Verdict::Slower;
    const double times = slower ? c.ratio : 1 / c.ratio;
    const std::string moved = "the machine ran this row " + format("%.2f", times) + "x " +
                              (slower ? "slower" : "faster") + " in B; the code is the same";
    std::string note = c.note;
    if (options.judge_environment) {
        c.note = moved + ": judged as the environment's verdict (--judge-environment)";
    } else {
        c.verdict = Verdict::Machine;
        c.note = moved + " (the difference is the machine's, not the code's; "
                         "--judge-environment judges the machine)";
    }
    if (!note.empty())
        c.note += "; " + note;
}

SettleAdvice settle_advice(std::span<const SampleComparison* const> rows) {
    SettleAdvice a;
    std::vector<int> needs;
    for (const auto* r : rows) {
        if (r->verdict != Verdict::Ambiguous)
            continue;
        ++a.ambiguous;
        if (r->machine_explains)
            ++a.machine;
        else if (r->runs_to_settle > 0)
            needs.push_back(r->runs_to_settle);
        else if (r->runs_to_settle < 0)
            ++a.unsettleable;
        else if (r->runs_a <= 1 || r->runs_b <= 1)
            ++a.one_run;
    }
    a.settleable = needs.size();
    if (!needs.empty()) {
        std::sort(needs.begin(), needs.end());
        a.repeat = needs.back();
        a.median_repeat = needs[(needs.size() - 1) / 2];
    }
    return a;
}

std::string SettleAdvice::text() const {
    if (ambiguous == 0)
        return {};
    std::vector<std::string> parts;
    if (settleable > 0)
        parts.push_back("--repeat " + std::to_string(repeat) + " on both sides would settle " +
                        std::to_string(settleable) + " of the " + std::to_string(ambiguous) +
                        " at the variation measured" +
                        (median_repeat < repeat
                             ? " (half of them with --repeat " + std::to_string(median_repeat) + ")"
                             : std::string()) +
                        ", if the two reports differ only by their runs' noise: the machine's "
                        "drift between two reports made apart is not removed by more runs (an "
                        "A/B of cells in one run, profile --cells A,B --repeat N, alternates "
                        "them)");
    if (unsettleable > 0)
        parts.push_back(std::to_string(unsettleable) +
                        " cannot be settled by more runs: their runs vary beyond what can show "
                        "sameness on this machine, or the difference sits on the threshold");
    if (machine > 0)
        parts.push_back(std::to_string(machine) +
                        " differ by no more than the machine's drift between the reports can "
                        "explain: more runs do not remove it; an A/B of both in one run does");
    if (one_run > 0)
        parts.push_back(std::to_string(one_run) +
                        " have one run on a side: the variation between runs is unknown "
                        "(profile --repeat 3 measures it)");
    std::string out = "AMBIGUOUS: ";
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i ? "; " : "") + parts[i];
    return parts.empty() ? std::string() : out;
}

nlohmann::json SettleAdvice::to_json() const {
    return {{"ambiguous", ambiguous},
            {"settleable", settleable},
            {"unsettleable", unsettleable},
            {"one_run", one_run},
            {"machine", machine},
            {"repeat", repeat},
            {"median_repeat", median_repeat}};
}

} // namespace switchyard
