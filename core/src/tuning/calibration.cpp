// SPDX-License-Identifier: MIT
#include <switchyard/tuning/calibration.h>

#include <switchyard/tuning/tuning.h>

#include "jsonfile.h"
#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace switchyard {

namespace {

constexpr std::size_t kCalibrationMaxBytes = std::size_t(4) << 20;

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", fraction * 100);
    return buf;
}

// P(X <= k) for X ~ Binomial(n, p), summed in logs.
double binomial_cdf(std::size_t k, std::size_t n, double p) {
    if (p <= 0)
        return 1;
    if (p >= 1)
        return k >= n ? 1 : 0;
    double sum = 0;
    for (std::size_t i = 0; i <= k && i <= n; ++i)
        sum += std::exp(std::lgamma(double(n) + 1) - std::lgamma(double(i) + 1) -
                        std::lgamma(double(n - i) + 1) + double(i) * std::log(p) +
                        double(n - i) * std::log1p(-p));
    return std::min(1.0, sum);
}

CalibrationCount count_from_json(const jsonread::Value& v) {
    v.expect(jsonread::Kind::Object);
    CalibrationCount c;
    c.judged = std::size_t(v.integer("judged"));
    c.false_positives =
        std::size_t(v.integer("false_positives", std::nullopt, 0, std::int64_t(c.judged)));
    c.same = std::size_t(v.integer("same", 0));
    c.ambiguous = std::size_t(v.integer("ambiguous", 0));
    return c;
}

void add(CalibrationCount& c, const SampleComparison& r) {
    ++c.judged;
    // MACHINE is the rule calling a difference on identical code: as false as FASTER/SLOWER.
    c.false_positives += r.verdict == Verdict::Faster || r.verdict == Verdict::Slower ||
                         r.verdict == Verdict::Machine;
    c.same += r.verdict == Verdict::Same;
    c.ambiguous += r.verdict == Verdict::Ambiguous;
}

} // namespace

double CalibrationCount::rate() const {
    return judged ? double(false_positives) / double(judged) : 0.0;
}

double CalibrationCount::upper_95() const {
    if (judged == 0)
        return 1;
    if (false_positives >= judged)
        return 1;
    // The p at which seeing this few false positives has probability 5 %, by bisection.
    double lo = rate(), hi = 1;
    for (int i = 0; i < 80; ++i) {
        const double mid = (lo + hi) / 2;
        (binomial_cdf(false_positives, judged, mid) > 0.05 ? lo : hi) = mid;
    }
    return hi;
}

nlohmann::json CalibrationCount::to_json() const {
    return {{"judged", judged}, {"false_positives", false_positives},
            {"same", same},     {"ambiguous", ambiguous},
            {"rate", rate()},   {"upper_95", upper_95()}};
}

Calibration calibrate(std::span<const Report> reports, std::vector<std::string> names,
                      const CompareOptions& options) {
    if (reports.size() < 2)
        throw std::invalid_argument("calibration needs at least two reports of identical runs, "
                                    "got " +
                                    std::to_string(reports.size()));
    if (names.size() != reports.size())
        throw std::invalid_argument("calibrate: " + std::to_string(names.size()) + " names for " +
                                    std::to_string(reports.size()) + " reports");
    for (std::size_t i = 1; i < reports.size(); ++i)
        if (!same_machine(reports[0].context, reports[i].context))
            throw std::invalid_argument(
                text::untrusted(names[i]) + " is not from the machine of " +
                text::untrusted(names[0]) +
                " (hardware fingerprints): a calibration measures one machine's noise; give "
                "reports of identical runs on one machine");
    Calibration c;
    c.machine_id = reports[0].context.fingerprint.machine_id;
    c.machine = reports[0].context.fingerprint.machine;
    c.date = text::utc_now_iso8601();
    c.rule = options.describe();
    c.reports = reports.size();
    c.sources = std::move(names);
    // The rule as it judges code that changed: on these rows of identical code every call
    // (FASTER or SLOWER) is a false positive.
    auto as_for_code = options;
    as_for_code.judge_environment = true;
    std::vector<SampleComparison> judged;
    for (std::size_t i = 0; i < reports.size(); ++i)
        for (std::size_t j = i + 1; j < reports.size(); ++j) {
            ++c.report_pairs;
            const auto pair = Comparison::of(reports[i], reports[j], as_for_code);
            for (const auto& p : pair.pairs()) {
                if (!p.a.measured() || !p.b.measured())
                    continue;
                if (!p.result.identical_code) {
                    ++c.skipped_rows;
                    continue;
                }
                add(c.overall, p.result);
                add(c.per_op[p.a.spec.op], p.result);
                judged.push_back(p.result);
            }
        }
    std::vector<const SampleComparison*> all;
    std::vector<double> apart;
    for (const auto& r : judged) {
        all.push_back(&r);
        if (r.ratio > 0 && std::isfinite(r.ratio))
            apart.push_back(std::expm1(std::fabs(std::log(r.ratio))));
    }
    c.advice = settle_advice(all);
    if (!apart.empty()) {
        std::sort(apart.begin(), apart.end());
        // The 95th percentile, nearest rank.
        const auto rank = std::size_t(std::ceil(0.95 * double(apart.size())));
        c.spread_95 = apart[std::clamp<std::size_t>(rank, 1, apart.size()) - 1];
    }
    return c;
}

std::string Calibration::summary() const {
    return std::to_string(overall.false_positives) + " of " + std::to_string(overall.judged) +
           " rows of identical code called FASTER or SLOWER (" + std::to_string(reports) +
           " runs, " + std::to_string(report_pairs) + (report_pairs == 1 ? " pair" : " pairs") +
           "): a false-positive rate of " + percent(overall.rate()) + ", at most " +
           percent(overall.upper_95()) + " (95 %)";
}

