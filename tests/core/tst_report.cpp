// SPDX-License-Identifier: MIT
// Report round trip and the robust reader: truncated, malformed and hostile files get a
// clear error, never a crash.
#include <QtTest>

#include <switchyard/report/report.h>

#include <QTemporaryDir>

#include <fstream>

using namespace switchyard;

namespace {

Report sample_report() {
    Report r;
    r.context = {{"switchyard", {{"version", "0.1.0"}}}, {"date", "2024-01-01T00:00:00Z"}};
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
    row.parity.checked = true;
    row.parity.pass = true;
    row.parity.max_abs_error = 1e-7;
    row.parity.tolerance = {1e-6, 1e-4};
    row.warnings = {"noisy"};
    r.rows.push_back(row);
    ProfileRow crashed = row;
    crashed.spec.index = 1;
    crashed.spec.variant = "threaded";
    crashed.status = "crashed";
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
    void roundTrip() {
        const auto r = sample_report();
        QTemporaryDir dir;
        const auto path = dir.filePath("r.json").toStdString();
        r.save(path);
        const auto back = Report::load(path);
        QCOMPARE(back.to_json(), r.to_json());
        QCOMPARE(back.rows.size(), std::size_t(2));
        QCOMPARE(back.rows[1].status, std::string("crashed"));
        QCOMPARE(std::string(back.rows[0].parity.verdict()), std::string("PASS"));
        QCOMPARE(std::string(back.rows[1].parity.verdict()), std::string("NOT_CHECKED"));
        QCOMPARE(back.rows[0].spec.workspace_bytes, std::int64_t(4096));
    }

    void csvHasOneLinePerRow() {
        const auto csv = sample_report().to_csv();
        QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 3L);
        QVERIFY(csv.find("\"killed by signal 11 (SIGSEGV)\"") == std::string::npos); // no comma: unquoted
    }

    void badInputs_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");
        const auto good = QByteArray::fromStdString(sample_report().to_json().dump());
        QTest::newRow("empty") << QByteArray() << "empty file";
        QTest::newRow("truncated") << good.left(good.size() / 2) << "truncated";
        QTest::newRow("garbage") << QByteArray("\x7f" "ELF\x01\x02garbage") << "malformed JSON";
        QTest::newRow("not an object") << QByteArray("[1, 2, 3]") << "expected a JSON object";
        QTest::newRow("wrong format") << QByteArray(R"({"format": "other", "format_version": 1})") << "report.format";
        QTest::newRow("future version")
            << QByteArray(R"({"format": "switchyard-profile-report", "format_version": 99, "context": {}, "rows": []})")
            << "newer";
        QTest::newRow("rows not array")
            << QByteArray(R"({"format": "switchyard-profile-report", "format_version": 1, "context": {}, "rows": 5})")
            << "report.rows";
        QByteArray deep(100000, '[');
        QTest::newRow("deep nesting") << deep << "nested deeper";
        QByteArray deep_string = "{\"a\": \"" + QByteArray(1000, '[') + "\"}";
        QTest::newRow("brackets in a string are not nesting") << deep_string << "report.format";
        auto bad_stat = sample_report().to_json();
        bad_stat["rows"][0]["stats"]["median"] = "fast";
        QTest::newRow("wrong type") << QByteArray::fromStdString(bad_stat.dump()) << "rows[0].stats.median";
        auto bad_status = sample_report().to_json();
        bad_status["rows"][1]["status"] = "exploded";
        QTest::newRow("unknown status") << QByteArray::fromStdString(bad_status.dump()) << "rows[1].status";
        auto huge = sample_report().to_json();
        huge["rows"][0]["launches_per_sample"] = 1e300;
        QTest::newRow("huge number") << QByteArray::fromStdString(huge.dump()) << "launches_per_sample";
        auto neg = sample_report().to_json();
        neg["rows"][0]["samples"][1] = -1.0;
        QTest::newRow("negative sample") << QByteArray::fromStdString(neg.dump()) << "rows[0].samples[1]";
        auto dims = sample_report().to_json();
        dims["rows"][0]["dims"] = {1, 2};
        QTest::newRow("bad dims") << QByteArray::fromStdString(dims.dump()) << "rows[0].dims";
        auto missing = sample_report().to_json();
        missing["rows"][0].erase("op");
        QTest::newRow("missing key") << QByteArray::fromStdString(missing.dump()) << "rows[0].op: missing";
        QTest::newRow("invalid utf8") << QByteArray("{\"format\": \"\xff\xfe\"}") << "malformed JSON";
    }
    void badInputs() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        try {
            Report::parse(std::string_view(text.constData(), std::size_t(text.size())), "x.json");
            QFAIL("accepted a bad report");
        } catch (const ReportError& e) {
            QVERIFY2(std::string(e.what()).find(message.toStdString()) != std::string::npos, e.what());
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

    // Random byte flips: either parses or throws ReportError, nothing else.
    void mutationsNeverCrash() {
        const auto text = sample_report().to_json().dump();
        std::uint64_t state = 42;
        for (int i = 0; i < 2000; ++i) {
            std::string t = text;
            for (int k = 0; k < 3; ++k) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                t[(state >> 33) % t.size()] = char((state >> 17) & 0xff);
            }
            try {
                Report::parse(t);
            } catch (const ReportError&) {
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
