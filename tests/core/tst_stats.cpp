// SPDX-License-Identifier: MIT
// Statistics against hand-computed values, the stopping rule, the Mann-Whitney U test.
#include <QtTest>

#include <switchyard/profiling/stats.h>
#include <switchyard/report/paired.h>

#include <cmath>
#include <vector>

using namespace switchyard;

Q_DECLARE_METATYPE(std::vector<double>)

class TestStats : public QObject {
    Q_OBJECT

private slots:
    void sampleStats_data() {
        QTest::addColumn<std::vector<double>>("samples");
        QTest::addColumn<double>("min");
        QTest::addColumn<double>("median");
        QTest::addColumn<double>("mean");
        QTest::addColumn<double>("p90");
        QTest::addColumn<double>("stddev");
        // 1..10: var = sum((x - 5.5)^2) / 9 = 82.5 / 9
        QTest::newRow("1..10") << std::vector<double>{10, 9, 8, 7, 6, 5, 4, 3, 2, 1} << 1.0 << 5.5
                               << 5.5 << 9.1 << std::sqrt(82.5 / 9.0);
        // {3, 1, 2}: p90 at position 0.9 * 2 = 1.8 -> 2 + 0.8 * (3 - 2)
        QTest::newRow("odd") << std::vector<double>{3, 1, 2} << 1.0 << 2.0 << 2.0 << 2.8 << 1.0;
        QTest::newRow("one") << std::vector<double>{4e-6} << 4e-6 << 4e-6 << 4e-6 << 4e-6 << 0.0;
        // {1, 1, 1, 5}: mean 2, var = (1 + 1 + 1 + 9) / 3 = 4
        QTest::newRow("skewed") << std::vector<double>{1, 5, 1, 1} << 1.0 << 1.0 << 2.0 << 3.8
                                << 2.0;
    }
    void sampleStats() {
        QFETCH(std::vector<double>, samples);
        QFETCH(double, min);
        QFETCH(double, median);
        QFETCH(double, mean);
        QFETCH(double, p90);
        QFETCH(double, stddev);
        const auto s = SampleStats::from(samples);
        QCOMPARE(s.count, std::int64_t(samples.size()));
        QCOMPARE(s.min, min);
        QCOMPARE(s.median, median);
        QCOMPARE(s.mean, mean);
        QVERIFY(std::fabs(s.p90 - p90) < 1e-12);
        QVERIFY(std::fabs(s.stddev - stddev) < 1e-12);
        QVERIFY(std::fabs(s.rel_noise - stddev / mean) < 1e-12);
    }

