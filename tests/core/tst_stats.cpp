// SPDX-License-Identifier: MIT
// Statistics against hand-computed values, the stopping rule, the Mann-Whitney U test.
#include <QtTest>

#include <switchyard/profiling/stats.h>

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
};

QTEST_GUILESS_MAIN(TestStats)
#include "tst_stats.moc"
