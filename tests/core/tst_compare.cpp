// SPDX-License-Identifier: MIT
// compare: Welch's t test, Benjamini-Hochberg, N-way verdicts on synthetic runs with known
// effects (the false-discovery control), fingerprints, pairing and unmatched rows.
#include <QtTest>

#include <switchyard/report/compare.h>
#include <switchyard/tuning/calibration.h>

#include <QTemporaryDir>

#include <cmath>
#include <map>

using namespace switchyard;

namespace {

std::vector<double> samples(double center, double spread, int n, std::uint64_t seed) {
    std::vector<double> v;
    std::uint64_t s = seed;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = double(s >> 11) / double(1ULL << 53); // [0, 1)
        v.push_back(center * (1.0 + spread * (u - 0.5)));
    }
    return v;
}

ProfileRow row(const std::string& op, const std::string& variant, std::vector<double> s,
               const std::string& status = "ok") {
    ProfileRow r;
    r.spec.op = op;
    r.spec.size = "1024";
    r.spec.device = "cpu";
    r.spec.arch = "generic";
    r.spec.variant = variant;
    r.spec.backend = "cpu";
    r.status = *row_status_from_string(status);
    r.samples = std::move(s);
    if (!r.samples.empty())
        r.stats = SampleStats::from(r.samples);
    return r;
}

// A report of `rows` rows whose `runs` run medians scatter log-normally by `noise` around
// 1 ms x (1 + effect); each run holds 30 samples within 0.5 % of its median.
Report synthetic(int rows, int runs, double effect, double noise, std::uint64_t seed) {
    Report r;
    std::uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    auto uniform = [&] {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return (double(s >> 11) + 0.5) / double(1ULL << 53);
    };
    auto gaussian = [&] { // Box-Muller
        return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    };
    for (int i = 0; i < rows; ++i) {
        std::vector<ProfileRow> rs;
        for (int k = 0; k < runs; ++k) {
            const double median = 1e-3 * (1 + effect) * std::exp(noise * gaussian());
            auto one = row("op" + std::to_string(i), "default",
                           samples(median, 0.01, 30, s ^ std::uint64_t(k + 1)));
            rs.push_back(std::move(one));
        }
        r.rows.push_back(merge_runs(std::move(rs), 2000));
    }
    return r;
}

