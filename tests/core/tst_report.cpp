// SPDX-License-Identifier: MIT
// Report round trip and the robust reader: truncated, malformed and hostile files get a
// clear error, never a crash.
#include <QtTest>

#include <switchyard/hardware/sdkjson.h>
#include <switchyard/report/compare.h>
#include <switchyard/report/csv.h>
#include <switchyard/report/references.h>
#include <switchyard/report/report.h>
#include <switchyard/sdk/device.h>
#include <switchyard/tuning/tune.h>
#include <switchyard/worker/protocol.h>

#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

using namespace switchyard;

namespace {

// A measured row of (op, size, cpu, arch/variant) whose samples are `median` ± 1 %.
ProfileRow timed_row(std::int64_t index, const std::string& arch, const std::string& variant,
                     double median, int samples = 20, bool resolved = false,
                     const std::string& size = "1024") {
    ProfileRow r;
    r.spec.index = index;
    r.spec.op = "rms_norm";
    r.spec.size = size;
    r.spec.device = "cpu";
    r.spec.device_kind = "cpu";
    r.spec.arch = arch;
    r.spec.variant = variant;
    r.spec.backend = "cpu";
    r.spec.resolved = resolved;
    for (int i = 0; i < samples; ++i)
        r.samples.push_back(median * (0.99 + 0.02 * double(i) / double(std::max(1, samples - 1))));
    r.stats = SampleStats::from(r.samples);
    r.parity.checked = true;
    r.parity.pass = true;
    return r;
}

// A row of `op` whose runs' medians are `center` x each factor; its median the runs' median.
ProfileRow repeated_row(const std::string& op, double center, const std::vector<double>& factors) {
    static std::int64_t index = 100;
    ProfileRow r = timed_row(index++, "generic", "default", center);
    r.spec.op = op;
    std::vector<double> medians;
    for (const double f : factors) {
        RunSummary run;
        run.median = center * f;
        run.count = 20;
        r.runs.push_back(run);
        medians.push_back(run.median);
    }
    std::sort(medians.begin(), medians.end());
    r.stats.median = medians[medians.size() / 2];
    return r;
}

// A CSV's lines split at commas (the fields of these tests are unquoted).
std::vector<std::vector<std::string>> csv_fields(const std::string& csv) {
    std::vector<std::vector<std::string>> lines;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> fields;
        std::istringstream f(line);
        for (std::string field; std::getline(f, field, ',');)
            fields.push_back(field);
        // getline drops an empty last field: keep it, so every line has all its columns.
        if (!line.empty() && line.back() == ',')
            fields.emplace_back();
        lines.push_back(fields);
    }
    return lines;
}

// The column of `name` in the header (lines[0]); its size when there is none.
std::size_t csv_column(const std::vector<std::vector<std::string>>& lines,
                       const std::string& name) {
    return std::size_t(std::find(lines.at(0).begin(), lines.at(0).end(), name) -
                       lines.at(0).begin());
}

Report sample_report() {
    Report r;
    r.context = RunContext::from_json(
        {{"switchyard", {{"version", "0.1.0"}}}, {"date", "2024-01-01T00:00:00Z"}});
    ProfileRow row;
    row.spec.index = 0;
    row.spec.op = "gemm";
    row.spec.size = "64x64x64";
    row.spec.dims = {64, 64, 64};
    row.spec.device = "cpu";
    row.spec.device_kind = "cpu";
    row.spec.arch = "x86-64-v3";
    row.spec.variant = "default";
    row.spec.backend = "cpu";
    row.spec.source = "builtin";
    row.spec.workspace_bytes = 4096;
    row.samples = {1e-5, 1.1e-5, 0.9e-5};
    row.stats = SampleStats::from(row.samples);
    row.stop_reason = "converged";
    row.gbps = 12.5;
    row.ceiling_id = "l2.triad.all";
    row.level = "L2";
    row.ceiling_value = 250;
    row.ceiling_fraction = 0.05;
    row.intensity = 0.5;
    row.parity.checked = true;
    row.parity.pass = true;
    row.parity.max_abs_error = 1e-7;
    row.parity.tolerance = {1e-6, 1e-4};
    row.warnings = {"noisy"};
    r.rows.push_back(row);
    ProfileRow crashed = row;
    crashed.spec.index = 1;
    crashed.spec.variant = "threaded";
    crashed.status = RowStatus::Crashed;
    crashed.reason = "killed by signal 11 (SIGSEGV)";
    crashed.samples.clear();
    crashed.stats = {};
    crashed.parity = {};
    r.rows.push_back(crashed);
    return r;
}

} // namespace

class TestReport : public QObject {
    Q_OBJECT

private slots:
    // A report's CPU caches as others may write them: numbers out of an int's range, floats,
    // strings where numbers go. Read as unknown (0, ""), never converted with undefined
    // behaviour (fuzz_report found 7e+124 as a line size; tests/fuzz/corpus/report keeps it).
    void hostileCacheEntriesReadAsUnknown() {
        auto j = sample_report().to_json();
        j["context"]["cpu"]["caches"] =
            nlohmann::json::array({{{"level", 7e124},
                                    {"type", 5},
                                    {"size_bytes", -1},
                                    {"line_bytes", 18446744073709551615ull},
                                    {"ways", "8"}},
                                   {{"level", 2}, {"type", "unified"}, {"size_bytes", 1 << 20}}});
        const auto r = Report::from_json(j);
        QCOMPARE(r.context.cpu.caches.size(), std::size_t(2));
        const auto& bad = r.context.cpu.caches[0];
        QCOMPARE(bad.level, 0);
        QCOMPARE(bad.type, std::string());
        QCOMPARE(bad.size_bytes, std::int64_t(0));
        QCOMPARE(bad.line_bytes, 0);
        QCOMPARE(bad.ways, 0);
        QCOMPARE(r.context.cpu.caches[1].size_bytes, std::int64_t(1 << 20));
    }

