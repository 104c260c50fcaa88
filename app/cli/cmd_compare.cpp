// SPDX-License-Identifier: MIT
// compare (two or more reports, verdicts a person can trust) and check (reports against
// ReFrame-style references with tolerances: the CI gate).
#include "cmd_profile.h"

#include <switchyard/report/compare.h>
#include <switchyard/report/references.h>
#include <switchyard/report/report.h>
#include <switchyard/tuning/calibration.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace switchyard::cli {

namespace {

using nlohmann::json;

// The report files named: a folder stands for the *.json reports in it, sorted by name
// (a fleet folder: fleet collect leaves report-<host>-<job>_<task>.json there).
std::vector<std::string> expand_reports(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (const auto& a : args) {
        std::error_code ec;
        if (a != "-" && std::filesystem::is_directory(a, ec)) {
            std::vector<std::string> found;
            try {
                found = Report::files_in(a);
            } catch (const ReportError& e) {
                throw std::invalid_argument(e.what());
            }
            if (found.empty())
                throw std::invalid_argument(a + ": the folder holds no report*.json files");
            out.insert(out.end(), found.begin(), found.end());
        } else {
            out.push_back(a);
        }
    }
    if (std::count(out.begin(), out.end(), std::string("-")) > 1)
        throw std::invalid_argument("only one report can be '-' (the standard input)");
    return out;
}

// Loads every report; an unreadable one is a usage error (exit 2), so exit 1 keeps meaning
// "a regression" / "a check failed" for CI.
std::vector<Report> load_reports(const std::vector<std::string>& paths) {
    std::vector<Report> out;
    out.reserve(paths.size());
    for (const auto& p : paths) {
        try {
            out.push_back(Report::load(p));
        } catch (const ReportError& e) {
            throw std::invalid_argument(e.what());
        }
        for (const auto& w : out.back().warnings)
            std::cerr << "switchyard-cli: warning: " << untrusted(w) << "\n";
    }
    return out;
}

struct CompareArgs {
    std::vector<std::string> reports;
    bool json = false, fail_on_regression = false, judge_environment = false;
    double fdr = CompareOptions{}.fdr;
    double min_effect = CompareOptions{}.min_effect * 100;
    double max_noise = CompareOptions{}.max_noise * 100;
    double single_run_floor = CompareOptions{}.single_run_floor * 100;
    std::int64_t baseline = 1;
    // compare --calibrate: K reports of identical runs, or --runs K made here.
    bool calibrate = false;
    std::int64_t runs = 0;
    std::string calibration_output; // default: the user's, by machine
    ProfileOptions run;
    bool run_options_given = false;
};

CompareOptions compare_options(const CompareArgs& a) {
    CompareOptions options;
    options.fdr = a.fdr;
    options.min_effect = a.min_effect / 100;
    options.max_noise = a.max_noise / 100;
    options.single_run_floor = a.single_run_floor / 100;
    options.judge_environment = a.judge_environment;
    return options;
}

// compare --calibrate: the false-positive rate of the verdict rule on this machine, from K
// reports of identical runs (given, or made with --runs K), kept where compare finds it.
int run_calibrate(const CompareArgs& a) {
    std::vector<std::string> names;
    std::vector<Report> reports;
    // Where it goes, settled before any run: a folder that cannot be made fails now, not
    // after minutes of runs.
    // The default file is named by the machine, known once a run has ended; its folder is
    // the same.
    auto file = a.calibration_output;
    const auto folder =
        std::filesystem::path(file.empty() ? default_calibration_file("unknown") : file)
            .parent_path();
    std::error_code ec;
    if (!folder.empty())
        std::filesystem::create_directories(folder, ec);
    if (ec)
        throw std::invalid_argument("cannot make the folder " + folder.string() +
                                    " for the calibration: " + ec.message());
    const auto settle_file = [&](const Report& first) {
        if (file.empty())
            file = default_calibration_file(first.context.fingerprint.machine_id);
    };
    if (a.runs > 0) {
        if (!a.reports.empty())
            throw std::invalid_argument("--calibrate takes reports or --runs K, not both");
        auto o = a.run;
        o.json = a.json; // machine-readable output: no progress lines
        for (std::int64_t k = 0; k < a.runs; ++k) {
            if (!a.json)
                std::cerr << "calibration run " << k + 1 << " of " << a.runs << "\n";
            reports.push_back(measure_report(o));
            settle_file(reports.front());
            const auto stem = file.substr(0, file.size() - (file.ends_with(".json") ? 5 : 0));
            // Each run kept beside the calibration as it ends, so the figure can be checked.
            names.push_back(stem + "-run" + std::to_string(k + 1) + ".json");
            reports.back().save(names.back());
        }
    } else {
        if (a.run_options_given)
            throw std::invalid_argument("the run options (--op, --sizes, --repeat, ...) need "
                                        "--runs K: they say what the calibration runs measure");
        names = expand_reports(a.reports);
        if (names.size() < 2)
            throw std::invalid_argument("--calibrate needs at least two reports of identical runs "
                                        "(or --runs K to make them), got " +
                                        std::to_string(names.size()));
        reports = load_reports(names);
        settle_file(reports.front());
    }
    const auto c = calibrate(reports, names, compare_options(a));
    c.save(file);
    if (a.json) {
        auto j = c.to_json();
        j["file"] = file;
        std::cout << json_text(j, 1) << "\n";
    } else {
        std::cout << c.text() << "wrote " << untrusted(file)
                  << " (compare shows it beside the verdict rule for this machine's reports)\n";
    }
    return Ok;
}

// "Measured on this machine: ..." under the rule, where a calibration is kept for the
// baseline's machine (compare --calibrate).
std::string calibration_line(const std::optional<Calibration>& c) {
    return c ? c->beside_the_rule() + ".\n" : std::string();
}

int run_compare(const CompareArgs& a) {
    if (a.calibrate)
        return run_calibrate(a);
    if (a.runs > 0 || a.run_options_given)
        throw std::invalid_argument("--runs and the run options belong to --calibrate");
    const auto paths = expand_reports(a.reports);
    if (paths.size() < 2)
        throw std::invalid_argument(
            "compare needs at least two reports (or a folder of them), got " +
            std::to_string(paths.size()));
    if (a.baseline < 1 || std::size_t(a.baseline) > paths.size())
        throw std::invalid_argument("--baseline " + std::to_string(a.baseline) +
                                    ": must name one of the " + std::to_string(paths.size()) +
                                    " reports (1 to " + std::to_string(paths.size()) + ")");
    const auto reports = load_reports(paths);
    // The baseline machine's calibration, where one is kept, is part of the rule.
    const auto calibration =
        find_calibration(reports[std::size_t(a.baseline - 1)].context.fingerprint.machine_id);
    auto options = compare_options(a);
    if (calibration)
        calibration->apply_to(options);
    const auto m = MultiComparison::of(reports, paths, options, std::size_t(a.baseline - 1));
    const auto calibrated = calibration_line(calibration);
    const bool regression = m.count(Verdict::Slower) > 0;
    if (a.json) {
        auto j = m.to_json();
        if (paths.size() == 2) {
            const std::size_t other = 1 - m.baseline();
            j["pairs"] = Comparison::of(m, other).to_json()["pairs"];
            j["a"] = paths[m.baseline()];
            j["b"] = paths[other];
        }
        if (calibration)
            j["calibration"] = calibration->to_json();
        std::cout << json_text(j, 1) << "\n";
    } else if (paths.size() == 2) {
        const std::size_t other = 1 - m.baseline();
        std::cout << "A: " << untrusted(paths[m.baseline()]) << "\nB: " << untrusted(paths[other])
                  << "\n"
                  << calibrated << Comparison::of(m, other).to_text();
    } else {
        std::cout << calibrated << m.to_text();
    }
    if (a.fail_on_regression && regression) {
        std::cerr << "switchyard-cli: " << m.count(Verdict::Slower)
                  << " row(s) SLOWER than the baseline (--fail-on-regression)\n";
        return Failure;
    }
    return Ok;
}

struct CheckArgs {
    std::vector<std::string> reports;
    std::string references, write_references, system;
    std::vector<std::string> hostnames;
    double lower = std::nan(""), upper = std::nan(""); // NaN: no lower bound; measured bands
    double band_floor = BandRule{}.floor;
    bool json = false;
};

// A band wider than this gates little: write_references names such rows.
constexpr double kLooseBand = 0.5;

std::string fmt_percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f %%", fraction * 100);
    return buf;
}