// A drift control whose sentinel took these times (microseconds) through the run.
DriftControl control(std::initializer_list<double> us) {
    DriftControl c;
    double at = 0;
    for (const double t : us)
        c.samples.push_back({"pass", at += 1, t * 1e-6});
    return c;
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    // Welch's t test against values scipy.stats.ttest_ind(equal_var=False) gives.
    void welchT() {
        const std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
        QVERIFY(std::fabs(welch_t_p(a, b) - 0.0010528) < 2e-6); // t = -5, df = 8
        const std::vector<double> c{1, 2, 3, 4, 5}, d{2, 4, 6, 8, 10};
        QVERIFY(std::fabs(welch_t_p(c, d) - 0.10753) < 1e-4); // t = -1.897, df = 5.88
        QCOMPARE(welch_t_p(a, a), 1.0);
        QCOMPARE(welch_t_p(std::vector<double>{1, 1}, std::vector<double>{2, 2}), 0.0);
        QCOMPARE(welch_t_p(std::vector<double>{1}, b), 1.0);
    }

    void benjaminiHochberg() {
        const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
        const auto q = benjamini_hochberg(p);
        const std::vector<double> expected{0.02, 0.04, 0.04, 0.02};
        for (std::size_t i = 0; i < p.size(); ++i)
            QVERIFY2(std::fabs(q[i] - expected[i]) < 1e-12, std::to_string(q[i]).c_str());
        QVERIFY(benjamini_hochberg(std::vector<double>{}).empty());
    }

    // N-way verdicts on synthetic runs with known effects: `rows` rows, each with `runs`
    // runs whose medians scatter log-normally by `noise` around 1 ms (A) and 1 ms x
    // (1 + effect) (B).
    void knownEffects_data() {
        QTest::addColumn<double>("effect");
        QTest::addColumn<double>("noise");
        QTest::addColumn<int>("runs");
        // Every row's verdict; "not different": SAME or AMBIGUOUS (a few noisy runs cannot
        // always show sameness), never FASTER or SLOWER; "not same": SLOWER or AMBIGUOUS.
        QTest::addColumn<QString>("expected");
        QTest::newRow("no effect, 0.5 % noise, 5 runs") << 0.0 << 0.005 << 5 << "SAME";
        QTest::newRow("no effect, 1 % noise, 5 runs") << 0.0 << 0.01 << 5 << "not different";
        QTest::newRow("no effect, 1 % noise, 12 runs") << 0.0 << 0.01 << 12 << "SAME";
        QTest::newRow("no effect, 3 % noise, 3 runs") << 0.0 << 0.03 << 3 << "not different";
        QTest::newRow("1 % effect, 0.2 % noise") << 0.01 << 0.002 << 5 << "SAME";
        QTest::newRow("5 % slower, 1 % noise") << 0.05 << 0.01 << 5 << "SLOWER";
        QTest::newRow("5 % faster, 1 % noise") << -0.05 << 0.01 << 5 << "FASTER";
        QTest::newRow("10 % slower, 3 % noise") << 0.10 << 0.03 << 5 << "SLOWER";
        // A 10 % change hidden in 9 % noise between runs: never SAME.
        QTest::newRow("10 % slower, 9 % noise") << 0.10 << 0.09 << 5 << "not same";
        QTest::newRow("noise only, 20 %") << 0.0 << 0.20 << 5 << "AMBIGUOUS";
        QTest::newRow("one run, 60 % slower") << 0.60 << 0.01 << 1 << "SLOWER";
        QTest::newRow("one run, 10 % slower") << 0.10 << 0.01 << 1 << "AMBIGUOUS";
        QTest::newRow("one run, 1 % slower") << 0.01 << 0.002 << 1 << "SAME";
    }
    void knownEffects() {
        QFETCH(double, effect);
        QFETCH(double, noise);
        QFETCH(int, runs);
        QFETCH(QString, expected);
        constexpr int kRows = 24;
        Report a = synthetic(kRows, runs, 0.0, noise, 11);
        Report b = synthetic(kRows, runs, effect, noise, 12);
        const std::vector<Report> both{a, b};
        const auto m = MultiComparison::of(both, {"a", "b"});
        QCOMPARE(m.lines().size(), std::size_t(kRows));
        std::map<std::string, int> counts;
        for (const auto& line : m.lines()) {
            QVERIFY(line.cells[1].judged);
            ++counts[to_string(line.cells[1].result.verdict)];
        }
        QString seen;
        for (const auto& [v, n] : counts)
            seen += QStringLiteral("%1=%2 ").arg(QString::fromStdString(v)).arg(n);
        if (expected == "not different") {
            QVERIFY2(counts["SAME"] + counts["AMBIGUOUS"] == kRows, qPrintable(seen));
        } else if (expected == "not same") {
            QVERIFY2(counts["SAME"] == 0 && counts["FASTER"] == 0, qPrintable(seen));
        } else {
            QVERIFY2(counts[expected.toStdString()] == kRows, qPrintable(seen));
        }
        // The pairwise view agrees with the N-way one.
        const auto c = Comparison::of(a, b);
        for (std::size_t i = 0; i < c.pairs().size(); ++i)
            QCOMPARE(c.pairs()[i].result.verdict, m.lines()[i].cells[1].result.verdict);
    }

    // The false-discovery control: 200 rows without an effect and 10 rows 20 % slower, noisy
    // runs (5 each). The slowed rows are found; of the 200, none is called different.
    void falseDiscoveryControl() {
        Report a = synthetic(210, 5, 0.0, 0.03, 21);
        Report b = synthetic(200, 5, 0.0, 0.03, 22);
        Report slowed = synthetic(210, 5, 0.20, 0.03, 23);
        for (std::size_t i = 200; i < 210; ++i)
            b.rows.push_back(slowed.rows[i]);
        const std::vector<Report> both{a, b};
        const auto m = MultiComparison::of(both, {"a", "b"});
        int false_calls = 0, found = 0;
        for (std::size_t i = 0; i < m.lines().size(); ++i) {
            const auto v = m.lines()[i].cells[1].result.verdict;
            if (i < 200)
                false_calls += v == Verdict::Faster || v == Verdict::Slower;
            else
                found += v == Verdict::Slower;
        }
        // Benjamini-Hochberg bounds the expected share of false calls among the calls (5 % of
        // about 10): one may slip in, as the procedure allows; not more.
        QVERIFY2(false_calls <= 1, std::to_string(false_calls).c_str());
        QCOMPARE(found, 10);
        // Where nothing changed (every row null: two identical runs), no row is called.
        Report x = synthetic(200, 5, 0.0, 0.03, 41), y = synthetic(200, 5, 0.0, 0.03, 42);
        const std::vector<Report> same{x, y};
        const auto n = MultiComparison::of(same, {"x", "y"});
        QCOMPARE(n.count(Verdict::Faster) + n.count(Verdict::Slower), std::size_t(0));
        // Uncorrected (raw p < 0.05 and beyond the threshold) some null rows would be called:
        // the control is what keeps them out.
        int uncorrected = 0;
        for (std::size_t i = 0; i < 200; ++i) {
            const auto& r = m.lines()[i].cells[1].result;
            uncorrected +=
                r.p_value < 0.05 && std::fabs(std::log(r.ratio)) >= std::log1p(r.threshold);
        }
        QVERIFY2(uncorrected > false_calls, std::to_string(uncorrected).c_str());
    }

    // Three machines, one of them 30 % slower on every row: its cells are outliers and
    // SLOWER; the others SAME.
    void nWayOutliers() {
        std::vector<Report> reports{
            synthetic(6, 3, 0.0, 0.003, 31), synthetic(6, 3, 0.0, 0.003, 32),
            synthetic(6, 3, 0.30, 0.003, 33), synthetic(6, 3, 0.0, 0.003, 34)};
        const auto m = MultiComparison::of(reports, {"n1", "n2", "n3", "n4"});
        QCOMPARE(m.count(Verdict::Slower), std::size_t(6));
        QCOMPARE(m.count(Verdict::Same), std::size_t(12));
        for (const auto& line : m.lines()) {
            QVERIFY(!line.cells[0].judged); // the baseline
            QVERIFY(line.cells[2].outlier);
            QVERIFY(!line.cells[1].outlier && !line.cells[3].outlier);
        }
        const auto text = m.to_text();
        QVERIFY2(text.find("6 slower") != std::string::npos, text.c_str());
        const auto j = m.to_json();
        QCOMPARE(j["lines"].size(), std::size_t(6));
        QCOMPARE(j["lines"][0]["cells"].size(), std::size_t(4));
        QCOMPARE(j["summary"]["slower"].get<int>(), 6);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 MultiComparison::of(std::span(reports).first(1), {"x"}));
    }

    // merge_runs pools the samples, keeps one summary per run and recomputes the
    // throughput and the ceiling fraction from the pooled median.
    void mergeRuns() {
        std::vector<ProfileRow> runs;
        for (double m : {1.0e-3, 1.1e-3, 0.9e-3}) {
            auto r = row("rms_norm", "default", samples(m, 0.01, 20, std::uint64_t(m * 1e6)));
            r.bytes = 1e6;
            r.gbps = r.bytes / r.stats.median / 1e9;
            r.ceiling_value = 10;
            r.ceiling_fraction = r.gbps / 10;
            r.ceiling_id = "dram.copy.1t";
            r.memory = {"dram.copy.1t", m * 1e4, 8}; // 10, 11, 9 GB/s
            runs.push_back(r);
        }
        auto crashed = row("rms_norm", "default", {}, "crashed");
        runs.push_back(crashed);
        const auto merged = merge_runs(runs, 2000);
        QCOMPARE(merged.runs.size(), std::size_t(3));
        QCOMPARE(merged.samples.size(), std::size_t(60));
        QCOMPARE(merged.run_medians().size(), std::size_t(3));
        QVERIFY(std::fabs(merged.stats.median - 1.0e-3) < 0.02e-3);
        QVERIFY(std::fabs(merged.gbps - merged.bytes / merged.stats.median / 1e9) < 1e-9);
        QVERIFY(std::fabs(merged.ceiling_fraction - merged.gbps / 10) < 1e-9);
        QVERIFY(!merged.warnings.empty()); // the crashed run is said
        // The memory beside the row: the median of the runs' medians, every window counted.
        QCOMPARE(merged.memory.probe, std::string("dram.copy.1t"));
        QCOMPARE(merged.memory.median_gbs, 10.0);
        QCOMPARE(merged.memory.windows, std::int64_t(24));
        // JSON round trip keeps the runs.
        const auto back = ProfileRow::from_json(merged.to_json());
        QCOMPARE(back.runs.size(), std::size_t(3));
        QCOMPARE(back.runs[1].median, merged.runs[1].median);
        QCOMPARE(back.memory.median_gbs, merged.memory.median_gbs);
        QCOMPARE(back.memory.windows, merged.memory.windows);
        QCOMPARE(back.runs[1].memory_gbs, 11.0); // each run's own, in run order
        // A negative median is refused, naming the key.
        auto bad = merged.to_json();
        bad["memory"]["median_gbs"] = -1;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, ProfileRow::from_json(bad));
        // One run: no "runs".
        const auto one = merge_runs({runs[0]}, 2000);
        QVERIFY(one.runs.empty());
        QVERIFY(!one.to_json().contains("runs"));
    }

    void fingerprints() {
        auto context = [](const std::string& microcode, const std::string& git) {
            nlohmann::json machine = {{"cpu", {{"brand", "EPYC"}, {"microcode", microcode}}},
                                      {"memory_gib", 24}};
            return nlohmann::json{{"fingerprint",
                                   {{"machine", machine},
                                    {"software", {{"switchyard", {{"git_hash", git}}}}},
                                    {"machine_id", microcode}}}};
        };
        QVERIFY(fingerprint_differences(context("0x1", "abc"), context("0x1", "abc")).empty());
        QVERIFY(same_machine(context("0x1", "abc"), context("0x1", "abc")));
        auto d = fingerprint_differences(context("0x1", "abc"), context("0x2", "abc"));
        QCOMPARE(d.size(), std::size_t(1));
        QCOMPARE(d[0], std::string("machine.cpu.microcode: 0x1 -> 0x2"));
        QVERIFY(!same_machine(context("0x1", "abc"), context("0x2", "abc")));
        // Another build on the same machine: the same machine, the difference said.
        d = fingerprint_differences(context("0x1", "abc"), context("0x1", "def"));
        QCOMPARE(d.size(), std::size_t(1));
        QVERIFY(same_machine(context("0x1", "abc"), context("0x1", "def")));
        d = fingerprint_differences(nlohmann::json::object(), context("0x1", "abc"));
        QCOMPARE(d.size(), std::size_t(1));
        QVERIFY(d[0].find("no hardware fingerprint") != std::string::npos);
        QVERIFY(!same_machine(nlohmann::json::object(), nlohmann::json::object()));
    }

    void pairsAndUnmatched() {
        Report a, b;
        a.rows = {row("gemm", "default", samples(1.0, 0.02, 30, 1)),
                  row("gemm", "threaded", samples(1.0, 0.02, 30, 3)),
                  row("rms_norm", "default", samples(1.0, 0.02, 30, 5)),
                  row("flow_match_step", "default", {}, "crashed")};
        b.rows = {row("gemm", "threaded", samples(0.5, 0.02, 30, 4)),
                  row("gemm", "default", samples(1.0, 0.02, 30, 2)),
                  row("flow_sde_step", "default", samples(1.0, 0.02, 30, 6)),
                  row("flow_match_step", "default", samples(1.0, 0.02, 30, 7))};
        const auto c = Comparison::of(a, b);
        QCOMPARE(c.pairs().size(), std::size_t(3));
        QCOMPARE(c.pairs()[0].a.spec.variant, std::string("default"));
        QCOMPARE(c.pairs()[0].result.verdict, Verdict::Same);
        QCOMPARE(c.pairs()[1].result.verdict, Verdict::Faster);    // one run each, 2x
        QCOMPARE(c.pairs()[2].result.verdict, Verdict::Ambiguous); // crashed in A
        QVERIFY(c.pairs()[2].result.note.find("crashed") != std::string::npos);
        QCOMPARE(c.only_in_a().size(), std::size_t(1));
        QCOMPARE(c.only_in_a()[0].spec.op, std::string("rms_norm"));
        QCOMPARE(c.only_in_b().size(), std::size_t(1));
        QCOMPARE(c.only_in_b()[0].spec.op, std::string("flow_sde_step"));
        const auto j = c.to_json();
        QCOMPARE(j["pairs"].size(), std::size_t(3));
        QCOMPARE(j["only_in_a"].size(), std::size_t(1));
        QCOMPARE(j["only_in_b"].size(), std::size_t(1));
        const auto text = c.to_text();
        QVERIFY(text.find("Only in A") != std::string::npos);
        QVERIFY(text.find("Only in B") != std::string::npos);
    }

    // A crafted report cannot forge a row of the text: newlines and control characters in
    // its fields come out escaped, so every line of the table is one pair.
    void textEscapesReportFields() {
        Report a, b;
        auto forged = row("gemm", "default", {1e-3, 1e-3, 1e-3});
        forged.spec.size = "1024\nFAKE ROW SAME\x1b[2J";
        a.rows = {forged};
        b.rows = {forged};
        auto lone = row("rms_norm", "default\nFAKE", {1e-3});
        a.rows.push_back(lone);
        const auto text = Comparison::of(a, b).to_text();
        QVERIFY2(text.find("\nFAKE") == std::string::npos, text.c_str());
        QVERIFY(text.find("\x1b") == std::string::npos);
        QVERIFY(text.find("1024\\x0aFAKE ROW SAME\\x1b[2J") != std::string::npos);
        QVERIFY(text.find("default\\x0aFAKE") != std::string::npos);
    }

    // Two reports whose 1-thread probes and rows ran on different CPUs say so (one CPU is not
    // another); the same CPU, or a report without one (unpinned, older), says nothing.
    void pinnedCpusThatDifferAreSaid() {
        auto context = [](int cpu) {
            nlohmann::json c = {
                {"devices", nlohmann::json::array(
                                {{{"id", "cpu"},
                                  {"ceilings", nlohmann::json::array({{{"id", "dram.copy.1t"},
                                                                       {"kind", "bandwidth"},
                                                                       {"value", 60.0}}})}}})}};
            c["cpu_peaks"] = CpuPeaks{}.to_json(); // as a report has them: every field
            if (cpu >= 0)
                c["cpu_peaks"]["pinned_cpu"] = cpu;
            return c;
        };
        QVERIFY(ceiling_differences(context(1), context(1)).empty());
        QVERIFY(ceiling_differences(context(-1), context(1)).empty());
        const auto w = ceiling_differences(context(0), context(1));
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY2(w[0].find("A's 1-thread probes and rows ran on CPU 0, B's on CPU 1") !=
                     std::string::npos,
                 w[0].c_str());
        QVERIFY(w[0].find("SWITCHYARD_PIN_CPU") != std::string::npos);
    }

    // Two reports from machines whose ceilings differ are flagged; the same ceilings (within
    // the probes' recorded spread, or else 10 % for compute and 35 % for bandwidth: probe
    // noise on a shared machine) are not; reports without ceilings say nothing.
    // An AMBIGUOUS row between runs says how many runs a side would settle it, and those
    // runs do: two identical machines' worth of rows (no effect, 4 % between-run noise, 3
    // runs a side) are mostly AMBIGUOUS; measured again with the --repeat the advice names,
    // most of them are SAME and none is called different.
    void ambiguousRowsSayWhatWouldSettleThem() {
        constexpr int kRows = 40;
        const Report a = synthetic(kRows, 3, 0.0, 0.04, 51), b = synthetic(kRows, 3, 0.0, 0.04, 52);
        const auto c = Comparison::of(a, b);
        const auto advice = c.advice();
        qInfo("%s", advice.text().c_str());
        QVERIFY2(advice.ambiguous >= kRows / 2, advice.text().c_str());
        QCOMPARE(advice.one_run, std::size_t(0));
        QVERIFY2(advice.settleable >= advice.ambiguous * 2 / 5, advice.text().c_str());
        QVERIFY(advice.repeat > 3 && advice.repeat <= SampleComparison::kMaxRunsToSettle);
        QVERIFY(advice.median_repeat > 3 && advice.median_repeat <= advice.repeat);
        QVERIFY2(advice.text().find("--repeat " + std::to_string(advice.repeat) +
                                    " on both sides would settle") != std::string::npos,
                 advice.text().c_str());
        for (const auto& pair : c.pairs()) {
            const auto& r = pair.result;
            if (r.verdict != Verdict::Ambiguous) {
                QCOMPARE(r.runs_to_settle, 0);
            } else if (r.runs_to_settle > 0) {
                QVERIFY(r.runs_to_settle > 3);
                QVERIFY2(r.note.find("runs a side would settle it (--repeat " +
                                     std::to_string(r.runs_to_settle) + ")") != std::string::npos,
                         r.note.c_str());
            }
        }
        QVERIFY(c.to_text().find(advice.text()) != std::string::npos);
        QCOMPARE(c.to_json()["advice"]["repeat"].get<int>(), advice.repeat);
        // The same machines measured with that many runs.
        const Report a2 = synthetic(kRows, advice.repeat, 0.0, 0.04, 53),
                     b2 = synthetic(kRows, advice.repeat, 0.0, 0.04, 54);
        const auto again = Comparison::of(a2, b2);
        std::size_t same = 0, called = 0;
        for (const auto& pair : again.pairs()) {
            same += pair.result.verdict == Verdict::Same;
            called +=
                pair.result.verdict == Verdict::Faster || pair.result.verdict == Verdict::Slower;
        }
        QCOMPARE(called, std::size_t(0));
        QVERIFY2(same >= std::size_t(kRows) * 3 / 4, std::to_string(same).c_str());

        // Runs that vary by 15 %, above the 10 % that can show sameness: no number of runs
        // settles a row without a difference, and the row says so.
        const Report x = synthetic(6, 3, 0.0, 0.15, 61), y = synthetic(6, 3, 0.0, 0.15, 62);
        const auto noisy = Comparison::of(x, y);
        bool said = false;
        for (const auto& pair : noisy.pairs())
            if (pair.result.runs_to_settle < 0 &&
                pair.result.note.find("no number of runs can show sameness") != std::string::npos)
                said = true;
        QVERIFY(said);
        QVERIFY2(noisy.advice().unsettleable > 0, noisy.advice().text().c_str());
        QVERIFY(noisy.advice().text().find("cannot be settled by more runs") != std::string::npos);
        // One run a side: the variation is unknown; the advice says what measures it.
        const Report one_a = synthetic(4, 1, 0.0, 0.04, 71),
                     one_b = synthetic(4, 1, 0.10, 0.04, 72);
        const auto once = Comparison::of(one_a, one_b).advice();
        QVERIFY2(once.one_run > 0 && once.text().find("profile --repeat 3") != std::string::npos,
                 once.text().c_str());
    }

    // A pair whose rows ran the same build of the same cell is marked identical code; a
    // verdict there measures the machine.
    void identicalCodeIsSaid() {
        Report a = synthetic(2, 5, 0.0, 0.01, 81), b = synthetic(2, 5, 0.30, 0.01, 82);
        for (auto* r : {&a, &b})
            r->rows[0].spec.code = {"cpu", "0.1.0", "abc123"};
        b.rows[1].spec.code = {"cpu", "0.1.0", "abc123"};
        a.rows[1].spec.code = {"cpu", "0.1.0", "def456"}; // rebuilt between the runs
        const auto c = Comparison::of(a, b);
        QVERIFY(c.pairs()[0].result.identical_code);
        QVERIFY(!c.pairs()[1].result.identical_code);
        // Identical code is never a regression: the difference is the machine's.
        QCOMPARE(c.pairs()[0].result.verdict, Verdict::Machine);
        QCOMPARE(c.pairs()[1].result.verdict, Verdict::Slower); // another build: the code's
        const auto& note = c.pairs()[0].result.note;
        QVERIFY2(note.find("the machine ran this row 1.3") == 0 &&
                     note.find("x slower in B; the code is the same") != std::string::npos,
                 note.c_str());
        QVERIFY2(c.to_text().find("1 of 2 pairs ran identical code") != std::string::npos &&
                     c.to_text().find("1 machine (identical code)") != std::string::npos,
                 c.to_text().c_str());
        QCOMPARE(c.to_json()["pairs"][0]["identical_code"].get<bool>(), true);
        QCOMPARE(c.to_json()["pairs"][0]["verdict"].get<std::string>(), std::string("MACHINE"));
        const std::vector<Report> both{a, b};
        const auto m = MultiComparison::of(both, {"a", "b"});
        QCOMPARE(m.count(Verdict::Slower), std::size_t(1));
        QCOMPARE(m.count(Verdict::Machine), std::size_t(1));
        QCOMPARE(m.to_json()["summary"]["machine"].get<std::size_t>(), std::size_t(1));
        // Judging the environment (a driver or kernel update): the verdict is about the machine.
        CompareOptions environment;
        environment.judge_environment = true;
        const auto e = Comparison::of(a, b, environment);
        QCOMPARE(e.pairs()[0].result.verdict, Verdict::Slower);
        QVERIFY2(e.pairs()[0].result.note.find("environment") != std::string::npos,
                 e.pairs()[0].result.note.c_str());
        QCOMPARE(e.pairs()[1].result.verdict, Verdict::Slower);
        // A faster machine on identical code reads as such.
        const auto back = Comparison::of(b, a);
        QCOMPARE(back.pairs()[0].result.verdict, Verdict::Machine);
        QVERIFY2(back.pairs()[0].result.note.find("x faster in B") != std::string::npos,
                 back.pairs()[0].result.note.c_str());
        // No build ID recorded (a report from before code identities): never identical.
        Report old_a = synthetic(1, 5, 0.0, 0.01, 83), old_b = synthetic(1, 5, 0.0, 0.01, 84);
        QVERIFY(!Comparison::of(old_a, old_b).pairs()[0].result.identical_code);
    }

    // Two reports of one machine whose ceilings moved beyond their probes' noise: the
    // machine's capacity changed between the runs (a shared host), not another machine.
    void sameMachineCeilingDriftIsSaidAsSuch() {
        auto context = [](double dram, const std::string& id) {
            nlohmann::json ceilings = nlohmann::json::array(
                {{{"id", "dram.read.1t"}, {"kind", "bandwidth"}, {"value", dram}}});
            nlohmann::json c{
                {"devices", nlohmann::json::array({{{"id", "cpu"}, {"ceilings", ceilings}}})},
                {"fingerprint", {{"machine", {{"cpu", {{"brand", "Xeon"}}}}}, {"machine_id", id}}}};
            c["cpu_peaks"] = CpuPeaks{}.to_json();
            c["cpu_peaks"]["spread"] = {{"dram.read.1t", 0.03}};
            return c;
        };
        const auto w = ceiling_differences(context(52, "m1"), context(61, "m1"));
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY2(w[0].find("the same machine measured other ceilings") != std::string::npos &&
                     w[0].find("shared host") != std::string::npos &&
                     w[0].find("dram.read.1t 52.0 -> 61.0") != std::string::npos,
                 w[0].c_str());
        auto other = context(61, "m2");
        other["fingerprint"]["machine"]["cpu"]["brand"] = "EPYC";
        const auto w2 = ceiling_differences(context(52, "m1"), other);
        QCOMPARE(w2.size(), std::size_t(1));
        QVERIFY2(w2[0].find("machines with different ceilings") != std::string::npos,
                 w2[0].c_str());
    }

    // calibrate(): every pair of K reports of identical code, the FASTER/SLOWER calls among
    // them counted as false positives, per op and overall, with the bound; rows of other code
    // are left out and said; reports of two machines are refused.
    void calibrationCountsCallsOnIdenticalCode() {
        std::vector<Report> runs;
        for (std::uint64_t seed : {91, 92, 93}) {
            auto r = synthetic(24, 5, 0.0, 0.02, seed);
            r.context.fingerprint.machine = {{"cpu", {{"brand", "Xeon"}}}};
            r.context.fingerprint.machine_id = "m1";
            for (auto& row : r.rows)
                row.spec.code = {"cpu", "0.1.0", "abc123"};
            runs.push_back(std::move(r));
        }
        // One row of the third run 30 % slower on the same code: the machine, not the code.
        runs[2].rows[0] = merge_runs(
            [&] {
                std::vector<ProfileRow> rs;
                for (int k = 0; k < 5; ++k)
                    rs.push_back(row("op0", "default", samples(1.3e-3, 0.01, 30, 900 + k)));
                return rs;
            }(),
            2000);
        runs[2].rows[0].spec.code = {"cpu", "0.1.0", "abc123"};
        runs[1].rows[1].spec.code = {"cpu", "0.1.0", "rebuilt"}; // another build: left out
        const auto c = calibrate(runs, {"r1", "r2", "r3"});
        QCOMPARE(c.reports, std::size_t(3));
        QCOMPARE(c.report_pairs, std::size_t(3));
        QCOMPARE(c.skipped_rows, std::size_t(2)); // op1 in (r1, r2) and (r2, r3)
        QCOMPARE(c.overall.judged, std::size_t(3 * 24 - 2));
        QCOMPARE(c.overall.false_positives, std::size_t(2)); // op0 in (r1, r3) and (r2, r3)
        QCOMPARE(c.per_op.at("op0").false_positives, std::size_t(2));
        QCOMPARE(c.per_op.at("op5").false_positives, std::size_t(0));
        QVERIFY(c.overall.upper_95() > c.overall.rate());
        QVERIFY2(c.summary().find("2 of 70 rows of identical code called FASTER or SLOWER") == 0,
                 c.summary().c_str());
        QVERIFY(c.text().find("2 rows were left out") != std::string::npos);
        // How far apart identical reports put a row: 2 % noise, about 5 %; the 30 % row
        // is two of 70, under the 95th percentile.
        QVERIFY2(c.spread_95 > 0.01 && c.spread_95 < 0.2, std::to_string(c.spread_95).c_str());
        QVERIFY(c.beside_the_rule().find("which the rule requires a difference to exceed") !=
                std::string::npos);
        // The bound: 0 of 72 is at most 4.1 % (1 - 0.05^(1/72)); 0 of 0 says nothing.
        CalibrationCount none;
        none.judged = 72;
        QVERIFY(std::fabs(none.upper_95() - (1 - std::pow(0.05, 1.0 / 72))) < 1e-6);
        QCOMPARE(CalibrationCount{}.upper_95(), 1.0);
        // The file form reads back; a newer format is refused.
        QTemporaryDir dir;
        const auto path = dir.filePath("c.json").toStdString();
        c.save(path);
        QCOMPARE(Calibration::load(path).to_json(), c.to_json());
        auto newer = c.to_json();
        newer["format_version"] = 99;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, Calibration::from_json(newer));
        // Kept in the user's data folder by machine, found by it.
        qputenv("XDG_DATA_HOME", dir.filePath("xdg").toUtf8());
        QVERIFY(!find_calibration("m1"));
        c.save(default_calibration_file("m1"));
        QVERIFY(find_calibration("m1").has_value());
        QVERIFY(!find_calibration("m2"));
        qunsetenv("XDG_DATA_HOME");
        // Two machines: refused, with what to give instead.
        runs[1].context.fingerprint.machine = {{"cpu", {{"brand", "EPYC"}}}};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate(runs, {"r1", "r2", "r3"}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, calibrate({runs.data(), 1}, {"r1"}));
    }

    // The drift control: the range of B/A the machine alone gives, from the two reports'
    // sentinels; JSON through the run context, a bad one said, never fatal.
    void driftControlsSayHowFarTheMachineMoved() {
        const auto a = control({10, 10.5, 10.2}), b = control({13, 14, 13.5});
        QVERIFY(a.usable());
        QCOMPARE(a.center(), 10.2e-6);
        QVERIFY(std::fabs(a.range() - 1.05) < 1e-12);
        const auto d = MachineDrift::between(a, b);
        QVERIFY(d.known);
        QVERIFY(std::fabs(d.high - 1.4) < 1e-12);        // B's slowest / A's fastest
        QVERIFY(std::fabs(d.low - 13.0 / 10.5) < 1e-12); // B's fastest / A's slowest
        QVERIFY(std::fabs(d.explains() - 0.4) < 1e-12);
        QVERIFY2(d.text().find("a difference up to 40 %") != std::string::npos, d.text().c_str());
        // The other way round it explains as much.
        QVERIFY(std::fabs(MachineDrift::between(b, a).explains() - 0.4) < 1e-12);
        // One sample, or another sentinel: unknown.
        QVERIFY(!MachineDrift::between(control({10}), b).known);
        auto other = b;
        other.sentinel = "another kernel";
        QVERIFY(!MachineDrift::between(a, other).known);
        QCOMPARE(MachineDrift{}.explains(), 0.0);

        RunContext context;
        context.control = a;
        const auto back = RunContext::from_json(context.to_json());
        QVERIFY(back.control.has_value());
        QCOMPARE(back.control->to_json(), a.to_json());
        QVERIFY(back.read_warnings.empty());
        auto bad = context.to_json();
        bad["control"]["samples"][1]["median"] = "slow";
        const auto read = RunContext::from_json(bad);
        QVERIFY(!read.control);
        QCOMPARE(read.read_warnings.size(), std::size_t(1));
        QVERIFY2(read.read_warnings[0].find("context.control.samples[1].median") == 0,
                 read.read_warnings[0].c_str());
        QVERIFY(!RunContext::from_json(nlohmann::json::object()).control);

        // The sentinel measures something (its time is the machine's: no bound on it).
        const double t = measure_sentinel();
        QVERIFY(t > 0 && std::isfinite(t));
    }

    // compare of reports made apart widens its rule by the drift their controls show, and by
    // this machine's calibration; it says how much the drift can explain.
    void driftWidensTheRuleBetweenReports() {
        Report a = synthetic(24, 5, 0.0, 0.01, 61), b30 = synthetic(24, 5, 0.30, 0.01, 62),
               b80 = synthetic(24, 5, 0.80, 0.01, 63);
        for (auto* r : {&a, &b30, &b80}) {
            r->context.fingerprint.machine = {{"cpu", {{"brand", "Xeon"}}}};
            r->context.fingerprint.machine_id = "m1";
        }
        auto verdicts = [](const Comparison& c) {
            std::map<std::string, int> n;
            for (const auto& p : c.pairs())
                ++n[to_string(p.result.verdict)];
            return n;
        };
        // No controls: a 30 % slowdown in 1 % noise is SLOWER on every row.
        QCOMPARE(verdicts(Comparison::of(a, b30))["SLOWER"], 24);
        // The machine's control ran up to 1.4x as long in B: 30 % can be the machine's.
        a.context.control = control({10, 10.5, 10.2});
        for (auto* b : {&b30, &b80})
            b->context.control = control({13, 14, 13.5});
        const auto c30 = Comparison::of(a, b30);
        QCOMPARE(verdicts(c30)["AMBIGUOUS"], 24);
        const auto& r = c30.pairs()[0].result;
        QVERIFY(std::fabs(r.machine_floor - 0.4) < 1e-12);
        QVERIFY2(r.note.find("within the 40.0 % the machine alone can explain") !=
                         std::string::npos &&
                     r.note.find("in one run") != std::string::npos,
                 r.note.c_str());
        QVERIFY(c30.drift().known);
        QVERIFY2(c30.to_text().find("Drift: the machine's control ran 1.24-1.40x") !=
                     std::string::npos,
                 c30.to_text().c_str());
        QCOMPARE(c30.advice().machine, std::size_t(24));
        QVERIFY(c30.advice().text().find("24 differ by no more than the machine's drift") !=
                std::string::npos);
        QCOMPARE(c30.to_json()["drift"]["high"].get<double>(), 1.4);
        QCOMPARE(c30.to_json()["pairs"][0]["machine_floor"].get<double>(), r.machine_floor);
        // 80 % is beyond what the drift explains: SLOWER, and said.
        const auto c80 = Comparison::of(a, b80);
        QCOMPARE(verdicts(c80)["SLOWER"], 24);
        QVERIFY2(c80.pairs()[0].result.note.find("beyond the 40.0 % the machine can explain") !=
                     std::string::npos,
                 c80.pairs()[0].result.note.c_str());
        // Without a drift control, this machine's calibration widens the rule instead.
        a.context.control.reset();
        Calibration cal;
        cal.date = "2026-12-07T00:00:00Z";
        cal.spread_95 = 0.5;
        CompareOptions options;
        cal.apply_to(options);
        QCOMPARE(options.calibrated_floor, 0.5);
        QVERIFY(options.describe().find("50.0 % (compare --calibrate, 2026-12-07)") !=
                std::string::npos);
        const auto calibrated = Comparison::of(a, b30, options);
        QCOMPARE(verdicts(calibrated)["AMBIGUOUS"], 24);
        QVERIFY2(calibrated.pairs()[0].result.note.find(
                     "this machine's identical reports differ by up to 50.0 %") !=
                     std::string::npos,
                 calibrated.pairs()[0].result.note.c_str());
        QCOMPARE(verdicts(Comparison::of(a, b80, options))["SLOWER"], 24);
        // Two machines: their controls differ by the machines, which is what such a comparison
        // measures, so the drift is not weighed.
        a.context.control = control({10, 10.5, 10.2});
        auto elsewhere = b30;
        elsewhere.context.fingerprint.machine = {{"cpu", {{"brand", "EPYC"}}}};
        const auto two = Comparison::of(a, elsewhere);
        QCOMPARE(verdicts(two)["SLOWER"], 24);
        QVERIFY(!two.drift().known);
        QVERIFY(
            two.to_text().find("Drift: not weighed: the reports come from different machines") !=
            std::string::npos);
        // A calibration from before the spread was kept leaves the rule as it is.
        Calibration old;
        CompareOptions untouched;
        old.apply_to(untouched);
        QCOMPARE(untouched.calibrated_floor, 0.0);
        QVERIFY(old.beside_the_rule().find("compare --calibrate again") != std::string::npos);
    }

    void ceilingsDifferAcrossMachines() {
        auto context = [](double l2, bool with_dram, double fma = 100.0) {
            nlohmann::json ceilings = nlohmann::json::array();
            ceilings.push_back({{"id", "l2.triad.all"}, {"kind", "bandwidth"}, {"value", l2}});
            ceilings.push_back({{"id", "fma.fp32.all"}, {"kind", "compute"}, {"value", fma}});
            if (with_dram)
                ceilings.push_back(
                    {{"id", "dram.triad.all"}, {"kind", "bandwidth"}, {"value", 20.0}});
            return nlohmann::json{
                {"devices", nlohmann::json::array({{{"id", "cpu"}, {"ceilings", ceilings}}})}};
        };
        QVERIFY(ceiling_differences(context(100, true), context(105, true)).empty());
        QVERIFY(ceiling_differences(nlohmann::json::object(), nlohmann::json::object()).empty());
        // Two runs on one VM: a bandwidth ceiling 30 % apart is probe noise ...
        QVERIFY(ceiling_differences(context(100, true), context(130, true)).empty());
        QVERIFY(ceiling_differences(context(100, true), context(75, true)).empty());
        // ... an FMA peak 15 % apart is not.
        auto fw = ceiling_differences(context(100, true), context(100, true, 115.0));
        QCOMPARE(fw.size(), std::size_t(1));
        QVERIFY2(fw[0].find("fma.fp32.all 100 -> 115 (+15.0 %)") != std::string::npos,
                 fw[0].c_str());
        QVERIFY2(fw[0].find("l2.triad.all") == std::string::npos, fw[0].c_str());
        // The tolerances are the caller's.
        QCOMPARE(ceiling_differences(context(100, true), context(130, true), 0.10, 0.10).size(),
                 std::size_t(1));
        // With the probes' spreads recorded (cpu_peaks.spread), the limit is their sum, at
        // least 10 %: noisy probes (25 % each) let 45 % pass ...
        auto with_spread = [&](double l2, double s) {
            auto c = context(l2, true);
            c["cpu_peaks"] = CpuPeaks{}.to_json();
            c["cpu_peaks"]["spread"] = {{"l2.triad.all", s}, {"fma.fp32.all", s}};
            return c;
        };
        QVERIFY(ceiling_differences(with_spread(100, 0.25), with_spread(145, 0.25)).empty());
        QCOMPARE(ceiling_differences(context(100, true), context(145, true)).size(),
                 std::size_t(1));
        // ... steady ones (1 % each) flag 20 %, which the bandwidth tolerance alone lets pass.
        QVERIFY(ceiling_differences(context(100, true), context(120, true)).empty());
        fw = ceiling_differences(with_spread(100, 0.01), with_spread(120, 0.01));
        QCOMPARE(fw.size(), std::size_t(1));
        QVERIFY2(fw[0].find("l2.triad.all 100 -> 120") != std::string::npos, fw[0].c_str());
        // A spread in one report only: the tolerances of the kinds.
        QVERIFY(ceiling_differences(with_spread(100, 0.01), context(120, true)).empty());

        auto w = ceiling_differences(context(100, true), context(150, true));
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY2(w[0].find("l2.triad.all 100 -> 150 (+50.0 %)") != std::string::npos, w[0].c_str());
        QVERIFY(w[0].find("cpu:") == 0);

        w = ceiling_differences(context(100, true), context(100, false));
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY2(w[0].find("only in A: dram.triad.all") != std::string::npos, w[0].c_str());

        w = ceiling_differences(nlohmann::json::object(), context(100, true));
        QCOMPARE(w.size(), std::size_t(1));
        QVERIFY(w[0].find("A has no measured ceilings") == 0);

        // Comparison carries them to its text and JSON.
        Report a, b;
        a.context = context(100, true);
        b.context = context(50, true);
        const auto c = Comparison::of(a, b);
        QCOMPARE(c.warnings().size(), std::size_t(2)); // no fingerprints, the ceilings
        QVERIFY(c.warnings()[0].find("not the same machine") != std::string::npos);
        QVERIFY(c.to_text().find("\nwarning: cpu: ceilings differ") != std::string::npos);
        QCOMPARE(c.to_json()["warnings"].size(), std::size_t(2));
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
