// SPDX-License-Identifier: MIT
// Clocks per row: the throttle rule on synthetic samples, RowClock's JSON, the
// dependent-add chain and the perf_event_open counter. Nothing here expects this machine's
// counters to exist or not: an unavailable counter only has to say why.
#include <QtTest>

#include <switchyard/profiling/clocks.h>
#include <switchyard/report/report.h>

#include "util/jsonread.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using namespace switchyard;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

RowClockReadings samples(std::vector<double> ghz) {
    RowClockReadings r;
    r.sample_ghz = std::move(ghz);
    r.method = "perf_event_open cycles";
    return r;
}

std::vector<bool> bools(std::initializer_list<int> v) {
    std::vector<bool> out;
    for (int b : v)
        out.push_back(b != 0);
    return out;
}

// A busy loop of about `ns` that the compiler cannot remove.
std::uint64_t busy_for_ns(std::int64_t ns) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    std::uint64_t x = 1;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            asm volatile("" : "+r"(x));
        }
    return x;
}

} // namespace

class TestClocks : public QObject {
    Q_OBJECT

private slots:
    void throttleDiscardsBelowThreshold() {
        // best 3.0: the floor is 2.25; 2.2 and 1.0 go, 2.25 (exactly at it) stays.
        const auto v = apply_throttle_threshold(samples({3.0, 2.9, 2.2, 2.25, 1.0, 3.0}));
        QCOMPARE(v.keep, bools({1, 1, 0, 1, 0, 1}));
        QCOMPARE(v.discarded, 2);
        QCOMPARE(v.clock.samples_discarded, 2);
        QVERIFY(v.clock.throttled);
        QCOMPARE(v.clock.best_ghz, 3.0);
        QCOMPARE(v.clock.min_ghz, 1.0); // over every known sample, discarded ones included
        QCOMPARE(v.clock.median_ghz, (2.25 + 2.9) / 2);
        QCOMPARE(v.clock.threshold, kDefaultThrottleThreshold);
        QCOMPARE(v.clock.method, std::string("perf_event_open cycles"));
    }

    void throttleKeepsASteadyRow() {
        const auto v = apply_throttle_threshold(samples({2.6, 2.59, 2.61, 2.6}));
        QCOMPARE(v.keep, bools({1, 1, 1, 1}));
        QCOMPARE(v.discarded, 0);
        QVERIFY(!v.clock.throttled);
        QCOMPARE(v.clock.best_ghz, 2.61);
        QCOMPARE(v.clock.median_ghz, 2.6);
    }

    void throttleKeepsUnknownClocks() {
        const double inf = std::numeric_limits<double>::infinity();
        const auto v = apply_throttle_threshold(samples({kNaN, 3.0, 0.0, 1.0, -2.0, inf, 2.4}));
        QCOMPARE(v.keep, bools({1, 1, 1, 0, 1, 1, 1}));
        QCOMPARE(v.discarded, 1);
        QCOMPARE(v.clock.best_ghz, 3.0);
        QCOMPARE(v.clock.min_ghz, 1.0);
        QCOMPARE(v.clock.median_ghz, 2.4); // of {1.0, 2.4, 3.0}
        QVERIFY(std::isfinite(v.clock.median_ghz));
    }

    void throttleThresholdZeroKeepsAll() {
        const auto v = apply_throttle_threshold(samples({3.0, 0.1, 1.5}), 0.0);
        QCOMPARE(v.keep, bools({1, 1, 1}));
        QCOMPARE(v.discarded, 0);
        QVERIFY(!v.clock.throttled);
        QCOMPARE(v.clock.threshold, 0.0);
    }

    void throttleThresholdOneKeepsOnlyTheBest() {
        const auto v = apply_throttle_threshold(samples({2.9, 3.0, 2.99, 3.0, kNaN}), 1.0);
        QCOMPARE(v.keep, bools({0, 1, 0, 1, 1})); // both best samples, and the unknown one
        QCOMPARE(v.discarded, 2);
        QVERIFY(v.clock.throttled);
    }