std::string us(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s * 1e6);
    return buf;
}

int write_references(const CheckArgs& a, const std::vector<std::string>& paths,
                     const std::vector<Report>& reports) {
    References refs;
    std::error_code ec;
    if (std::filesystem::exists(a.write_references, ec))
        refs = References::load(a.write_references); // keep the other systems
    BandRule rule;
    if (!std::isnan(a.lower))
        rule.lower = a.lower;
    if (!std::isnan(a.upper))
        rule.upper = a.upper;
    rule.floor = a.band_floor;
    // The reports of one system make one system: all of them with --system NAME, else those
    // of one host name; K reports of a system give bands from the spread between them.
    std::vector<std::pair<std::string, std::vector<Report>>> groups;
    std::vector<std::vector<std::string>> group_paths;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto key = !a.system.empty() ? a.system : reports[i].context.host.hostname;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == key; });
        if (it == groups.end()) {
            groups.emplace_back(key, std::vector<Report>{});
            group_paths.emplace_back();
            it = groups.end() - 1;
        }
        it->second.push_back(reports[i]);
        group_paths[std::size_t(it - groups.begin())].push_back(paths[i]);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        ReferenceSystem sys;
        try {
            sys = References::system_from(groups[g].second, a.system, a.hostnames, rule);
        } catch (const ReferenceError& e) {
            throw std::invalid_argument(e.what());
        }
        const auto& from = group_paths[g];
        std::cout << "system '" << untrusted(sys.name) << "': " << sys.rows.size() << " rows from "
                  << (from.size() == 1 ? untrusted(from[0])
                                       : std::to_string(from.size()) + " reports")
                  << (sys.machine_id.empty() ? "" : ", machine " + sys.machine_id) << "\n";
        // How the bands were set: from the reports' spread, the runs' variation, or the floor.
        std::size_t by_reports = 0, by_runs = 0, by_floor = 0, by_memory = 0;
        double widest = 0;
        std::vector<std::string> loose; // rows whose runs vary too much to gate a regression
        for (const auto& r : sys.rows) {
            by_reports += r.band == "reports";
            by_runs += r.band == "runs";
            by_floor += r.band == "floor";
            by_memory += r.memory_gbs.has_value();
            const bool measured_band = r.band == "runs" || r.band == "reports";
            if (measured_band && r.upper)
                widest = std::max(widest, *r.upper);
            if (measured_band && r.upper && *r.upper > kLooseBand)
                loose.push_back(r.op + " " + r.size + " " + r.device + " " + r.arch + "/" +
                                r.variant + " (+" + fmt_percent(*r.upper) + ")");
        }
        if (by_reports)
            std::cout << "  " << by_reports << " bands from the spread between the " << sys.reports
                      << " reports (" << fmt_percent(rule.floor) << " to " << fmt_percent(widest)
                      << ")\n";
        if (by_runs)
            std::cout << "  " << by_runs << " bands from the variation between the rows' runs ("
                      << fmt_percent(rule.floor) << " to " << fmt_percent(widest) << ")\n";
        if (sys.control)
            std::cout << "  the drift control ran " << us(sys.control->fastest) << "-"
                      << us(sys.control->slowest)
                      << " us: check widens a row's band by as far as its report's control "
                         "goes beyond that\n";
        if (by_floor)
            std::cout << "  " << by_floor << " rows of one run get the " << fmt_percent(rule.floor)
                      << " floor (profile --repeat 3 measures their variation)\n";
        if (by_memory)
            std::cout << "  " << by_memory
                      << " rows with memory beside them are judged at the memory they got\n";
        if (!loose.empty()) {
            std::cout << "  note: " << loose.size()
                      << " rows vary so much between runs that their bands catch only a "
                         "regression beyond "
                      << fmt_percent(kLooseBand)
                      << ": more runs (--repeat), a quieter machine or --pin-cpu narrow them:\n";
            for (const auto& l : loose)
                std::cout << "    " << untrusted(l) << "\n";
        }
        refs.put(std::move(sys));
    }
    refs.save(a.write_references);
    std::cout << "wrote " << untrusted(a.write_references) << " (" << refs.systems.size()
              << " systems)\n";
    return Ok;
}

