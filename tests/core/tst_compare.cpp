// SPDX-License-Identifier: MIT
// compare: verdicts on synthetic samples, pairing and unmatched rows.
#include <QtTest>

#include <switchyard/report/compare.h>

using namespace switchyard;

Q_DECLARE_METATYPE(std::vector<double>)

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

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    void verdicts_data() {
        QTest::addColumn<std::vector<double>>("a");
        QTest::addColumn<std::vector<double>>("b");
        QTest::addColumn<QString>("verdict");
        QTest::newRow("same distribution")
            << samples(1.0, 0.02, 50, 1) << samples(1.0, 0.02, 50, 2) << "SAME";
        QTest::newRow("b 20% faster")
            << samples(1.0, 0.02, 30, 1) << samples(0.8, 0.02, 30, 2) << "FASTER";
        QTest::newRow("b 20% slower")
            << samples(1.0, 0.02, 30, 1) << samples(1.2, 0.02, 30, 2) << "SLOWER";
        QTest::newRow("significant but tiny")
            << samples(1.0, 0.001, 200, 1) << samples(1.004, 0.001, 200, 2) << "SAME";
        QTest::newRow("one sample")
            << std::vector<double>{1.0} << std::vector<double>{2.0} << "UNCERTAIN";
        QTest::newRow("few and overlapping")
            << samples(1.0, 0.5, 4, 1) << samples(1.05, 0.5, 4, 2) << "UNCERTAIN";
        QTest::newRow("few but separated")
            << std::vector<double>{1, 1.01, 1.02, 1.03} << std::vector<double>{2, 2.01, 2.02, 2.03}
            << "SLOWER"; // exact p = 2/70
        QTest::newRow("7 v 7 separated")
            << std::vector<double>{1, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06}
            << std::vector<double>{2, 2.01, 2.02, 2.03, 2.04, 2.05, 2.06} << "SLOWER";
        QTest::newRow("no samples")
            << std::vector<double>{} << std::vector<double>{1.0} << "UNCERTAIN";
    }
    void verdicts() {
        QFETCH(std::vector<double>, a);
        QFETCH(std::vector<double>, b);
        QFETCH(QString, verdict);
        const auto c = compare_samples(a, b);
        QCOMPARE(QString::fromStdString(c.verdict), verdict);
        if (verdict == "UNCERTAIN")
            QVERIFY(!c.note.empty());
    }

    void ratioIsBOverA() {
        const auto c = compare_samples(std::vector<double>(20, 2.0), std::vector<double>(20, 1.0));
        QCOMPARE(c.ratio, 0.5);
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
        QCOMPARE(c.pairs()[0].result.verdict, std::string("SAME"));
        QCOMPARE(c.pairs()[1].result.verdict, std::string("FASTER"));
        QCOMPARE(c.pairs()[2].result.verdict, std::string("UNCERTAIN")); // crashed in A
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

    // Two reports from machines whose ceilings differ are flagged; the same ceilings (within
    // the probes' recorded spread, or else 10 % for compute and 35 % for bandwidth: probe
    // noise on a shared machine) are not; reports without ceilings say nothing.
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
            c["cpu_peaks"] = {{"spread", {{"l2.triad.all", s}, {"fma.fp32.all", s}}}};
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
        QCOMPARE(c.warnings().size(), std::size_t(1));
        QVERIFY(c.to_text().rfind("warning: cpu: ceilings differ", 0) == 0);
        QCOMPARE(c.to_json()["warnings"].size(), std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "tst_compare.moc"