std::string Calibration::beside_the_rule() const {
    return "Measured on this machine (compare --calibrate, " + date.substr(0, 10) +
           "): " + summary() +
           (spread_95 > 0 ? "; identical reports put 95 % of rows within " + percent(spread_95) +
                                " of each other, which the rule requires a difference to exceed"
                          : "; a calibration from before the rule used it: compare --calibrate "
                            "again to put it in the rule");
}

void Calibration::apply_to(CompareOptions& options) const {
    if (!(spread_95 > 0))
        return;
    options.calibrated_floor = spread_95;
    options.calibration_note = "compare --calibrate, " + date.substr(0, 10);
}

std::string Calibration::text() const {
    std::ostringstream os;
    os << "Calibration of compare's verdict rule on machine "
       << (machine_id.empty() ? std::string("(unknown)") : text::untrusted(machine_id)) << ", "
       << date << ":\n  " << rule << ".\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-24s %7s %7s %7s %13s %8s %9s\n", "op", "judged", "same",
                  "ambig", "FASTER/SLOWER", "rate", "at most");
    os << line;
    auto row = [&](const std::string& name, const CalibrationCount& n) {
        std::snprintf(line, sizeof line, "%-24s %7zu %7zu %7zu %13zu %8s %9s\n",
                      text::untrusted(name).c_str(), n.judged, n.same, n.ambiguous,
                      n.false_positives, percent(n.rate()).c_str(), percent(n.upper_95()).c_str());
        os << line;
    };
    for (const auto& [op, n] : per_op)
        row(op, n);
    row("(all)", overall);
    os << "\n" << summary() << ".\n";
    if (skipped_rows)
        os << "note: " << skipped_rows
           << " rows were left out: their two sides did not run identical code (another build "
              "of a cell, or a report without code identities)\n";
    if (overall.judged == 0)
        os << "note: no row of identical code: give reports of identical runs of this build "
              "(compare --calibrate --runs K runs them)\n";
    if (const auto a = advice.text(); !a.empty())
        os << a << ".\n";
    return os.str();
}

nlohmann::json Calibration::to_json() const {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [op, n] : per_op)
        ops[op] = n.to_json();
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"machine_id", machine_id},
            {"machine", machine},
            {"date", date},
            {"rule", rule},
            {"reports", reports},
            {"report_pairs", report_pairs},
            {"skipped_rows", skipped_rows},
            {"sources", sources},
            {"overall", overall.to_json()},
            {"per_op", ops},
            {"advice", advice.to_json()},
            {"spread_95", spread_95},
            {"summary", summary()}};
}

Calibration Calibration::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "calibration");
    v.expect(jsonread::Kind::Object);
    if (v.str("format", std::string()) != kFormat)
        v.fail("not a calibration (format is not '" + std::string(kFormat) + "')");
    if (const auto version = v.integer("format_version"); version > kFormatVersion)
        v.fail("format_version " + std::to_string(version) + " is newer than this build reads (" +
               std::to_string(kFormatVersion) + ")");
    Calibration c;
    c.machine_id = v.str("machine_id", std::string());
    if (const auto m = v.find("machine"))
        c.machine = m->raw();
    c.date = v.str("date", std::string());
    c.rule = v.str("rule", std::string());
    c.reports = std::size_t(v.integer("reports", 0));
    c.report_pairs = std::size_t(v.integer("report_pairs", 0));
    c.skipped_rows = std::size_t(v.integer("skipped_rows", 0));
    if (v.contains("sources"))
        c.sources = v.strings("sources");
    c.overall = count_from_json(v.at("overall"));
    c.spread_95 = v.num("spread_95", 0.0);
    if (c.spread_95 < 0)
        v.at("spread_95").fail("expected a fraction >= 0");
    if (const auto ops = v.find("per_op")) {
        ops->expect(jsonread::Kind::Object);
        for (const auto& [op, n] : ops->raw().items())
            c.per_op[op] = count_from_json(ops->at(op));
    }
    if (const auto a = v.find("advice")) {
        a->expect(jsonread::Kind::Object);
        c.advice.ambiguous = std::size_t(a->integer("ambiguous", 0));
        c.advice.settleable = std::size_t(a->integer("settleable", 0));
        c.advice.unsettleable = std::size_t(a->integer("unsettleable", 0));
        c.advice.one_run = std::size_t(a->integer("one_run", 0));
        c.advice.repeat = int(a->integer("repeat", 0, 0, SampleComparison::kMaxRunsToSettle));
        c.advice.median_repeat =
            int(a->integer("median_repeat", 0, 0, SampleComparison::kMaxRunsToSettle));
    }
    return c;
}

void Calibration::save(const std::string& path) const {
    tuningfile::save(path, to_json());
}

Calibration Calibration::load(const std::string& path) {
    return tuningfile::load(path, kCalibrationMaxBytes, "calibration",
                            [](const nlohmann::json& j) { return from_json(j); });
}

std::string default_calibration_file(const std::string& machine_id) {
    const auto tuning = user_tuning_dir();
    if (tuning.empty())
        throw std::invalid_argument("no home folder to keep the calibration in: give a file");
    return (std::filesystem::path(tuning).parent_path() / "calibration" /
            ((machine_id.empty() ? std::string("unknown") : machine_id) + ".json"))
        .string();
}

std::optional<Calibration> find_calibration(const std::string& machine_id) {
    if (machine_id.empty()) // a report without a fingerprint: no machine to have measured
        return std::nullopt;
    try {
        const auto path = default_calibration_file(machine_id);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            return std::nullopt;
        auto c = Calibration::load(path);
        if (c.machine_id != machine_id)
            return std::nullopt;
        return c;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace switchyard