int run_check(const CheckArgs& a) {
    if (a.references.empty() == a.write_references.empty())
        throw std::invalid_argument(
            "check needs --references FILE (check against it) or --write-references FILE "
            "(write it from the reports), one of the two");
    const auto paths = expand_reports(a.reports);
    const auto reports = load_reports(paths);
    if (!a.write_references.empty())
        return write_references(a, paths, reports);
    References refs;
    try {
        refs = References::load(a.references);
    } catch (const ReferenceError& e) {
        throw std::invalid_argument(e.what());
    }
    std::size_t failures = 0, unmatched = 0;
    auto out_json = json::array();
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto result = check_report(reports[i], refs, paths[i]);
        failures += result.failures();
        if (result.system.empty())
            ++unmatched;
        if (a.json) {
            auto rows = json::array();
            for (const auto& r : result.rows) {
                json j = {{"row", r.label},
                          {"status", to_string(r.status)},
                          {"failed", r.failed()},
                          {"median", r.measured},
                          {"reference", r.value},
                          {"low", r.low ? json(*r.low) : json()},
                          {"high", r.high ? json(*r.high) : json()}};
                if (r.at_reference_memory)
                    j["at_reference_memory"] = *r.at_reference_memory;
                if (r.drift_low != 1 || r.drift_high != 1)
                    j["drift"] = {{"low", r.drift_low}, {"high", r.drift_high}};
                if (!r.message.empty())
                    j["message"] = r.message;
                rows.push_back(std::move(j));
            }
            out_json.push_back({{"report", result.report},
                                {"system", result.system},
                                {"failures", result.failures()},
                                {"rows", rows}});
            continue;
        }
        std::cout << untrusted(result.report) << ": ";
        if (result.system.empty()) {
            std::cout << "no system of " << untrusted(a.references) << " matches it (host '"
                      << untrusted(reports[i].context.host.hostname)
                      << "'); add one with check --write-references\n";
            continue;
        }
        std::cout << "system '" << untrusted(result.system) << "'\n";
        std::vector<std::vector<std::string>> table;
        for (const auto& r : result.rows) {
            std::string band = (r.low ? us(*r.low) : std::string("-inf")) + " .. " +
                               (r.high ? us(*r.high) : std::string("+inf"));
            table.push_back({untrusted(r.label), r.measured > 0 ? us(r.measured) : "-",
                             r.value > 0 ? us(r.value) : "-",
                             r.status == CheckedRow::Status::NoReference ? "" : band,
                             to_string(r.status), untrusted(r.message)});
        }
        std::cout << format_table({"row", "median us", "reference us", "band us", "result", ""},
                                  table);
        std::cout << result.failures() << " of " << result.rows.size() << " rows failed\n\n";
    }
    if (a.json)
        std::cout << json_text(json{{"format", "switchyard.check"},
                                    {"format_version", 1},
                                    {"reports", out_json}},
                               1)
                  << "\n";
    if (unmatched)
        throw std::invalid_argument(std::to_string(unmatched) + " report(s) matched no system of " +
                                    a.references);
    return failures ? Failure : Ok;
}

} // namespace