    void throttleRejectsABadThreshold() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 apply_throttle_threshold(samples({1.0}), 1.5));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 apply_throttle_threshold(samples({1.0}), -0.1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 apply_throttle_threshold(samples({1.0}), kNaN));
    }

    void throttleFromTheChainAlone() {
        RowClockReadings r;
        r.sample_ghz = {kNaN, kNaN, 0.0}; // a counter that knew nothing: the chain decides
        r.chain_before_ghz = 3.0;
        r.chain_after_ghz = 2.0; // < 0.75 x 3.0
        r.method = kDependentAddChainMethod;
        auto v = apply_throttle_threshold(r);
        QCOMPARE(v.keep, bools({1, 1, 1}));
        QCOMPARE(v.discarded, 0);
        QCOMPARE(v.clock.samples_discarded, 0);
        QVERIFY(v.clock.throttled);
        QCOMPARE(v.clock.best_ghz, 3.0);
        QCOMPARE(v.clock.min_ghz, 2.0);
        QCOMPARE(v.clock.median_ghz, 2.5);
        QCOMPARE(v.clock.method, std::string(kDependentAddChainMethod));

        r.chain_after_ghz = 2.25; // exactly 0.75 x before: not throttled
        v = apply_throttle_threshold(r);
        QVERIFY(!v.clock.throttled);
        // A faster clock after the row is never throttling.
        r.chain_after_ghz = 3.5;
        v = apply_throttle_threshold(r);
        QVERIFY(!v.clock.throttled);
        QCOMPARE(v.clock.best_ghz, 3.5);
        // Threshold 0: never throttled.
        r.chain_after_ghz = 0.5;
        QVERIFY(!apply_throttle_threshold(r, 0.0).clock.throttled);
        // One reading only: it is the summary, nothing is throttled.
        r.chain_after_ghz = kNaN;
        v = apply_throttle_threshold(r);
        QVERIFY(!v.clock.throttled);
        QCOMPARE(v.clock.best_ghz, 3.0);
        QCOMPARE(v.clock.min_ghz, 3.0);
    }

    void throttleWithNothingKnown() {
        RowClockReadings r;
        r.sample_ghz = {kNaN, kNaN};
        r.method = "none";
        const auto v = apply_throttle_threshold(r);
        QCOMPARE(v.keep, bools({1, 1}));
        QCOMPARE(v.discarded, 0);
        QCOMPARE(v.clock.best_ghz, 0.0);
        QCOMPARE(v.clock.median_ghz, 0.0);
        QCOMPARE(v.clock.min_ghz, 0.0);
        QVERIFY(!v.clock.throttled);
        QVERIFY(apply_throttle_threshold(RowClockReadings{}).keep.empty());
    }

    void rowClockJsonRoundTrip() {
        RowClock c;
        c.best_ghz = 3.1;
        c.median_ghz = 2.95;
        c.min_ghz = 1.2;
        c.method = "perf_event_open cycles";
        c.samples_discarded = 4;
        c.threshold = 0.8;
        c.throttled = true;
        const auto j = c.to_json();
        QCOMPARE(j.size(), std::size_t(7));
        // Through text, as a report is.
        const auto t = RowClock::from_json(nlohmann::json::parse(j.dump()));
        QCOMPARE(t.best_ghz, c.best_ghz);
        QCOMPARE(t.median_ghz, c.median_ghz);
        QCOMPARE(t.min_ghz, c.min_ghz);
        QCOMPARE(t.method, c.method);
        QCOMPARE(t.samples_discarded, c.samples_discarded);
        QCOMPARE(t.threshold, c.threshold);
        QCOMPARE(t.throttled, c.throttled);
        // The default (an unknown clock) too.
        const auto d = RowClock::from_json(RowClock{}.to_json());
        QCOMPARE(d.best_ghz, 0.0);
        QCOMPARE(d.threshold, kDefaultThrottleThreshold);
        QVERIFY(!d.throttled);
    }

    void rowClockJsonErrorsNameTheKey_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value"); // JSON text; empty: the key is removed
        QTest::addColumn<QString>("message");
        QTest::newRow("string ghz") << "best_ghz"
                                    << "\"fast\""
                                    << "clock.best_ghz: expected a number, got string";
        QTest::newRow("negative ghz") << "min_ghz"
                                      << "-1"
                                      << "clock.min_ghz: expected a non-negative";
        QTest::newRow("missing method") << "method"
                                        << ""
                                        << "clock.method: missing";
        QTest::newRow("fractional count") << "samples_discarded"
                                          << "1.5"
                                          << "clock.samples_discarded: ";
        QTest::newRow("negative count") << "samples_discarded"
                                        << "-3"
                                        << "clock.samples_discarded: ";
        QTest::newRow("threshold > 1") << "threshold"
                                       << "2"
                                       << "clock.threshold: expected a number from 0 to 1";
        QTest::newRow("throttled string") << "throttled"
                                          << "\"yes\""
                                          << "clock.throttled: ";
    }
    void rowClockJsonErrorsNameTheKey() {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, message);
        auto j = RowClock{}.to_json();
        if (value.isEmpty())
            j.erase(key.toStdString());
        else
            j[key.toStdString()] = nlohmann::json::parse(value.toStdString());
        try {
            RowClock::from_json(j);
            QFAIL("no error");
        } catch (const jsonread::Error& e) {
            QVERIFY2(std::string(e.what()).rfind(message.toStdString(), 0) == 0, e.what());
        }
    }

    void rowClockJsonErrorInsideADocument() {
        // Nested through jsonread's get<T>() inside the core's report reader, the path is the
        // report's (the reader and RowClock's from_json share the core's jsonread; a suite's
        // own copy, switchyard-core-util-static, would not continue the core's path).
        Report report;
        report.context = nlohmann::json::object();
        ProfileRow row;
        row.spec.op = "rms_norm";
        row.spec.size = "3x1023";
        row.spec.device = "cpu";
        row.spec.device_kind = "cpu";
        row.spec.arch = "generic";
        row.spec.variant = "default";
        row.spec.backend = "cpu";
        row.clock = {.best_ghz = 3, .median_ghz = 3, .min_ghz = 3, .method = "m"};
        report.rows.push_back(row);
        auto doc = report.to_json();
        QVERIFY_THROWS_NO_EXCEPTION(Report::from_json(doc));
        doc["rows"][0]["clock"]["min_ghz"] = "x";
        try {
            Report::from_json(doc);
            QFAIL("no error");
        } catch (const ReportError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("rows[0].clock.min_ghz: expected a number, got string"));
        }
        QVERIFY_THROWS_EXCEPTION(jsonread::Error, RowClock::from_json(nlohmann::json::array()));
    }

    void chainGivesAPlausibleClock() {
        const double a = dependent_add_chain_ghz();
        const double b = dependent_add_chain_ghz();
        qInfo("dependent-add chain: %.3f GHz, %.3f GHz", a, b);
        QVERIFY2(a >= 0.5 && a <= 7.0, qPrintable(QString::number(a)));
        QVERIFY2(b >= 0.5 && b <= 7.0, qPrintable(QString::number(b)));
        // Loose: another job on a shared core can slow one call, never by 2x on both.
        QVERIFY2(a / b < 2.0 && b / a < 2.0, qPrintable(QString("%1 vs %2").arg(a).arg(b)));
        QCOMPARE(dependent_add_chain_ghz(0), 0.0);
        QCOMPARE(dependent_add_chain_ghz(-5), 0.0);
    }

    void chainIsShort() {
        const auto t0 = std::chrono::steady_clock::now();
        dependent_add_chain_ghz();
        const auto ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        qInfo("dependent-add chain: %.3f ms for 3 x %d adds", ms,
              kDefaultChainIterations * kDependentAddsPerIteration);
        // ~0.6 ms; loose for a busy CI host, whose preemptions take tens of ms
        QVERIFY2(ms < 250, qPrintable(QString::number(ms)));
    }

    void counterWorksOrSaysWhy() {
        CpuClockCounter counter;
        qInfo("CPU clock counter: %s", counter.method().c_str());
        QVERIFY(!counter.method().empty());
        if (!counter.available()) {
            QVERIFY(!counter.has_ref_cycles());
            QVERIFY(!counter.start());
            const auto s = counter.stop();
            QVERIFY(!s.valid);
            QCOMPARE(s.cycles, 0.0);
            QCOMPARE(s.ghz(), 0.0);
            return;
        }
        QVERIFY(counter.start());
        busy_for_ns(5'000'000);
        const auto s = counter.stop();
        QVERIFY(s.valid);
        QVERIFY(s.cycles > 0);
        QVERIFY(s.elapsed_ns > 0);
        QVERIFY(s.running_fraction > 0 && s.running_fraction <= 1);
        qInfo("counter: %.0f cycles in %.0f ns (%.0f ns on a CPU): %.3f GHz, ref-cycles %.0f",
              s.cycles, s.elapsed_ns, s.enabled_ns, s.ghz(), s.ref_cycles);
        QVERIFY2(s.ghz() >= 0.3 && s.ghz() <= 7.0, qPrintable(QString::number(s.ghz())));
        // stop() without start(): nothing.
        QVERIFY(!counter.stop().valid);
    }

    void counterReadsAndScalesASoftwareEvent() {
        // The counter's read/delta/scale path on an event every kernel has (task-clock: ns
        // on a CPU), so it runs even where there is no PMU. A sandbox may still refuse it.
        CpuClockCounter counter(1 /* PERF_TYPE_SOFTWARE */, 1 /* PERF_COUNT_SW_TASK_CLOCK */);
        qInfo("task-clock counter: %s", counter.method().c_str());
        QVERIFY(!counter.method().empty());
        QVERIFY(!counter.has_ref_cycles());
        if (!counter.available())
            QSKIP(qPrintable("no perf events here: " + QString::fromStdString(counter.method())));
        QCOMPARE(counter.method(), std::string("perf_event_open type 1 config 1"));
        for (int i = 0; i < 3; ++i) {
            QVERIFY(counter.start());
            busy_for_ns(3'000'000);
            const auto s = counter.stop();
            QVERIFY(s.valid);
            qInfo("task-clock: %.0f ns counted, %.0f enabled, %.0f elapsed, running %.3f", s.cycles,
                  s.enabled_ns, s.elapsed_ns, s.running_fraction);
            // On a CPU for some of the 3 ms: all of it on an idle machine, less where other
            // jobs share the cores (then elapsed_ns, the wall time, is longer).
            QVERIFY(s.cycles > 0);
            QVERIFY(s.enabled_ns > 0);
            QVERIFY(s.enabled_ns <= s.elapsed_ns * 1.01 + 1e5);
            QVERIFY(s.running_fraction > 0 && s.running_fraction <= 1);
            // Its own time over its own time: ~1 whatever the load (deltas, not totals).
            QVERIFY2(s.ghz() > 0.9 && s.ghz() < 1.1, qPrintable(QString::number(s.ghz())));
        }
    }

    void counterOnAnotherThreadGivesNothing() {
        CpuClockCounter counter;
        bool started = true;
        bool valid = true;
        std::thread t([&] {
            started = counter.start();
            valid = counter.stop().valid;
        });
        t.join();
        QVERIFY(!started);
        QVERIFY(!valid);
    }

    void counterMoves() {
        CpuClockCounter a;
        const bool available = a.available();
        const auto method = a.method();
        CpuClockCounter b(std::move(a));
        QCOMPARE(b.available(), available);
        QCOMPARE(b.method(), method);
        QVERIFY(!a.available()); // NOLINT(bugprone-use-after-move): moved-from is defined
        QVERIFY(!a.start());
        a = std::move(b);
        QCOMPARE(a.available(), available);
    }

    void sampleGhz() {
        CpuClockSample s;
        s.cycles = 3e6;
        s.elapsed_ns = 2e6;
        QCOMPARE(s.ghz(), 0.0); // not valid
        s.valid = true;
        QCOMPARE(s.ghz(), 1.5); // no kernel time: the wall clock
        s.enabled_ns = 1e6;     // on a CPU for half of it
        QCOMPARE(s.ghz(), 3.0);
    }
};

QTEST_GUILESS_MAIN(TestClocks)
#include "tst_clocks.moc"