    // tune_report: the winner per size by the dispatch-regret rule, ranges of consecutive sizes
    // with the same winner, an entry for each range whose winner is not the chain's pick.
    void tuneRangesFollowTheWinner() {
        Report report;
        report.context.fingerprint.machine_id = "0123456789abcdef";
        report.context.date = "2026-12-06T07:00:00Z";
        std::int64_t index = 0;
        // rows of 1024 floats: 4, 8, 16 and 32 of them; the threaded cell wins at 4, 8 and
        // 32, not at 16 (within the noise threshold there).
        for (const auto& [n, threaded] : std::vector<std::pair<int, double>>{
                 {4, 1.0e-3}, {8, 1.0e-3}, {16, 2.68e-3}, {32, 1.0e-3}}) {
            const std::string size = std::to_string(n) + "x1024";
            auto pick = timed_row(index++, "x86-64-v4", "default", 2.7e-3, 20, true, size);
            auto fast = timed_row(index++, "x86-64-v3", "threaded", threaded, 20, false, size);
            pick.spec.dims = fast.spec.dims = {n, 1024, 0};
            pick.spec.code = fast.spec.code = {"cpu", "0.1.0", "abc123"};
            report.rows.push_back(pick);
            report.rows.push_back(fast);
        }
        report.annotate();
        QCOMPARE(report.dispatch.size(), std::size_t(4));
        const auto result = tune_report(report, "r.json");
        QCOMPARE(result.decisions.size(), std::size_t(4));
        QCOMPARE(result.decisions[2].winner, std::string("x86-64-v4/default"));
        const auto& entries = result.tuning.entries;
        QCOMPARE(entries.size(), std::size_t(2));
        QCOMPARE(entries[0].sizes, (std::vector<std::string>{"4x1024", "8x1024"}));
        QCOMPARE(entries[0].min_work, 4096.0);
        QCOMPARE(entries[0].max_work, 8192.0);
        QCOMPARE(entries[0].chosen.cell, std::string("x86-64-v3/threaded"));
        QCOMPARE(entries[0].overrides.cell, std::string("x86-64-v4/default"));
        QCOMPARE(entries[0].chosen.code.build_id, std::string("abc123"));
        QVERIFY(std::abs(entries[0].speedup() - 2.7) < 0.01);
        QCOMPARE(entries[1].sizes, (std::vector<std::string>{"32x1024"}));
        QCOMPARE(entries[1].report, std::string("r.json"));
        QCOMPARE(result.tuning.machine_id, std::string("0123456789abcdef"));
        // The file form reads back as written; a malformed entry is dropped alone.
        auto j = result.tuning.to_json();
        QCOMPARE(Tuning::from_json(j).to_json(), j);
        j["entries"][0].erase("chosen");
        const auto partial = Tuning::from_json(j, "t.tuning");
        QCOMPARE(partial.entries.size(), std::size_t(1));
        QCOMPARE(partial.read_warnings.size(), std::size_t(1));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 Tuning::from_json(nlohmann::json{{"format", "x"}}));
        // No dispatch findings (a default run): nothing to tune, and the note says what to run.
        Report plain;
        plain.rows.push_back(timed_row(0, "x86-64-v4", "default", 2.7e-3, 20, true));
        plain.annotate();
        const auto none = tune_report(plain, "");
        QVERIFY(none.tuning.entries.empty());
        QVERIFY(!none.notes.empty() && none.notes[0].find("--all-variants") != std::string::npos);
    }

    // Two cells that both beat the pick and are within noise of each other tie: the tie goes
    // to the first in the chain's own order (generic/tunable, the chain's rung, before the
    // terminal generic/reference), whichever measured faster, so the range keeps one cell
    // rather than flipping between the two; a cell really faster than it starts a range of
    // its own.
    void tuneTieGoesByTheChainsOrder() {
        Report report;
        report.context.date = "2026-12-06T07:00:00Z";
        std::int64_t index = 0;
        for (const auto& [n, a, b] :
             std::vector<std::tuple<int, double, double>>{{4, 1.00e-3, 1.01e-3},
                                                          {8, 1.01e-3, 1.00e-3},
                                                          {16, 1.02e-3, 1.00e-3},
                                                          {32, 1.00e-3, 0.40e-3}}) {
            const std::string size = std::to_string(n) + "x1024";
            for (auto row : {timed_row(index++, "x86-64-v2", "tunable", 2.7e-3, 20, true, size),
                             timed_row(index++, "generic", "tunable", a, 20, false, size),
                             timed_row(index++, "generic", "reference", b, 20, false, size)}) {
                row.spec.dims = {n, 1024, 0};
                report.rows.push_back(row);
            }
        }
        report.annotate();
        const auto result = tune_report(report, "");
        // At 8x1024 the reference measured fastest; the tie still goes to generic/tunable.
        QCOMPARE(report.dispatch[1].fastest, std::string("generic/reference"));
        QCOMPARE(result.decisions[1].winner, std::string("generic/tunable"));
        const auto& entries = result.tuning.entries;
        QCOMPARE(entries.size(), std::size_t(2));
        QCOMPARE(entries[0].chosen.cell, std::string("generic/tunable"));
        QCOMPARE(entries[0].sizes, (std::vector<std::string>{"4x1024", "8x1024", "16x1024"}));
        // The evidence at a size is the kept cell's own against the pick.
        QCOMPARE(entries[0].evidence[1].chosen_median_s, report.rows[4].stats.median);
        QVERIFY(std::abs(entries[0].evidence[1].speedup - 2.7 / 1.01) < 0.01);
        QCOMPARE(entries[1].chosen.cell, std::string("generic/reference"));
        QCOMPARE(entries[1].sizes, (std::vector<std::string>{"32x1024"}));
        QCOMPARE(std::count_if(result.notes.begin(), result.notes.end(),
                               [](const std::string& n) {
                                   return n.find("generic/tunable and generic/reference tie") !=
                                              std::string::npos &&
                                          n.find("generic/tunable is kept") != std::string::npos;
                               }),
                 std::ptrdiff_t(3));
        // The order of ties: the chain's rungs most specific first, the terminal rung, then
        // any other cell by name.
        QVERIFY(tie_order("cpu", "tunable", "x86-64-v3/tunable", "generic/tunable"));
        QVERIFY(tie_order("cpu", "tunable", "generic/tunable", "generic/reference"));
        QVERIFY(tie_order("cpu", "tunable", "generic/reference", "generic/openblas"));
        QVERIFY(tie_order("cpu", "tunable", "generic/openblas", "x86-64-v3/threaded"));
        QVERIFY(!tie_order("cpu", "tunable", "generic/tunable", "generic/tunable"));
        // The same rows in another order decide the same.
        Report shuffled = report;
        std::reverse(shuffled.rows.begin(), shuffled.rows.end());
        shuffled.annotate();
        const auto again = tune_report(shuffled, "");
        QCOMPARE(again.tuning.to_json()["entries"], result.tuning.to_json()["entries"]);
    }

    // check --write-references: a row's band from the variation between its runs (at least
    // the floor), the floor for a row of one run, a given tolerance for every row; the
    // memory beside a row kept with it.
    void referenceBandsComeFromTheRuns() {
        Report report;
        report.context.fingerprint.machine_id = "m1";
        report.rows.push_back(repeated_row("flow_match_step", 1e-3, {0.95, 1.0, 1.05, 1.0, 1.02}));
        report.rows.push_back(repeated_row("rms_norm", 1e-3, {1.0, 1.001, 0.999}));
        report.rows.push_back(timed_row(2, "generic", "reference", 1e-3));
        const auto sys = References::system_from(report, "here", {});
        QCOMPARE(sys.rows.size(), std::size_t(3));
        QCOMPARE(sys.rows[0].band, std::string("runs"));
        // sigma of log(0.95, 1, 1.05, 1, 1.02) x sqrt(1 + 1/5) x 3.1
        std::vector<double> logs;
        for (double x : {0.95, 1.0, 1.05, 1.0, 1.02})
            logs.push_back(std::log(x));
        double mean = 0, var = 0;
        for (double x : logs)
            mean += x / 5;
        for (double x : logs)
            var += (x - mean) * (x - mean) / 4;
        QVERIFY(std::fabs(*sys.rows[0].upper - std::expm1(3.1 * std::sqrt(var * 1.2))) < 1e-9);
        QVERIFY(*sys.rows[0].upper > 0.10);
        QCOMPARE(sys.rows[1].band, std::string("runs"));
        QCOMPARE(*sys.rows[1].upper, 0.10); // steady runs: the floor
        QCOMPARE(sys.rows[2].band, std::string("floor"));
        QCOMPARE(*sys.rows[2].upper, 0.10);
        QVERIFY(!sys.rows[0].lower);
        const auto given = References::system_from(report, "here", {}, {.upper = 0.5});
        for (const auto& r : given.rows)
            QVERIFY(r.band == "given" && *r.upper == 0.5);
        // The file form keeps the band and the memory; an older file (neither) still reads.
        References refs;
        refs.put(sys);
        refs.systems[0].rows[0].memory_gbs = 47.5;
        const auto back = References::from_json(refs.to_json());
        QCOMPARE(back.to_json(), refs.to_json());
        QCOMPARE(*back.systems[0].rows[0].memory_gbs, 47.5);
        auto old = refs.to_json();
        old["systems"][0]["rows"][0].erase("memory_gbs");
        old["systems"][0]["rows"][0].erase("band");
        QVERIFY(!References::from_json(old).systems[0].rows[0].memory_gbs);
        old["systems"][0]["rows"][0]["memory_gbs"] = -1;
        QVERIFY_THROWS_EXCEPTION(ReferenceError, References::from_json(old));
    }

    // A DRAM-bound row on a shared host: memory gave it less in the second run (43 GB/s
    // against 50 when the reference was written), and the row is as much slower. By its raw
    // time it fails a 10 % band (the failure seen on flow_match_step 11,184,810: 2,651 us
    // against a 2,295 us reference); at the reference's memory it passes. A row slower at
    // the same memory still fails.
    void memoryRowsAreJudgedAtTheReferencesMemory() {
        Report first;
        first.context.fingerprint.machine_id = "m1";
        auto row = timed_row(0, "x86-64-v4", "default", 2.295e-3);
        row.memory = {"dram.copy.1t", 50.0, 8};
        first.rows.push_back(row);
        References refs;
        refs.put(References::system_from(first, "here", {}));
        QCOMPARE(*refs.systems[0].rows[0].memory_gbs, 50.0);
        Report drifted = first;
        drifted.rows[0] = timed_row(0, "x86-64-v4", "default", 2.651e-3);
        drifted.rows[0].memory = {"dram.copy.1t", 43.0, 8};
        drifted.rows[0].gbps = 43.0; // at the memory's limit: all its time is the memory's
        auto result = check_report(drifted, refs, "drifted");
        QCOMPARE(result.rows[0].status, CheckedRow::Status::Pass);
        QVERIFY(std::fabs(*result.rows[0].at_reference_memory - 2.651e-3 * 43 / 50) < 1e-12);
        // A row that used a quarter of the memory beside it (a scalar loop): a quarter of its
        // time follows the memory, and the same slowdown is a FAIL.
        drifted.rows[0].gbps = 43.0 / 4;
        result = check_report(drifted, refs, "scalar");
        QVERIFY(std::fabs(*result.rows[0].at_reference_memory -
                          2.651e-3 / (0.75 + 0.25 * 50.0 / 43.0)) < 1e-12);
        QCOMPARE(result.rows[0].status, CheckedRow::Status::Fail);
        drifted.rows[0].gbps = 43.0;
        QVERIFY2(result.rows[0].message.find("at the reference's 50.0 GB/s") != std::string::npos,
                 result.rows[0].message.c_str());
        // Without the memory beside it (an older report), by its time: FAIL.
        drifted.rows[0].memory = {};
        result = check_report(drifted, refs, "drifted");
        QCOMPARE(result.rows[0].status, CheckedRow::Status::Fail);
        // Slower at the same memory: FAIL, and the message says at which memory.
        drifted.rows[0].memory = {"dram.copy.1t", 50.0, 8};
        result = check_report(drifted, refs, "slower");
        QCOMPARE(result.rows[0].status, CheckedRow::Status::Fail);
        QVERIFY2(result.rows[0].message.find("is slower than the upper bound") != std::string::npos,
                 result.rows[0].message.c_str());
    }

    // The goal: K identical runs (5 % noise between runs, 24 rows, 3 runs each), each checked
    // against references written from the first. A fixed 10 % band fails some rows; bands
    // from the runs fail none.
    void identicalRunsPassTheirOwnReferences() {
        std::uint64_t s = 12345;
        auto gaussian = [&] {
            auto uniform = [&] {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                return (double(s >> 11) + 0.5) / double(1ULL << 53);
            };
            return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
        };
        auto run = [&] {
            Report r;
            r.context.fingerprint.machine_id = "m1";
            for (int i = 0; i < 24; ++i) {
                std::vector<double> factors;
                for (int k = 0; k < 3; ++k)
                    factors.push_back(std::exp(0.05 * gaussian()));
                r.rows.push_back(repeated_row("op" + std::to_string(i), 1e-3, factors));
            }
            return r;
        };
        std::vector<Report> runs;
        for (int k = 0; k < 8; ++k)
            runs.push_back(run());
        References fixed, measured;
        fixed.put(References::system_from(runs[0], "here", {}, {.upper = 0.10}));
        measured.put(References::system_from(runs[0], "here", {}));
        std::size_t fixed_fails = 0, measured_fails = 0;
        for (std::size_t k = 1; k < runs.size(); ++k) {
            fixed_fails += check_report(runs[k], fixed, "r").failures();
            measured_fails += check_report(runs[k], measured, "r").failures();
        }
        QVERIFY2(fixed_fails > 0, std::to_string(fixed_fails).c_str());
        QCOMPARE(measured_fails, std::size_t(0));
    }

    // check --write-references from K reports of one system: the bands come from the spread
    // between the reports (the machine drifts between runs, by 15 % here, while each run's
    // own runs agree within 1 %), and a row is judged against its own report's drift control.
    void referencesFromReportsOfOneSystem() {
        // A report whose rows all ran `factor` x their time (the machine), each with three
        // runs within 1 % of each other, and a drift control of these sentinel times (us).
        auto report = [](double factor, std::initializer_list<double> control_us) {
            Report r;
            r.context.fingerprint.machine_id = "m1";
            r.context.host.hostname = "node1";
            for (int i = 0; i < 16; ++i)
                r.rows.push_back(repeated_row("op" + std::to_string(i), 1e-3 * (1 + i) * factor,
                                              {0.99, 1.0, 1.01}));
            if (control_us.size() > 0) {
                DriftControl c;
                for (const double t : control_us)
                    c.samples.push_back({"pass", 0, t * 1e-6});
                r.context.control = c;
            }
            return r;
        };
        const std::vector<Report> refs_from{report(1.0, {10, 10.4}), report(1.15, {10.8, 11}),
                                            report(0.9, {10.1, 10.5})};
        const auto sys = References::system_from(refs_from, "", {});
        QCOMPARE(sys.name, std::string("node1"));
        QCOMPARE(sys.reports, std::size_t(3));
        QCOMPARE(sys.rows.size(), std::size_t(16));
        QCOMPARE(sys.rows[0].band, std::string("reports"));
        // The value: the geometric mean of the reports' medians; the band: 3.1 sigma of their
        // logs x sqrt(1 + 1/3).
        const double gm = std::cbrt(1.0 * 1.15 * 0.9);
        QVERIFY(std::fabs(sys.rows[0].value - 1e-3 * gm) < 1e-12);
        std::vector<double> logs{0, std::log(1.15), std::log(0.9)};
        const double mean = (logs[0] + logs[1] + logs[2]) / 3;
        double var = 0;
        for (const double x : logs)
            var += (x - mean) * (x - mean) / 2;
        QVERIFY(std::fabs(*sys.rows[0].upper - std::expm1(3.1 * std::sqrt(var * 4 / 3))) < 1e-9);
        QVERIFY(sys.control.has_value());
        QCOMPARE(sys.control->fastest, 10e-6);
        QCOMPARE(sys.control->slowest, 11e-6);
        References k, one;
        k.put(sys);
        one.put(References::system_from(refs_from[0], "", {}));
        QCOMPARE(one.systems[0].reports, std::size_t(1));
        // Five more runs of the unchanged machine, as far apart as the references: bands
        // from one report (its runs agree within 1 %) fail them; bands from three pass them.
        std::size_t k_fails = 0, one_fails = 0;
        for (const double f : {1.2, 0.88, 1.1, 1.05, 0.95}) {
            k_fails += check_report(report(f, {10.2, 10.9}), k, "r").failures();
            one_fails += check_report(report(f, {10.2, 10.9}), one, "r").failures();
        }
        QCOMPARE(k_fails, std::size_t(0));
        QVERIFY(one_fails > 0);
        // A run whose machine ran its control 1.82x slower than any reference run: its rows,
        // 1.9x slower, are the machine's; without a control they fail.
        const auto slow_machine = check_report(report(1.9, {15, 20}), k, "slow");
        QCOMPARE(slow_machine.failures(), std::size_t(0));
        QVERIFY(std::fabs(slow_machine.rows[0].drift_high - 20.0 / 11.0) < 1e-12);
        QVERIFY2(slow_machine.rows[0].message.find("drift control up to 1.82x slower") !=
                     std::string::npos,
                 slow_machine.rows[0].message.c_str());
        QCOMPARE(check_report(report(1.9, {}), k, "no control").failures(), std::size_t(16));
        // Slower code on an unchanged machine still fails.
        QCOMPARE(check_report(report(2.5, {10.2, 10.9}), k, "slower code").failures(),
                 std::size_t(16));
        // The file keeps how many reports and the control; an older file reads as one.
        const auto back = References::from_json(k.to_json());
        QCOMPARE(back.to_json(), k.to_json());
        QCOMPARE(back.systems[0].reports, std::size_t(3));
        QCOMPARE(back.systems[0].control->slowest, 11e-6);
        auto bad = k.to_json();
        bad["systems"][0]["control"]["fastest"] = 0;
        QVERIFY_THROWS_EXCEPTION(ReferenceError, References::from_json(bad));
        // Reports of two machines are not one system.
        auto other = refs_from;
        other[1].context.fingerprint.machine_id = "m2";
        QVERIFY_THROWS_EXCEPTION(ReferenceError, References::system_from(other, "", {}));
    }

    void roundTrip() {
        const auto r = sample_report();
        QTemporaryDir dir;
        const auto path = dir.filePath("r.json").toStdString();
        r.save(path);
        const auto back = Report::load(path);
        QCOMPARE(back.to_json(), r.to_json());
        QCOMPARE(back.rows.size(), std::size_t(2));
        QVERIFY(back.rows[1].status == RowStatus::Crashed);
        QCOMPARE(std::string(back.rows[0].parity.verdict()), std::string("PASS"));
        QCOMPARE(std::string(back.rows[1].parity.verdict()), std::string("NOT_CHECKED"));
        QCOMPARE(back.rows[0].spec.workspace_bytes, std::int64_t(4096));
        QCOMPARE(back.rows[0].level, std::string("L2"));
        QCOMPARE(back.rows[0].ceiling_fraction, 0.05);
        QCOMPARE(back.rows[0].intensity, 0.5);
    }

    // A report starts with format and format_version (docs/json.md), the rest sorted.
    void formatKeysFirst() {
        QTemporaryDir dir;
        const auto path = dir.filePath("r.json").toStdString();
        sample_report().save(path);
        std::ifstream in(path);
        std::string first, second;
        std::getline(in, first); // "{"
        std::getline(in, first);
        std::getline(in, second);
        QVERIFY2(first.find("\"format\": \"switchyard.report\"") != std::string::npos,
                 first.c_str());
        QVERIFY2(second.find("\"format_version\": ") != std::string::npos, second.c_str());
        QCOMPARE(Report::load(path).to_json(), sample_report().to_json());
    }

    // The output is checked before a run measures; a write that still fails at the end goes
    // to a fallback file in TMPDIR, named, and nothing is lost.
    void saveWithFallback() {
        QTemporaryDir dir;
        const auto folder = dir.path().toStdString();
        QVERIFY_THROWS_EXCEPTION(ReportError, Report::check_writable(folder + "/nosuch/r.json"));
        QVERIFY_THROWS_EXCEPTION(ReportError, Report::check_writable(folder));
        Report::check_writable(folder + "/r.json");
        QVERIFY(!QFile::exists(dir.filePath("r.json"))); // checked, not written
        const QByteArray old = qgetenv("TMPDIR");
        qputenv("TMPDIR", dir.path().toUtf8());
        std::string why;
        const auto r = sample_report();
        const auto fallback = r.save_with_fallback(folder + "/gone/r.json", why);
        qputenv("TMPDIR", old);
        QVERIFY2(fallback.rfind(folder + "/switchyard-report-", 0) == 0, fallback.c_str());
        QVERIFY2(why.find("gone") != std::string::npos, why.c_str());
        QCOMPARE(Report::load(fallback).to_json(), r.to_json());
        why.clear();
        QCOMPARE(r.save_with_fallback(folder + "/r.json", why), std::string());
        QVERIFY(why.empty());
    }

    void deviceCeilingsRoundTrip() {
        DeviceInfo d;
        d.id = "cpu";
        d.kind = "cpu";
        d.ceilings.push_back({"l1.read.1t", "bandwidth", "L1", 210.5, 1, true,
                              "read, fp32, 1 thread, 24 KiB", 24576});
        d.ceilings.push_back({"theoretical.fma.fp32", "compute", "", 3000, 0, false,
                              "attributes: 16 CUs x 2 FMA x 8 lanes x 3.0 GHz", 0});
        const auto back = nlohmann::json(d).get<DeviceInfo>();
        QCOMPARE(nlohmann::json(back), nlohmann::json(d));
        QCOMPARE(back.ceilings.size(), std::size_t(2));
        QCOMPARE(back.ceilings[0].threads, 1);
        QVERIFY(!back.ceilings[1].measured);
        nlohmann::json bad = d;
        bad["ceilings"][1]["value"] = "fast";
        try {
            (void)bad.get<DeviceInfo>();
            QFAIL("a ceiling whose value is a string was accepted");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("ceilings[1].value") != std::string::npos,
                     e.what());
        }
    }

    void csvHasOneLinePerRow() {
        const auto csv = sample_report().to_csv();
        QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 3L);
        QVERIFY(csv.find("\"killed by signal 11 (SIGSEGV)\"") ==
                std::string::npos); // no comma: unquoted
    }

    // One sample has no spread: its rel_noise field is empty, not a "quiet" 0; two or more
    // have a number there.
    void csvLeavesTheNoiseOfOneSampleEmpty() {
        auto report = sample_report();
        report.rows.resize(1);
        auto one = report.rows[0];
        one.samples = {1e-5};
        one.stats = SampleStats::from(one.samples);
        QVERIFY(!one.stats.noise_known() && report.rows[0].stats.noise_known());
        report.rows.push_back(one);
        const auto lines = csv_fields(report.to_csv());
        QCOMPARE(lines.size(), std::size_t(3));
        const auto col = csv_column(lines, "rel_noise");
        QVERIFY(col < lines[0].size());
        QVERIFY(std::stod(lines[1].at(col)) > 0);
        QCOMPARE(lines[2].at(col), std::string());
        QCOMPARE(lines[2].size(), lines[1].size()); // the columns after it stay in place
    }

    // A DRAM row's memory beside it (ProfileRow::memory) has its three columns: the probe,
    // its median GB/s and the windows; a row without one leaves them empty, not a 0 GB/s
    // that would read as a memory that gave nothing.
    void csvHasTheMemoryBesideADramRow() {
        auto report = sample_report();
        report.rows.resize(1);
        auto dram = report.rows[0];
        dram.spec.index = 1;
        dram.ceiling_id = "dram.copy.1t";
        dram.level = "DRAM";
        dram.memory = {"dram.copy.1t", 51.25, 8};
        report.rows.push_back(dram);
        const auto lines = csv_fields(report.to_csv());
        QCOMPARE(lines.size(), std::size_t(3));
        for (const char* name : {"memory_probe", "memory_gbps", "memory_windows"}) {
            const auto col = csv_column(lines, name);
            QVERIFY2(col < lines[0].size(), name);
            QCOMPARE(lines[1].at(col), std::string());
        }
        QCOMPARE(lines[2].at(csv_column(lines, "memory_probe")), std::string("dram.copy.1t"));
        QCOMPARE(std::stod(lines[2].at(csv_column(lines, "memory_gbps"))), 51.25);
        QCOMPARE(lines[2].at(csv_column(lines, "memory_windows")), std::string("8"));
        QCOMPARE(lines[1].size(), lines[0].size());
        QCOMPARE(lines[2].size(), lines[0].size());
        // The column after them is still the parity verdict.
        QCOMPARE(lines[2].at(csv_column(lines, "parity")), std::string("PASS"));
    }

    // A pinned 1-thread row names its CPU in the pinned_cpu column; an unpinned row leaves
    // it empty (CPU 0 is a CPU, not "none").
    void csvNamesAPinnedRowsCpu() {
        auto report = sample_report();
        report.rows.resize(1);
        report.rows[0].pinned_cpu = -1;
        auto pinned = report.rows[0];
        pinned.spec.index = 1;
        pinned.pinned_cpu = 0;
        report.rows.push_back(pinned);
        auto other = pinned;
        other.spec.index = 2;
        other.pinned_cpu = 7;
        report.rows.push_back(other);
        const auto lines = csv_fields(report.to_csv());
        QCOMPARE(lines.size(), std::size_t(4));
        const auto col = csv_column(lines, "pinned_cpu");
        QVERIFY(col < lines[0].size());
        QCOMPARE(lines[1].at(col), std::string());
        QCOMPARE(lines[2].at(col), std::string("0"));
        QCOMPARE(lines[3].at(col), std::string("7"));
        for (std::size_t i = 1; i < lines.size(); ++i)
            QCOMPARE(lines[i].size(), lines[0].size());
        QCOMPARE(lines[2].at(col + 1), lines[2].at(csv_column(lines, "parity")));
    }

    void badInputs_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");
        const auto good = QByteArray::fromStdString(sample_report().to_json().dump());
        QTest::newRow("empty") << QByteArray() << "empty file";
        QTest::newRow("truncated") << good.left(good.size() / 2) << "truncated";
        QTest::newRow("garbage") << QByteArray("\x7f"
                                               "ELF\x01\x02garbage")
                                 << "malformed JSON";
        QTest::newRow("not an object") << QByteArray("[1, 2, 3]") << "expected a JSON object";
        QTest::newRow("wrong format")
            << QByteArray(R"({"format": "other", "format_version": 1})") << "report.format";
        QTest::newRow("future version")
            << QByteArray(
                   R"({"format": "switchyard-profile-report", "format_version": 99, "context": {}, "rows": []})")
            << "newer";
        QTest::newRow("rows not array")
            << QByteArray(
                   R"({"format": "switchyard-profile-report", "format_version": 1, "context": {}, "rows": 5})")
            << "report.rows";
        QByteArray deep(100000, '[');
        QTest::newRow("deep nesting") << deep << "nested deeper";
        QByteArray deep_string = "{\"a\": \"" + QByteArray(1000, '[') + "\"}";
        QTest::newRow("brackets in a string are not nesting") << deep_string << "report.format";
        auto bad_stat = sample_report().to_json();
        bad_stat["rows"][0]["stats"]["median"] = "fast";
        QTest::newRow("wrong type")
            << QByteArray::fromStdString(bad_stat.dump()) << "rows[0].stats.median";
        auto bad_status = sample_report().to_json();
        bad_status["rows"][1]["status"] = "exploded";
        QTest::newRow("unknown status")
            << QByteArray::fromStdString(bad_status.dump()) << "rows[1].status";
        auto huge = sample_report().to_json();
        huge["rows"][0]["launches_per_sample"] = 1e300;
        QTest::newRow("huge number")
            << QByteArray::fromStdString(huge.dump()) << "launches_per_sample";
        auto neg = sample_report().to_json();
        neg["rows"][0]["samples"][1] = -1.0;
        QTest::newRow("negative sample")
            << QByteArray::fromStdString(neg.dump()) << "rows[0].samples[1]";
        auto dims = sample_report().to_json();
        dims["rows"][0]["dims"] = {1, 2};
        QTest::newRow("bad dims") << QByteArray::fromStdString(dims.dump()) << "rows[0].dims";
        auto missing = sample_report().to_json();
        missing["rows"][0].erase("op");
        QTest::newRow("missing key")
            << QByteArray::fromStdString(missing.dump()) << "rows[0].op: missing";
        QTest::newRow("invalid utf8")
            << QByteArray("{\"format\": \"\xff\xfe\"}") << "malformed JSON";
    }
    void badInputs() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        try {
            Report::parse(std::string_view(text.constData(), std::size_t(text.size())), "x.json");
            QFAIL("accepted a bad report");
        } catch (const ReportError& e) {
            QVERIFY2(std::string(e.what()).find(message.toStdString()) != std::string::npos,
                     e.what());
            QVERIFY(std::string(e.what()).rfind("x.json", 0) == 0);
        }
    }

    void missingFile() {
        QVERIFY_THROWS_EXCEPTION(ReportError, Report::load("/nonexistent/dir/r.json"));
    }

    // Every prefix of a valid report is rejected cleanly (a crash would end the test).
    void everyTruncationIsAnError() {
        const auto text = sample_report().to_json().dump();
        for (std::size_t n = 0; n < text.size(); n += 7) {
            bool threw = false;
            try {
                Report::parse(std::string_view(text).substr(0, n));
            } catch (const ReportError&) {
                threw = true;
            }
            QVERIFY(threw);
        }
    }

    // Random byte flips in a report file: each one loads as a report that writes back the
    // same, or fails with a ReportError that names the file and says why; nothing else
    // (no other exception, no crash). Flips that break the JSON must be among the errors,
    // and flips inside strings still load, so a reader that refuses everything fails too.
    void mutationsNeverCrash() {
        const auto text = sample_report().to_json().dump();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("mutated.json").toStdString();
        std::uint64_t state = 42;
        int loaded = 0, errors = 0;
        const int runs = 2000;
        for (int i = 0; i < runs; ++i) {
            std::string t = text;
            for (int k = 0; k < 3; ++k) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                t[(state >> 33) % t.size()] = char((state >> 17) & 0xff);
            }
            std::ofstream(path, std::ios::binary | std::ios::trunc) << t;
            const QByteArray what = "mutation " + QByteArray::number(i);
            try {
                const auto report = Report::load(path);
                const auto again = Report::parse(report.to_json().dump());
                QVERIFY2(again.to_json() == report.to_json(), what);
                ++loaded;
            } catch (const ReportError& e) {
                const std::string message = e.what();
                QVERIFY2(message.rfind(path + ": ", 0) == 0,
                         what + ": the error does not name the file: " + e.what());
                QVERIFY2(message.size() > path.size() + 2, what + ": the error says nothing");
                ++errors;
            } catch (const std::exception& e) {
                QFAIL((what + ": not a ReportError: " + e.what()).constData());
            }
        }
        qInfo("%d mutated files loaded, %d refused with an error", loaded, errors);
        QCOMPARE(loaded + errors, runs);
        QVERIFY2(errors > runs / 10, "most byte flips break the JSON: they must be refused");
        QVERIFY2(loaded > 0, "flips inside strings leave a valid report: it must load");
    }
    // The reader names the key path of the first problem, nested types included.
    void keyPaths_data() {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("sample") << "/rows/3/samples/2"
                                << "\"fast\""
                                << "rows[3].samples[2]: expected a number, got string";
        QTest::newRow("stats") << "/rows/2/stats/median"
                               << "true"
                               << "rows[2].stats.median: expected a number, got boolean";
        QTest::newRow("parity") << "/rows/1/parity/mismatches"
                                << "\"x\""
                                << "rows[1].parity.mismatches: expected an integer";
        QTest::newRow("status") << "/rows/0/status"
                                << "\"exploded\""
                                << "rows[0].status: unknown status 'exploded'";
        QTest::newRow("timer") << "/rows/3/timer"
                               << "7"
                               << "rows[3].timer: expected a string, got integer";
        QTest::newRow("dims") << "/rows/3/dims/1"
                              << "-1"
                              << "rows[3].dims[1]: expected a non-negative integer";
        QTest::newRow("context") << "/context"
                                 << "[]"
                                 << "report.context: expected an object, got array";
    }
    void keyPaths() {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        QFETCH(QString, message);
        auto report = sample_report();
        report.rows.push_back(report.rows[0]);
        report.rows.push_back(report.rows[0]);
        auto j = report.to_json();
        j[nlohmann::json::json_pointer(pointer.toStdString())] =
            nlohmann::json::parse(value.toStdString());
        try {
            Report::from_json(j);
            QFAIL("accepted a bad report");
        } catch (const ReportError& e) {
            QCOMPARE(QString::fromUtf8(e.what()).left(message.size()), message);
        }
    }

    // A version 4 report's context, as the profiler wrote it field by field, reads into the
    // typed record: every part a reader uses, the keys this core does not know kept and
    // written back, a device entry its reader refuses and a part of the wrong type said,
    // never thrown (a report is judged by its rows).
    void olderContextsReadTyped() {
        nlohmann::json peaks = CpuPeaks{}.to_json();
        peaks["pinned_cpu"] = 1;
        peaks["spread"] = {{"dram.triad.1t", 0.04}};
        const nlohmann::json context = {
            {"switchyard", {{"version", "0.1.0"}, {"git_hash", "abc123"}}},
            {"date", "2026-11-30T10:00:00Z"},
            {"host", {{"hostname", "bench-7"}, {"memory_bytes", 25769803776LL}}},
            {"cpu", {{"brand", "Test CPU"}, {"logical_cpus", 16}, {"best_level", "x86-64-v3"}}},
            {"cpu_peaks", peaks},
            {"clock", {{"method", "rdtsc"}, {"per_sample", true}, {"chain_ghz", 3.1}}},
            {"devices", nlohmann::json::array(
                            {{{"id", "cpu"}, {"kind", "cpu"}, {"name", "Test"}}, {{"id", 7}}})},
            {"fingerprint",
             {{"machine", {{"cpu", {{"microcode", "0xa101144"}}}}}, {"machine_id", "5f0c"}}},
            {"settings", {{"max_noise", 0.07}}},
            {"warnings", {"the system is busy"}},
            {"repeat", 3},
            {"containment", "subreaper"},
            {"ceilings_from", {{"report", "a.json"}, {"date", "2026-11-29T09:00:00Z"}}},
            {"future_key", {{"x", 1}}}};
        const nlohmann::json report = {{"format", "switchyard.report"},
                                       {"format_version", 4},
                                       {"context", context},
                                       {"rows", nlohmann::json::array()}};
        const auto r = Report::from_json(report);
        const RunContext& c = r.context;
        QCOMPARE(c.host.hostname, std::string("bench-7"));
        QCOMPARE(c.cpu.brand, std::string("Test CPU"));
        QCOMPARE(c.cpu.logical_cpus, 16u);
        QCOMPARE(c.pinned_cpu(), 1);
        QVERIFY(c.cpu_peaks);
        QCOMPARE(c.cpu_peaks->spread.at("dram.triad.1t"), 0.04);
        QCOMPARE(c.clock.chain_ghz, 3.1);
        QCOMPARE(c.fingerprint.machine_id, std::string("5f0c"));
        QCOMPARE(c.fingerprint.facts().microcode, std::string("0xa101144"));
        QCOMPARE(c.settings.max_noise, 0.07);
        QCOMPARE(c.warnings, std::vector<std::string>{"the system is busy"});
        QCOMPARE(c.repeat, 3);
        QCOMPARE(c.containment, std::string("subreaper"));
        QVERIFY(c.ceilings_from);
        QCOMPARE(c.ceilings_from->report, std::string("a.json"));
        QCOMPARE(c.devices.size(), std::size_t(1));
        QCOMPARE(c.read_warnings.size(), std::size_t(1));
        QVERIFY2(c.read_warnings[0].rfind("context.devices[1] left out", 0) == 0,
                 c.read_warnings[0].c_str());
        // Written back: the unknown key as it was, the typed parts as read.
        const auto back = r.to_json();
        QCOMPARE(back.at("format_version").get<int>(), Report::kFormatVersion);
        QCOMPARE(back["context"]["future_key"], context["future_key"]);
        QCOMPARE(back["context"]["host"]["hostname"], context["host"]["hostname"]);
        QCOMPARE(RunContext::from_json(back["context"]).to_json(), back["context"]);
        // A part of the wrong type is said, not thrown.
        auto bad = context;
        bad["host"] = "bench-7";
        bad["cpu_peaks"]["triad_gbs"] = "fast";
        const auto b = RunContext::from_json(bad);
        QVERIFY(b.host.hostname.empty());
        QVERIFY(!b.cpu_peaks);
        QCOMPARE(b.read_warnings.size(), std::size_t(3));
        QVERIFY2(b.read_warnings[0].find("context.host left out: expected an object") == 0,
                 b.read_warnings[0].c_str());
        QVERIFY2(b.read_warnings[1].rfind("context.cpu_peaks", 0) == 0, b.read_warnings[1].c_str());
    }

    // The one CSV writer (report rows, matrix --csv, the GUI's export): RFC 4180 quoting,
    // and a malformed byte written visibly, so the file stays valid UTF-8.
    void csvFields() {
        QCOMPARE(csv_field("plain"), std::string("plain"));
        QCOMPARE(csv_field("a,b"), std::string("\"a,b\""));
        QCOMPARE(csv_field("say \"hi\""), std::string("\"say \"\"hi\"\"\""));
        QCOMPARE(csv_field("two\nlines"), std::string("\"two\nlines\""));
        QCOMPARE(csv_field("cr\r"), std::string("\"cr\r\""));
        QCOMPARE(csv_field(std::string("bad \xff byte")), std::string("bad \\xff byte"));
        QCOMPARE(csv_line({"a", "b,c", ""}), std::string("a,\"b,c\",\n"));
        QCOMPARE(csv_line({}), std::string("\n"));
    }

    void formatKeys() {
        const auto j = sample_report().to_json();
        QCOMPARE(j.at("format").get<std::string>(), std::string("switchyard.report"));
        QCOMPARE(j.at("format_version").get<int>(), 5);
        QVERIFY(j.at("dispatch").is_array());
        QVERIFY(!j.at("rows")[0].contains("bandwidth_fraction"));
        const auto c = Comparison::of(sample_report(), sample_report()).to_json();
        QCOMPARE(c.at("format").get<std::string>(), std::string("switchyard.compare"));
        QCOMPARE(c.at("format_version").get<int>(), 2);
    }

    // Dispatch regret: the resolved cell against the fastest that passed parity.
    void dispatchRegretIsFound() {
        std::vector<ProfileRow> rows = {
            timed_row(0, "generic", "reference", 10e-3),
            timed_row(1, "x86-64-v4", "default", 2.7e-3, 20, true),
            timed_row(2, "x86-64-v3", "threaded", 1.0e-3),
            timed_row(3, "x86-64-v3", "default", 2.0e-3),
        };
        auto broken = timed_row(4, "x86-64-v4", "threaded", 0.1e-3); // fast but wrong
        broken.status = RowStatus::Fail;
        broken.parity.pass = false;
        rows.push_back(broken);
        const auto findings = dispatch_findings(rows);
        QCOMPARE(findings.size(), std::size_t(1));
        const auto& f = findings[0];
        QCOMPARE(f.verdict, DispatchVerdict::Regret);
        QCOMPARE(f.resolved, std::string("x86-64-v4/default"));
        QCOMPARE(f.fastest, std::string("x86-64-v3/threaded")); // not the FAIL row
        QVERIFY(std::fabs(f.speedup - 2.7) < 0.01);
        QVERIFY(f.p_value < 0.001);
        QCOMPARE(f.threshold, 0.05); // 1 % noise: the 5 % floor applies
        QVERIFY2(f.message().find("dispatch picks x86-64-v4/default; x86-64-v3/threaded (cpu) "
                                  "is 2.70x faster here") != std::string::npos,
                 f.message().c_str());
        const auto back = DispatchFinding::from_json(f.to_json());
        QCOMPARE(back.to_json(), f.to_json());
    }

    // A cell that passes a looser tolerance of its own (cuBLAS TF32 gemm) is still a regret
    // when it is faster, and the finding says what is fastest at the pick's tolerance (on the
    // H200: TF32 8.22x the own sm_90 kernel, cuBLAS fp32 1.26x).
    void dispatchSaysWhenTheFastestPassesALooserTolerance() {
        auto row = [](std::int64_t index, const std::string& arch, const std::string& variant,
                      double median, double atol, bool resolved = false) {
            auto r = timed_row(index, arch, variant, median, 20, resolved, "4096x4096x4096");
            r.spec.op = "gemm";
            r.spec.device = r.spec.device_kind = "cuda";
            r.spec.backend = variant.starts_with("cublas") ? "cuda-cublas" : "cuda";
            r.parity.tolerance = {atol, atol == 5e-3 ? 1e-3 : 1e-4};
            return r;
        };
        std::vector<ProfileRow> rows = {row(0, "sm_90", "default", 3.43e-3, 4.1e-3, true),
                                        row(1, "generic", "cublas", 2.72e-3, 4.1e-3),
                                        row(2, "sm_80", "cublas_tf32", 0.417e-3, 5e-3),
                                        row(3, "generic", "default", 22.0e-3, 4.1e-3)};
        auto f = dispatch_findings(rows)[0];
        QCOMPARE(f.verdict, DispatchVerdict::Regret);
        QCOMPARE(f.fastest, std::string("sm_80/cublas_tf32"));
        QVERIFY(!f.same_threads);
        QVERIFY(f.same_tolerance.has_value());
        QCOMPARE(f.same_tolerance->fastest, std::string("generic/cublas"));
        QCOMPARE(f.same_tolerance->verdict, DispatchVerdict::Regret);
        QVERIFY2(f.message().find("sm_80/cublas_tf32 (cuda-cublas) is 8.23x faster here; it "
                                  "passed a looser tolerance than the pick (its own); at the "
                                  "pick's tolerance, generic/cublas (cuda-cublas) is 1.26x "
                                  "faster") != std::string::npos,
                 f.message().c_str());
        const auto back = DispatchFinding::from_json(f.to_json());
        QCOMPARE(back.same_tolerance->fastest, std::string("generic/cublas"));
        QCOMPARE(back.to_json(), f.to_json());

        // Without cuBLAS fp32 the pick is the fastest at its tolerance.
        rows.erase(rows.begin() + 1);
        f = dispatch_findings(rows)[0];
        QCOMPARE(f.same_tolerance->fastest, std::string("sm_90/default"));
        QVERIFY2(f.message().ends_with("at the pick's tolerance the pick is the fastest"),
                 f.message().c_str());
        // The same tolerances throughout: no such finding.
        rows[1].parity.tolerance = rows[0].parity.tolerance;
        QVERIFY(!dispatch_findings(rows)[0].same_tolerance);
    }

    // The fastest cell on more threads than the pick (threaded, OpenBLAS on every core) is
    // still a regret, and the finding says whether the pick is the fastest on its own threads
    // or a cell on them beats it too.
    void dispatchSaysWhenTheFastestRunsMoreThreads() {
        auto row = [](std::int64_t index, const std::string& arch, const std::string& variant,
                      double median, std::int64_t threads, bool resolved = false) {
            auto r = timed_row(index, arch, variant, median, 20, resolved);
            r.spec.threads = threads;
            return r;
        };
        std::vector<ProfileRow> rows = {row(0, "generic", "reference", 10e-3, 1),
                                        row(1, "x86-64-v3", "default", 2.0e-3, 1, true),
                                        row(2, "x86-64-v3", "threaded", 1.0e-3, 2),
                                        row(3, "generic", "default", 3.0e-3, 1)};
        auto findings = dispatch_findings(rows);
        QCOMPARE(findings.size(), std::size_t(1));
        auto f = findings[0];
        QCOMPARE(f.verdict, DispatchVerdict::Regret);
        QCOMPARE(f.fastest, std::string("x86-64-v3/threaded"));
        QCOMPARE(f.resolved_threads, std::int64_t(1));
        QCOMPARE(f.fastest_threads, std::int64_t(2));
        QVERIFY(f.same_threads.has_value());
        QCOMPARE(f.same_threads->fastest, std::string("x86-64-v3/default"));
        QCOMPARE(f.same_threads->verdict, DispatchVerdict::Ok);
        QVERIFY2(f.message().find("dispatch picks x86-64-v3/default (1 thread); "
                                  "x86-64-v3/threaded (cpu, 2 threads) is 2.00x faster here; "
                                  "at 1 thread the pick is the fastest") != std::string::npos,
                 f.message().c_str());
        QCOMPARE(DispatchFinding::from_json(f.to_json()).to_json(), f.to_json());

        // A one-thread cell faster than the pick: a regret on the pick's threads too.
        rows.push_back(row(4, "x86-64-v4", "default", 1.5e-3, 1));
        f = dispatch_findings(rows)[0];
        QCOMPARE(f.fastest, std::string("x86-64-v3/threaded"));
        QCOMPARE(f.same_threads->fastest, std::string("x86-64-v4/default"));
        QCOMPARE(f.same_threads->verdict, DispatchVerdict::Regret);
        QVERIFY(std::fabs(f.same_threads->speedup - 2.0 / 1.5) < 0.01);
        QVERIFY2(f.message().find("; at 1 thread, x86-64-v4/default (cpu) is 1.33x faster") !=
                     std::string::npos,
                 f.message().c_str());
        const auto back = DispatchFinding::from_json(f.to_json());
        QCOMPARE(back.same_threads->verdict, DispatchVerdict::Regret);
        QCOMPARE(back.to_json(), f.to_json());

        // Within the threshold on more threads: ok, and the message still says both.
        rows[2] = row(2, "x86-64-v3", "threaded", 1.95e-3, 2);
        rows[4] = row(4, "x86-64-v4", "default", 2.5e-3, 1);
        f = dispatch_findings(rows)[0];
        QCOMPARE(f.verdict, DispatchVerdict::Ok);
        QCOMPARE(f.fastest, std::string("x86-64-v3/threaded"));
        QVERIFY2(f.message().find("dispatch picks x86-64-v3/default (1 thread); the fastest, "
                                  "x86-64-v3/threaded (2 threads), is within 5 % (1.03x); at 1 "
                                  "thread the pick is the fastest") != std::string::npos,
                 f.message().c_str());
        // The pick on more threads than the fastest: the same, the other way round.
        rows[1].spec.threads = 2;
        rows[2] = row(2, "x86-64-v3", "threaded", 4.0e-3, 2);
        rows[4] = row(4, "x86-64-v4", "default", 1.0e-3, 1);
        f = dispatch_findings(rows)[0];
        QCOMPARE(f.verdict, DispatchVerdict::Regret);
        QCOMPARE(f.resolved_threads, std::int64_t(2));
        QCOMPARE(f.fastest_threads, std::int64_t(1));
        QCOMPARE(f.same_threads->fastest, std::string("x86-64-v3/default"));
        QVERIFY2(f.message().find("; at 2 threads the pick is the fastest") != std::string::npos,
                 f.message().c_str());
        rows[1].spec.threads = 1;
        rows[2] = row(2, "x86-64-v3", "threaded", 1.0e-3, 2);
        rows[4] = row(4, "x86-64-v4", "default", 1.5e-3, 1);

        // Threads the cells do not state (older reports, non-CPU cells): no such finding.
        for (auto& r : rows)
            r.spec.threads = 0;
        f = dispatch_findings(rows)[0];
        QVERIFY(!f.same_threads);
        QVERIFY(!f.to_json().contains("threads"));
        QVERIFY2(f.message().find("dispatch picks x86-64-v3/default; x86-64-v3/threaded (cpu) is "
                                  "2.00x faster here") != std::string::npos,
                 f.message().c_str());

        // A row's threads travel through its JSON, absent when unstated.
        QCOMPARE(RowSpec::from_json(rows[2].spec.to_json()).threads, std::int64_t(0));
        QVERIFY(!rows[2].spec.to_json().contains("threads"));
        rows[2].spec.threads = 16;
        QCOMPARE(rows[2].spec.to_json().at("threads").get<std::int64_t>(), std::int64_t(16));
        QCOMPARE(RowSpec::from_json(rows[2].spec.to_json()).threads, std::int64_t(16));

        // Malformed threads are refused with their path.
        auto j = findings[0].to_json();
        j["threads"] = 3;
        try {
            DispatchFinding::from_json(j);
            QFAIL("accepted threads that are no object");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("threads") != std::string::npos, e.what());
        }
        j = findings[0].to_json();
        j["same_threads"]["verdict"] = "maybe";
        try {
            DispatchFinding::from_json(j);
            QFAIL("accepted a bad same_threads verdict");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("same_threads.verdict") != std::string::npos,
                     e.what());
        }
    }

    // A cell that runs another's code on this device (OpenCL's default runs row8 on PoCL):
    // a gap between the two, however clear, is the run's noise, never a regret; a third
    // cell really faster still is.
    void dispatchSameCodeIsNoiseNotRegret() {
        auto resolved = timed_row(1, "generic", "default", 1.4e-3, 20, true);
        resolved.spec.runs_as = "generic/row8";
        std::vector<ProfileRow> rows = {timed_row(0, "generic", "reference", 10e-3), resolved,
                                        timed_row(2, "generic", "row8", 1.0e-3),
                                        timed_row(3, "generic", "group", 1.2e-3)};
        auto findings = dispatch_findings(rows);
        QCOMPARE(findings.size(), std::size_t(1));
        QCOMPARE(findings[0].verdict, DispatchVerdict::Ok);
        QVERIFY(findings[0].same_code);
        QVERIFY(std::fabs(findings[0].speedup - 1.4) < 0.01);
        QVERIFY2(findings[0].message().find("runs generic/row8's code on this device; the 1.40x "
                                            "between the two is this run's noise") !=
                     std::string::npos,
                 findings[0].message().c_str());
        const auto back = DispatchFinding::from_json(findings[0].to_json());
        QVERIFY(back.same_code);
        QCOMPARE(back.to_json(), findings[0].to_json());
        // The row keeps what its cell runs as, through the report's JSON.
        QCOMPARE(RowSpec::from_json(resolved.spec.to_json()).runs_as, std::string("generic/row8"));
        QVERIFY(!timed_row(4, "generic", "row8", 1e-3).spec.to_json().contains("runs_as"));

        // Without runs_as the same rows are a regret ...
        rows[1].spec.runs_as.clear();
        findings = dispatch_findings(rows);
        QCOMPARE(findings[0].verdict, DispatchVerdict::Regret);
        QVERIFY(!findings[0].same_code);
        // ... and with it, a third cell clearly faster than both still is.
        rows[1].spec.runs_as = "generic/row8";
        rows[3] = timed_row(3, "generic", "group", 0.5e-3);
        findings = dispatch_findings(rows);
        QCOMPARE(findings[0].verdict, DispatchVerdict::Regret);
        QCOMPARE(findings[0].fastest, std::string("generic/group"));
        // A third cell barely faster than the twin is judged against the twin, the resolved
        // code's better measurement: 2 % is no regret, though it is 1.43x the slow default.
        rows[3] = timed_row(3, "generic", "group", 0.98e-3);
        findings = dispatch_findings(rows);
        QCOMPARE(findings[0].fastest, std::string("generic/group"));
        QCOMPARE(findings[0].verdict, DispatchVerdict::Ok);
        QVERIFY(!findings[0].same_code);
    }

    // A repeated run is judged by its runs: pooled samples of runs 10 % apart read noisy
    // (every sample mixes the runs), the runs themselves are steady.
    void dispatchJudgesRunsOfARepeatedRun() {
        auto repeated = [](std::int64_t index, const std::string& arch, double median,
                           bool resolved, std::vector<double> spread) {
            std::vector<ProfileRow> runs;
            for (const double f : spread)
                runs.push_back(timed_row(index, arch, "default", median * f, 20, resolved));
            return merge_runs(std::move(runs), 2000);
        };
        const std::vector<double> drift{1.0, 1.1, 0.95, 1.05, 1.0};
        std::vector<ProfileRow> rows = {timed_row(0, "generic", "reference", 10e-3),
                                        repeated(1, "x86-64-v4", 2.0e-3, true, drift),
                                        repeated(2, "x86-64-v3", 1.6e-3, false, drift)};
        QCOMPARE(rows[1].runs.size(), std::size_t(5));
        const auto findings = dispatch_findings(rows);
        QCOMPARE(findings.size(), std::size_t(1));
        // Runs drifting together: the spread between runs is ~6 %, the gap 25 %.
        QCOMPARE(findings[0].verdict, DispatchVerdict::Regret);
        QVERIFY(findings[0].threshold < 0.2);
        QVERIFY(findings[0].p_value < 0.01);
    }

    void dispatchWithinNoiseIsOk_data() {
        QTest::addColumn<double>("other");
        QTest::addColumn<int>("samples");
        QTest::addColumn<QString>("verdict");
        QTest::newRow("resolved is fastest") << 1.2e-3 << 20 << "ok";
        QTest::newRow("3 % faster: under the 5 % floor") << 0.97e-3 << 20 << "ok";
        QTest::newRow("identical") << 1.0e-3 << 20 << "ok";
        QTest::newRow("2x faster, 2 samples each: cannot tell") << 0.5e-3 << 2 << "uncertain";
    }
    void dispatchWithinNoiseIsOk() {
        QFETCH(double, other);
        QFETCH(int, samples);
        QFETCH(QString, verdict);
        const std::vector<ProfileRow> rows = {
            timed_row(0, "x86-64-v4", "default", 1.0e-3, samples, true),
            timed_row(1, "x86-64-v3", "default", other, samples)};
        const auto findings = dispatch_findings(rows);
        QCOMPARE(findings.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(std::string(to_string(findings[0].verdict))), verdict);
    }

    void noisyRowsRaiseTheThreshold() {
        // 20 % noise on both rows: a 30 % difference is inside 2 x the noise.
        auto a = timed_row(0, "x86-64-v4", "default", 1.3e-3, 20, true);
        auto b = timed_row(1, "x86-64-v3", "default", 1.0e-3);
        a.stats.rel_noise = 0.2;
        b.stats.rel_noise = 0.2;
        const auto findings = dispatch_findings({a, b});
        QCOMPARE(findings.size(), std::size_t(1));
        QCOMPARE(findings[0].threshold, 0.4);
        QCOMPARE(findings[0].verdict, DispatchVerdict::Ok);
    }

    void defaultRunHasNoFindings() {
        // One cell per (op, size, device) and the reference: nothing to compare with.
        const std::vector<ProfileRow> rows = {timed_row(0, "generic", "reference", 5e-3),
                                              timed_row(1, "x86-64-v4", "default", 1e-3, 20, true)};
        QVERIFY(dispatch_findings(rows).empty());
        QVERIFY(dispatch_findings({rows[1]}).empty());
    }

    void referenceSpeedups() {
        std::vector<ProfileRow> rows = {
            timed_row(0, "generic", "reference", 8e-3),
            timed_row(1, "x86-64-v4", "default", 2e-3, 20, true),
            timed_row(2, "x86-64-v4", "default", 1e-3, 20, true, "4096"), // no reference
        };
        apply_reference_speedups(rows);
        QVERIFY(std::fabs(rows[0].reference_speedup - 1.0) < 1e-12);
        QVERIFY(std::fabs(rows[1].reference_speedup - 4.0) < 1e-9);
        QCOMPARE(rows[2].reference_speedup, 0.0);
        Report r;
        r.rows = rows;
        r.annotate();
        const auto j = r.to_json();
        QVERIFY(j["rows"][1].contains("speedup_vs_reference"));
        QVERIFY(!j["rows"][2].contains("speedup_vs_reference"));
        QCOMPARE(Report::from_json(j).to_json(), j);
        // A row with a negative speedup is refused with its key.
        auto bad = j;
        bad["rows"][1]["speedup_vs_reference"] = -1;
        try {
            Report::from_json(bad);
            QFAIL("a negative speedup was accepted");
        } catch (const ReportError& e) {
            QVERIFY2(std::string(e.what()).find("speedup_vs_reference") != std::string::npos,
                     e.what());
        }
    }

    // Version 2 reports: the headline-peak fractions are ignored, speedups derived.
    void readsVersion2() {
        Report r;
        r.rows = {timed_row(0, "generic", "reference", 8e-3),
                  timed_row(1, "x86-64-v3", "default", 2e-3)};
        auto j = r.to_json();
        j["format_version"] = 2;
        j.erase("dispatch");
        for (auto& row : j["rows"]) {
            row["bandwidth_fraction"] = 3.6;
            row["flops_fraction"] = 0.1;
            row.erase("speedup_vs_reference");
        }
        const auto back = Report::from_json(j);
        QVERIFY(back.dispatch.empty());
        QVERIFY(std::fabs(back.rows[1].reference_speedup - 4.0) < 1e-9);
        QVERIFY(!back.to_json()["rows"][1].contains("bandwidth_fraction"));
    }

    // Version 1 reports ("switchyard-profile-report") are still read.
    void readsVersion1() {
        auto j = sample_report().to_json();
        j["format"] = "switchyard-profile-report";
        j["format_version"] = 1;
        const auto back = Report::from_json(j);
        QCOMPARE(back.rows.size(), sample_report().rows.size());
    }

    // The enums keep the JSON ids the reports always had.
    void enumRoundTrip_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("id");
        QTest::newRow("ok") << int(RowStatus::Ok) << "ok";
        QTest::newRow("fail") << int(RowStatus::Fail) << "fail";
        QTest::newRow("error") << int(RowStatus::Error) << "error";
        QTest::newRow("crashed") << int(RowStatus::Crashed) << "crashed";
        QTest::newRow("timed_out") << int(RowStatus::TimedOut) << "timed_out";
    }
    void enumRoundTrip() {
        QFETCH(int, status);
        QFETCH(QString, id);
        const auto s = RowStatus(status);
        QCOMPARE(QString::fromStdString(std::string(to_string(s))), id);
        QVERIFY(row_status_from_string(id.toStdString()) == s);
        QCOMPARE(nlohmann::json(s), nlohmann::json(id.toStdString()));
        QVERIFY(nlohmann::json(id.toStdString()).get<RowStatus>() == s);
        auto row = sample_report().rows[0];
        row.status = s;
        QVERIFY(ProfileRow::from_json(row.to_json()).status == s);
        QCOMPARE(row.to_json().at("status").get<std::string>(), id.toStdString());
    }
    void timerRoundTrip() {
        for (const auto t : {Timer::Host, Timer::Device}) {
            auto row = sample_report().rows[0];
            row.timer = t;
            QCOMPARE(row.to_json().at("timer").get<std::string>(), std::string(to_string(t)));
            QVERIFY(ProfileRow::from_json(row.to_json()).timer == t);
        }
        QCOMPARE(std::string(to_string(Timer::Host)), std::string("host"));
        QCOMPARE(std::string(to_string(Timer::Device)), std::string("device"));
        QVERIFY(!timer_from_string("sundial"));
        QVERIFY(!row_status_from_string("exploded"));
    }

    // Every protocol message parses back to what was built, through its text line.
    void protocolRoundTrip() {
        using namespace protocol;
        const auto report = sample_report();
        auto round = [](const nlohmann::json& m) -> Message {
            const auto line = to_line(m);
            if (line.empty() || line.back() != '\n')
                throw std::runtime_error("a protocol line must end with a newline: " + line);
            auto parsed = parse(nlohmann::json::parse(line));
            if (!parsed)
                throw std::runtime_error("not a protocol message: " + line);
            return *parsed;
        };
        for (const auto e : {Event::Context, Event::Plan, Event::RowStart, Event::Progress,
                             Event::Row, Event::Done, Event::Fatal, Event::Control, Event::Turn})
            QVERIFY(event_from_string(to_string(e)) == e);
        QCOMPARE(std::string(to_string(Event::RowStart)), std::string("row_start"));

        CpuPeaks peaks;
        peaks.triad_gbs = 1.5;
        auto m = round(context_message(&report.context, &peaks));
        QVERIFY(m.event == Event::Context);
        QVERIFY(m.context);
        QCOMPARE(m.context->to_json(), report.context.to_json());
        QVERIFY(m.peaks);
        QCOMPARE(m.peaks->triad_gbs, 1.5);
        // The profile worker's request, typed both ways.
        ProfileRequest request;
        request.settings.ops = {"gemm"};
        request.start = 3;
        request.peaks = peaks;
        const auto back = profile_request_from_json(nlohmann::json::parse(to_json(request).dump()));
        QCOMPARE(back.settings.to_json(), request.settings.to_json());
        QCOMPARE(back.start, std::int64_t(3));
        QVERIFY(back.peaks);
        QCOMPARE(back.peaks->triad_gbs, 1.5);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 profile_request_from_json(nlohmann::json{{"start", 1}}));
        QVERIFY(!round(context_message(nullptr)).context);

        std::vector<RowSpec> plan = {report.rows[0].spec, report.rows[1].spec};
        m = round(plan_message(plan));
        QVERIFY(m.event == Event::Plan);
        QCOMPARE(m.plan.size(), std::size_t(2));
        QCOMPARE(m.plan[1].to_json(), plan[1].to_json());

        m = round(row_start_message(7));
        QVERIFY(m.event == Event::RowStart);
        QCOMPARE(m.index, std::int64_t(7));

        m = round(progress_message(3, "warmup", 12));
        QVERIFY(m.event == Event::Progress);
        QCOMPARE(m.index, std::int64_t(3));
        QCOMPARE(m.phase, std::string("warmup"));
        QCOMPARE(m.samples, std::int64_t(12));

        m = round(row_message(report.rows[1]));
        QVERIFY(m.event == Event::Row);
        QCOMPARE(m.row.to_json(), report.rows[1].to_json());

        m = round(done_message());
        QVERIFY(m.event == Event::Done && !m.rows_total);
        m = round(done_message(5, 2));
        QVERIFY(m.rows_total == 5 && m.not_ok == 2);

        m = round(fatal_message("bad op", true));
        QVERIFY(m.event == Event::Fatal && m.usage);
        QCOMPARE(m.message, std::string("bad op"));

        // An A/B side's request, its row command and its turns in lockstep.
        request.shared_buffers = true;
        request.shared_at = std::uint64_t(1) << 45;
        const auto side = profile_request_from_json(nlohmann::json::parse(to_json(request).dump()));
        QVERIFY(side.shared_buffers);
        QCOMPARE(side.shared_at, std::uint64_t(1) << 45);
        QVERIFY(!back.shared_buffers && back.shared_at == 0);
        const auto slice = slice_command_from_json(
            nlohmann::json::parse(to_json(SliceCommand{4, 1, true, 99, 0.002}).dump()));
        QCOMPARE(slice.index, std::int64_t(4));
        QCOMPARE(slice.placement, std::int64_t(99));
        QCOMPARE(slice.chunk_s, 0.002);
        QCOMPARE(slice_command_from_json(nlohmann::json{{"index", 0}}).chunk_s, 0.0);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 slice_command_from_json({{"index", 0}, {"chunk_s", -1}}));
        m = round(turn_message(4, 3.5e-6, 17, false));
        QVERIFY(m.event == Event::Turn && !m.last);
        QCOMPARE(m.index, std::int64_t(4));
        QCOMPARE(m.median, 3.5e-6);
        QCOMPARE(m.samples, std::int64_t(17));
        QVERIFY(round(turn_message(4, 1e-3, 1, true)).last);
        QVERIFY(turn_command_from_json(turn_command(true)));
        QVERIFY(!turn_command_from_json(turn_command(false)));
        try {
            turn_command_from_json({{"turn", "later"}});
            QFAIL("took a turn command it does not know");
        } catch (const std::runtime_error& e) {
            QVERIFY2(std::string(e.what()).find("command.turn") != std::string::npos, e.what());
        }

        QVERIFY(!parse(nlohmann::json{{"event", "gossip"}}));
        QVERIFY(!parse(nlohmann::json::array()));
        auto bad = row_message(report.rows[0]);
        bad["row"]["samples"][0] = "x";
        try {
            parse(bad);
            QFAIL("accepted a bad row");
        } catch (const std::runtime_error& e) {
            QVERIFY2(std::string(e.what()).rfind("row.samples[0]: expected a number, got string",
                                                 0) == 0,
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