void add_compare_commands(CLI::App& app, Context& context) {
    {
        auto a = std::make_shared<CompareArgs>();
        auto* cmd = app.add_subcommand(
            "compare",
            "Compare two or more profile reports (or folders of them) row by row: SAME, FASTER, "
            "SLOWER or AMBIGUOUS against the first, from the variation between runs "
            "(profile --repeat), with the false-discovery rate controlled over all rows; "
            "MACHINE where both sides ran identical code (the difference is the machine's)");
        cmd->add_option("REPORTS", a->reports, "Reports (JSON) or folders of report*.json")
            ->expected(0, -1);
        cmd->add_flag("--json", a->json, "Machine-readable output");
        cmd->add_flag("--calibrate", a->calibrate,
                      "Measure the verdict rule's false-positive rate on this machine (an A/A "
                      "test): the REPORTS are identical runs, or --runs K makes them; the "
                      "result is kept for this machine and shown beside the rule");
        cmd->add_option("--runs", a->runs,
                        "With --calibrate: make K identical profile runs (with the run options "
                        "below: --op, --sizes, ...; --repeat 3 unless given) and calibrate on "
                        "them")
            ->check(integer_in(2, 100));
        cmd->add_option("--calibration-output", a->calibration_output,
                        "With --calibrate: the file to write (default: the user's, "
                        "~/.local/share/switchyard/calibration/MACHINE_ID.json)");
        const auto run_options = add_run_options(cmd, a->run);
        cmd->add_option("--fdr,--alpha", a->fdr,
                        "False-discovery rate over all rows (Benjamini-Hochberg)")
            ->check(number_in(0, true, 0.5, "a rate"))
            ->capture_default_str();
        cmd->add_option("--min-effect", a->min_effect,
                        "A difference smaller than this (percent) is never called")
            ->check(number_in(0, false, 1000, "a percentage"))
            ->capture_default_str();
        cmd->add_option("--max-noise", a->max_noise,
                        "Rows whose runs vary more than this (percent) cannot be called SAME")
            ->check(number_in(0, false, 1000, "a percentage"))
            ->capture_default_str();
        cmd->add_option("--single-run-floor", a->single_run_floor,
                        "With one run per side, a difference must also exceed this (percent)")
            ->check(number_in(0, false, 1000, "a percentage"))
            ->capture_default_str();
        cmd->add_option("--baseline", a->baseline,
                        "Which report the others are judged against (1: "
                        "the first)")
            ->check(integer_in(1, 1 << 20))
            ->capture_default_str();
        cmd->add_flag("--fail-on-regression", a->fail_on_regression,
                      "Exit 1 when any row is SLOWER than the baseline (for CI); a row whose "
                      "two sides ran identical code is never SLOWER, but MACHINE");
        cmd->add_flag("--judge-environment", a->judge_environment,
                      "Judge the environment, not the code: rows of identical code (the same "
                      "build of the same cell) get FASTER or SLOWER about the machine (a driver, "
                      "kernel or VM change), and --fail-on-regression fails on them");
        set_action(cmd, context, [=] {
            a->run_options_given = std::any_of(run_options.begin(), run_options.end(),
                                               [](const CLI::Option* o) { return o->count() > 0; });
            // The calibration's runs are judged as compare judges repeated runs: 3 a row
            // unless --repeat says otherwise (one run a side calibrates the one-run floor).
            if (a->runs > 0 && cmd->count("--repeat") == 0)
                a->run.repeat = 3;
            if (a->reports.empty() && !(a->calibrate && a->runs > 0))
                throw std::invalid_argument("compare needs reports (or --calibrate --runs K)");
            return run_compare(*a);
        });
    }
    {
        auto a = std::make_shared<CheckArgs>();
        auto* cmd = app.add_subcommand(
            "check", "Check reports against references with tolerances (exit 1 on any failure), "
                     "or write the references from reports");
        cmd->add_option("REPORTS", a->reports, "Reports (JSON) or folders of report*.json")
            ->required()
            ->expected(1, -1);
        auto* r = cmd->add_option("--references", a->references,
                                  "The references file to check against (JSON)");
        auto* w = cmd->add_option("--write-references", a->write_references,
                                  "Write (or update) this references file from the reports: one "
                                  "system per host name (or --system), its rows' medians as "
                                  "values; K reports of one system give bands from the spread "
                                  "between them");
        r->excludes(w);
        cmd->add_option("--system", a->system,
                        "With --write-references: the system's name (default: the host name); "
                        "every report given is one of its runs");
        cmd->add_option("--hostname", a->hostnames,
                        "With --write-references: host name patterns the system matches "
                        "(fnmatch, repeatable; default: any host with the same machine_id)");
        cmd->add_option("--upper", a->upper,
                        "With --write-references: one fixed tolerance above the value for every "
                        "row (0.10: 10 % slower still passes); default: each row's from the "
                        "variation between its runs (profile --repeat), at least --band-floor")
            ->check(number_in(0, false, 1000, "a fraction >= 0"));
        cmd->add_option("--band-floor", a->band_floor,
                        "With --write-references: the narrowest band a row's runs can give, and "
                        "the band of rows of one run")
            ->check(number_in(0, false, 1000, "a fraction >= 0"))
            ->capture_default_str();
        cmd->add_option("--lower", a->lower,
                        "With --write-references: the tolerance below (-0.5: twice as fast "
                        "still passes; default: no lower bound)")
            ->check(number_in(-1, false, 0, "a fraction from -1 to 0"));
        cmd->add_flag("--json", a->json, "Machine-readable output");
        set_action(cmd, context, [=] { return run_check(*a); });
    }
}

} // namespace switchyard::cli