    void statsRejectNonFinite() {
        std::vector<double> v{1, NAN, 2};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, SampleStats::from(v));
    }

    void statsJsonRoundTrip() {
        const auto s = SampleStats::from(std::vector<double>{1, 2, 3, 4});
        const auto t = SampleStats::from_json(s.to_json());
        QCOMPARE(t.median, s.median);
        QCOMPARE(t.count, s.count);
        nlohmann::json bad = s.to_json();
        bad["median"] = "fast";
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, SampleStats::from_json(bad));
        bad = s.to_json();
        bad["count"] = -1;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, SampleStats::from_json(bad));
    }

    // Identical samples: converged exactly when the minimum count is reached.
    void stopsWhenQuietAtMinSamples() {
        StoppingRule rule({0.005, 10, 100.0, 1000});
        for (int i = 1; i <= 9; ++i)
            QCOMPARE(rule.add(1e-3, 0.01 * i), StoppingRule::Stop::None);
        QCOMPARE(rule.add(1e-3, 0.1), StoppingRule::Stop::Converged);
        QCOMPARE(rule.count(), std::int64_t(10));
        QCOMPARE(StoppingRule::to_string(rule.stopped()), std::string_view("converged"));
        // Once stopped, it stays stopped and counts nothing more.
        QCOMPARE(rule.add(5.0, 0.2), StoppingRule::Stop::Converged);
        QCOMPARE(rule.count(), std::int64_t(10));
    }

    // 1 % noise never passes a 0.5 % threshold: the budget ends it.
    void noisyStopsOnTimeBudget() {
        StoppingRule rule({0.005, 10, 1.0, 1000000});
        StoppingRule::Stop s = StoppingRule::Stop::None;
        int n = 0;
        while (s == StoppingRule::Stop::None) {
            ++n;
            s = rule.add(n % 2 ? 0.99 : 1.01, 0.001 * n);
        }
        QCOMPARE(s, StoppingRule::Stop::TimeBudget);
        QCOMPARE(n, 1000);
        QVERIFY(rule.rel_noise() > 0.005);
    }

    // A sample so slow it spends the budget at once still stops (fewer than min samples).
    void budgetBeatsMinSamples() {
        StoppingRule rule({0.005, 10, 1.0, 1000});
        QCOMPARE(rule.add(3.0, 3.0), StoppingRule::Stop::TimeBudget);
    }

    void maxSamples() {
        StoppingRule rule({0.0, 10, 1e9, 25});
        StoppingRule::Stop s = StoppingRule::Stop::None;
        int n = 0;
        while (s == StoppingRule::Stop::None)
            s = rule.add(++n % 2 ? 1.0 : 2.0, 0.0);
        QCOMPARE(s, StoppingRule::Stop::MaxSamples);
        QCOMPARE(n, 25);
    }

    // Noise just under the threshold converges; just over does not.
    void thresholdIsStrict() {
        // Alternating 1 +- d: stddev (n-1) for n = 10 is d * sqrt(10/9).
        auto converges = [](double d) {
            StoppingRule rule({0.005, 10, 1e9, 10});
            for (int i = 0; i < 10; ++i)
                rule.add(i % 2 ? 1.0 + d : 1.0 - d, 0.0);
            return rule.stopped() == StoppingRule::Stop::Converged;
        };
        QVERIFY(converges(0.0049 / std::sqrt(10.0 / 9.0)));
        QVERIFY(!converges(0.0051 / std::sqrt(10.0 / 9.0)));
    }

    void mannWhitney_data() {
        QTest::addColumn<std::vector<double>>("a");
        QTest::addColumn<std::vector<double>>("b");
        QTest::addColumn<double>("p");
        // Exact: 1 arrangement in C(6,3) = 20 is as extreme on each side.
        QTest::newRow("exact 3v3")
            << std::vector<double>{1, 2, 3} << std::vector<double>{4, 5, 6} << 0.1;
        QTest::newRow("exact 7v7") << std::vector<double>{1, 2, 3, 4, 5, 6, 7}
                                   << std::vector<double>{8, 9, 10, 11, 12, 13, 14} << 2.0 / 3432.0;
        QTest::newRow("exact same")
            << std::vector<double>{1, 4} << std::vector<double>{2, 3} << 1.0;
        // Asymptotic (scipy.stats.mannwhitneyu gives 0.00018267179110955)
        QTest::newRow("normal 10v10")
            << std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
            << std::vector<double>{11, 12, 13, 14, 15, 16, 17, 18, 19, 20} << 0.0001826717911095504;
        // Ties: the tie-corrected normal approximation.
        QTest::newRow("ties") << std::vector<double>{1, 2, 2, 3, 3, 3, 4, 5}
                              << std::vector<double>{3, 4, 4, 5, 5, 6, 7, 8, 9}
                              << 0.006406285296812042;
        QTest::newRow("all equal") << std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1}
                                   << std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1} << 1.0;
        QTest::newRow("empty") << std::vector<double>{} << std::vector<double>{1, 2} << 1.0;
    }
    void mannWhitney() {
        QFETCH(std::vector<double>, a);
        QFETCH(std::vector<double>, b);
        QFETCH(double, p);
        QVERIFY2(std::fabs(mann_whitney_p(a, b) - p) < 1e-12 * std::max(1.0, p * 1e3),
                 QByteArray::number(mann_whitney_p(a, b), 'g', 17).constData());
        // Symmetric in its arguments.
        QVERIFY(std::fabs(mann_whitney_p(b, a) - mann_whitney_p(a, b)) < 1e-15);
    }

    // The Wilcoxon signed-rank test of a paired run against hand-counted exact values (the
    // 2^n sign choices), and the normal approximation far in the tail.
    void signedRankExact() {
        // All five positive: only the all-positive (and all-negative) choice is as extreme.
        const std::vector<double> five{0.1, 0.2, 0.3, 0.4, 0.5};
        QCOMPARE(signed_rank_p(five), 2.0 / 32);
        // Ten, all positive: 2 / 1024.
        std::vector<double> ten;
        for (int i = 1; i <= 10; ++i)
            ten.push_back(0.01 * i);
        QCOMPARE(signed_rank_p(ten), 2.0 / 1024);
        // Rank 2 negative: the negative rank sum is 2; sums <= 2 are {}, {1}, {2}: 3 choices.
        ten[1] = -ten[1];
        QCOMPARE(signed_rank_p(ten), 2.0 * 3 / 1024);
        // The sign of every value flipped: the same p (two-sided).
        std::vector<double> flipped;
        for (double x : ten)
            flipped.push_back(-x);
        QCOMPARE(signed_rank_p(flipped), signed_rank_p(ten));
        // Zeros are dropped; nothing left is no evidence.
        QCOMPARE(signed_rank_p(std::vector<double>{0, 0, 0}), 1.0);
        QCOMPARE(signed_rank_p(std::vector<double>{}), 1.0);
        // Balanced signs: p = 1 (capped).
        QCOMPARE(signed_rank_p(std::vector<double>{-0.1, 0.1, -0.2, 0.2}), 1.0);
    }

    void signedRankNormal() {
        // 1..30, all positive: W = 465, mean 232.5, var 30*31*61/24; z = 232 / 48.62 = 4.77,
        // two-sided p = 1.82e-6 (scipy.stats.wilcoxon, correction=True, says the same).
        std::vector<double> d;
        for (int i = 1; i <= 30; ++i)
            d.push_back(i);
        const double z = (465.0 - 232.5 - 0.5) / std::sqrt(30.0 * 31 * 61 / 24);
        QVERIFY(std::fabs(signed_rank_p(d) - std::erfc(z / std::sqrt(2.0))) < 1e-12);
        QVERIFY(signed_rank_p(d) > 1.7e-6 && signed_rank_p(d) < 1.9e-6);
    }

    // The bootstrap interval holds the median, is deterministic for one seed, and collapses
    // for constant data.
    void bootstrapInterval() {
        std::vector<double> d;
        for (int i = 0; i < 21; ++i)
            d.push_back(0.001 * ((i * 7) % 21) - 0.01);
        const auto [lo, hi] = bootstrap_median_interval(d);
        QVERIFY(lo <= 0 && 0 <= hi); // the median of -0.01..0.01 is 0
        QVERIFY(lo >= -0.01 && hi <= 0.01);
        QCOMPARE(bootstrap_median_interval(d), std::make_pair(lo, hi));
        const std::vector<double> flat(9, 0.05);
        QCOMPARE(bootstrap_median_interval(flat), std::make_pair(0.05, 0.05));
    }

    // The paired rule: a clear 5 % slowdown over 12 pairs is SLOWER; a +-0.5 % jitter is
    // SAME; a large scatter is AMBIGUOUS; four pairs are too few; identical code is MACHINE,
    // never SLOWER; and a report's verdicts read back as written (MACHINE too).
    void judgePaired() {
        std::vector<double> slower, same, scattered, few;
        for (int i = 0; i < 12; ++i) {
            const double jitter = 0.005 * ((i % 5) - 2) / 2; // -0.5 % .. +0.5 %
            slower.push_back(std::log(1.05) + jitter);
            same.push_back(jitter);
            scattered.push_back(i % 2 ? 0.3 : -0.25);
        }
        few.assign(slower.begin(), slower.begin() + 4);
        const std::vector<std::vector<double>> rows{slower, same, scattered, few, same};
        const auto v = judge_paired(rows, CompareOptions{}, {false, false, false, false, true});
        QCOMPARE(v.size(), rows.size());
        QCOMPARE(v[0].verdict, Verdict::Slower);
        QVERIFY(std::fabs(v[0].ratio - 1.05) < 0.006);
        QVERIFY(v[0].ci_low > 1.02 && v[0].ci_high < 1.06);
        QCOMPARE(v[1].verdict, Verdict::Same);
        QCOMPARE(v[2].verdict, Verdict::Ambiguous);
        QCOMPARE(v[3].verdict, Verdict::Ambiguous);
        QVERIFY2(v[3].note.find("a verdict needs 5") != std::string::npos, v[3].note.c_str());
        QCOMPARE(v[4].verdict, Verdict::Same);
        QVERIFY(v[4].note.find("identical code") != std::string::npos);
        QVERIFY(v[0].q_value >= v[0].p_value); // Benjamini-Hochberg never lowers p
        for (const auto& c : v) {
            const auto back = PairedComparison::from_json(c.to_json());
            QCOMPARE(back.verdict, c.verdict);
            QCOMPARE(back.pairs, c.pairs);
            QCOMPARE(back.identical_code, c.identical_code);
            QCOMPARE(back.note, c.note);
            QCOMPARE(back.machine_gap, c.machine_gap);
        }
    }

    // A row settles SAME once the interval of its median lies within half the threshold:
    // never a change of the threshold's size, nor a row of too few pairs.
    void settledSameIsWithinHalfTheThreshold() {
        std::vector<double> alike, two_percent, scattered;
        for (int i = 0; i < 10; ++i) {
            const double jitter = 0.002 * ((i % 5) - 2); // -0.4 % .. +0.4 %
            alike.push_back(jitter);
            two_percent.push_back(std::log(1.02) + jitter);
            scattered.push_back(i % 2 ? 0.05 : -0.05);
        }
        QVERIFY(settled_same(alike, 0.02));
        QVERIFY(!settled_same(two_percent, 0.02));
        QVERIFY(settled_same(two_percent, 0.06)); // within 3 %
        QVERIFY(!settled_same(scattered, 0.02));
        QVERIFY(!settled_same(std::span(alike).first(4), 0.02)); // under kMinPairs
    }

    // The machine gap: a difference in code is called only past the gap that rows of
    // identical code showed in the same run (two workers of one build sat 2-3 % apart).
    void judgePairedWithinTheMachineGap() {
        auto steady = [](double ratio) {
            std::vector<double> d;
            for (int i = 0; i < 20; ++i)
                d.push_back(std::log(ratio) + 0.002 * ((i % 5) - 2));
            return d;
        };
        // Identical code 5 % apart: MACHINE, and a 4.5 % change in code beside it is not called.
        auto v =
            judge_paired(std::vector{steady(1.045), steady(1.05)}, CompareOptions{}, {false, true});
        QCOMPARE(v[1].verdict, Verdict::Machine);
        QCOMPARE(v[0].verdict, Verdict::Ambiguous);
        QVERIFY2(v[0].note.find("the machine can explain it") != std::string::npos,
                 v[0].note.c_str());
        // The gap is the near end of the control's interval: 5 % less its spread.
        QVERIFY2(v[0].machine_gap > 0.045 && v[0].machine_gap <= 0.05,
                 std::to_string(v[0].machine_gap).c_str());
        // A control that noise scattered (its interval holds 1) raises no bar.
        std::vector<double> scattered;
        for (int i = 0; i < 20; ++i)
            scattered.push_back(std::log(1.06) * (i % 2 ? 1.5 : -1.0));
        v = judge_paired(std::vector{steady(1.03), scattered}, CompareOptions{}, {false, true});
        QCOMPARE(v[0].machine_gap, 0.0);
        QCOMPARE(v[0].verdict, Verdict::Slower);
        // 3 % in code beside 1.5 % of the machine: SLOWER, the gap named; 2.5 % beside 3 %: not.
        v = judge_paired(std::vector{steady(1.03), steady(1.015)}, CompareOptions{}, {false, true});
        QCOMPARE(v[0].verdict, Verdict::Slower);
        QVERIFY2(v[0].note.find("identical-code rows moved apart") == std::string::npos,
                 v[0].note.c_str()); // the 2 % threshold was the larger
        v = judge_paired(std::vector{steady(1.04), steady(1.03)}, CompareOptions{}, {false, true});
        QCOMPARE(v[0].verdict, Verdict::Slower);
        QVERIFY2(v[0].note.find("% the run's identical-code rows moved apart") != std::string::npos,
                 v[0].note.c_str());
        v = judge_paired(std::vector{steady(1.025), steady(1.03)}, CompareOptions{}, {false, true});
        QCOMPARE(v[0].verdict, Verdict::Ambiguous);
        // No identical row: the threshold alone.
        v = judge_paired(std::vector{steady(1.025), steady(1.0)}, CompareOptions{});
        QCOMPARE(v[0].verdict, Verdict::Slower);
        QCOMPARE(v[0].machine_gap, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestStats)
#include "tst_stats.moc"
