// SPDX-License-Identifier: MIT
// switchyard-cli list/show/matrix/resolve as other tools use it: output, --json, exit codes.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include "support/childprocess.h"
#include <switchyard/sdk/version.h>

#include <sys/stat.h>

namespace {

using Run = switchyard::test::ProcessResult;

Run cli(const QStringList& args, const QString& pluginPath = {}) {
    return switchyard::test::run_cli(args, pluginPath, {.timeout_ms = 60000});
}

QJsonDocument parse(const QByteArray& bytes) {
    QJsonParseError error;
    auto doc = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON (%s): %s", qPrintable(error.errorString()), bytes.left(400).constData());
    return doc;
}

} // namespace

class TestCliRegistry : public QObject {
    Q_OBJECT
private slots:
    void exitCodes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("stderrContains");
        QTest::newRow("list") << QStringList{"list"} << 0 << "";
        QTest::newRow("no subcommand") << QStringList{} << 2 << "";
        QTest::newRow("unknown subcommand") << QStringList{"lsit"} << 2 << "";
        QTest::newRow("unknown option") << QStringList{"list", "--bogus"} << 2 << "";
        QTest::newRow("show unknown name")
            << QStringList{"show", "cpuu"} << 2 << "did you mean: 'cpu'?";
        QTest::newRow("show without name") << QStringList{"show"} << 2 << "";
        QTest::newRow("resolve unknown op")
            << QStringList{"resolve", "gemn"} << 2 << "did you mean: 'gemm'?";
        QTest::newRow("resolve bad device") << QStringList{"resolve", "gemm", "--target", "tpu"}
                                            << 2 << "known devices: cpu, cuda, opencl, vulkan";
        QTest::newRow("resolve bad arch")
            << QStringList{"resolve", "gemm", "--target", "cuda:volta"} << 2
            << "unknown arch 'volta'";
        QTest::newRow("resolve unknown variant")
            << QStringList{"resolve", "gemm", "--variant", "nope"} << 2 << "unknown variant 'nope'";
        QTest::newRow("resolve variant of another arch falls back")
            << QStringList{"resolve", "gemm", "--variant", "reference"} << 0 << "";
        QTest::newRow("matrix json and csv") << QStringList{"matrix", "--json", "--csv"} << 2 << "";
        QTest::newRow("help") << QStringList{"--help"} << 0 << "";
    }
    void exitCodes() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, stderrContains);
        const Run r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), r.err.constData());
    }

    // SWITCHYARD_MAX_ISA / --max-isa cap what detection reports: resolution picks what a
    // smaller machine would, and the JSON says what the CPU really runs.
    void isaCapIsApplied() {
        // The suite itself may run capped (CI runs it so): the plain runs clear the variable.
        const switchyard::test::ProcessOptions uncapped{.env = {{"SWITCHYARD_MAX_ISA", ""}},
                                                        .timeout_ms = 60000};
        const Run hw =
            switchyard::test::run_cli({"hardware", "--json", "--no-probe"}, {}, uncapped);
        QVERIFY2(hw.code == 0, hw.err.constData());
        const auto cpu = parse(hw.out).object()["cpu"].toObject();
        QStringList detected;
        for (const auto& l : cpu["detected_isa_levels"].toArray())
            detected << l.toString();
        QVERIFY(cpu["isa_cap"].isNull());
        const QStringList ladder = {"generic", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
        if (!detected.isEmpty() && !ladder.contains(detected.last()))
            QSKIP("not an x86-64 CPU");
        for (const QString& cap : ladder) {
            const Run capped = switchyard::test::run_cli(
                {"--max-isa", cap, "hardware", "--json", "--no-probe"}, {}, uncapped);
            QVERIFY2(capped.code == 0, capped.err.constData());
            const auto c = parse(capped.out).object()["cpu"].toObject();
            QCOMPARE(c["isa_cap"].toString(), cap);
            // The best level is the cap where the CPU runs it, else what the CPU runs.
            const QString best = detected.contains(cap) || cap == "generic"
                                     ? cap
                                     : (detected.isEmpty() ? QString("generic") : detected.last());
            QCOMPARE(c["best_level"].toString(), best);
            for (const auto& l : c["isa_levels"].toArray())
                QVERIFY(ladder.indexOf(l.toString()) <= ladder.indexOf(best));
            // The built-in gemm cells sit on generic, v3 and v4: the chain picks the most
            // specific one the capped level allows (the variable works like the option).
            const Run r = switchyard::test::run_cli(
                {"resolve", "gemm", "--json"}, {},
                {.env = {{"SWITCHYARD_MAX_ISA", cap}}, .timeout_ms = 60000});
            QVERIFY2(r.code == 0, r.err.constData());
            const QString arch = best == "x86-64-v4"   ? "x86-64-v4"
                                 : best == "x86-64-v3" ? "x86-64-v3"
                                                       : "generic";
            QString winner;
            for (const auto& rung : parse(r.out).object()["rungs"].toArray())
                if (rung.toObject()["winner"].toBool())
                    winner = rung.toObject()["arch"].toString();
            QCOMPARE(winner, arch);
        }
        const Run bad = cli({"--max-isa", "x86-64-v9", "list"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("--max-isa 'x86-64-v9' is not an ISA level; did you mean "
                                  "'x86-64-v4' or 'x86-64-v3'? use one of "
                                  "generic x86-64-v2 x86-64-v3 x86-64-v4"),
                 bad.err.constData());
    }

    void listJson() {
        const Run r = cli({"list", "--json", "--all", "--include-unavailable"});
        QCOMPARE(r.code, 0);
        const auto doc = parse(r.out).object();
        QCOMPARE(doc["format"].toString(), QStringLiteral("switchyard.list"));
        QCOMPARE(doc["format_version"].toInt(), 1);
        const auto rows = doc["backends"].toArray();
        QVERIFY(!rows.isEmpty());
        bool sawCpu = false;
        QString previous;
        for (const auto& v : rows) {
            const auto o = v.toObject();
            for (const char* f :
                 {"name", "source", "tags", "available", "missing_deps", "state", "cause", "error"})
                QVERIFY2(o.contains(f), f);
            QVERIFY(previous <= o["name"].toString()); // sorted
            previous = o["name"].toString();
            if (o["name"].toString() == "cpu") {
                sawCpu = true;
                QCOMPARE(o["source"].toString(), QStringLiteral("builtin"));
                QCOMPARE(o["available"].toBool(), true);
                QCOMPARE(o["state"].toString(), QStringLiteral("loaded"));
            }
        }
        QVERIFY(sawCpu);
    }

    void listShowsShadowedPluginsWithTheirOwner() {
        const QString fixtures = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins/");
        const QString path = fixtures + "dup_a:" + fixtures + "dup_b/:" + fixtures + "claims_cpu";
        Run r = cli({"list", "--json", "--all", "--include-unavailable"}, path);
        QCOMPARE(r.code, 0);
        int dups = 0, shadowed = 0;
        for (const auto& v : parse(r.out).object()["backends"].toArray()) {
            const auto o = v.toObject();
            if (o["name"].toString() == "fixture-dup")
                ++dups;
            if (o["state"].toString() == "shadowed") {
                ++shadowed;
                QVERIFY(o["error"].toString().contains("is owned by"));
                QCOMPARE(o["cause"].toString(), QStringLiteral("shadowed"));
                QCOMPARE(o["available"].toBool(), false);
            }
        }
        QCOMPARE(dups, 2);
        QCOMPARE(shadowed, 2); // the second fixture-dup, and the plugin named cpu
        r = cli({"list", "--json", "--all"}, path); // usable ones only: no shadowed entries
        for (const auto& v : parse(r.out).object()["backends"].toArray())
            QVERIFY(v.toObject()["state"].toString() != "shadowed");
    }

    void showJson() {
        const Run r = cli({"show", "cpu", "--json"});
        QCOMPARE(r.code, 0);
        const auto o = parse(r.out).object();
        QCOMPARE(o["format"].toString(), QStringLiteral("switchyard.show"));
        QCOMPARE(o["format_version"].toInt(), 1);
        QCOMPARE(o["name"].toString(), QStringLiteral("cpu"));
        QCOMPARE(o["cause"].toString(), QStringLiteral("none"));
        // The built-in speaks this core's backend contract (switchyard::kContractVersion).
        QCOMPARE(o["capabilities"].toObject()["contract_version"].toInt(),
                 switchyard::kContractVersion);
        QVERIFY(o["dependencies"].isArray());
        bool sawReference = false;
        for (const auto& k : o["kernels"].toArray()) {
            const auto key = k.toObject()["key"].toArray();
            QCOMPARE(key.size(), 4);
            if (key[3].toString() == "reference")
                sawReference = true;
        }
        QVERIFY(sawReference);
    }

    void showHuman() {
        const Run r = cli({"show", "cpu"});
        QCOMPARE(r.code, 0);
        const QString text = QString::fromUtf8(r.out);
        QVERIFY(text.startsWith("cpu  (builtin, loaded)"));
        QVERIFY(text.contains("(gemm, cpu, generic, reference)"));
        QVERIFY(text.contains("Dependencies:"));
    }

    void matrixJsonIsTheSeedManifest() {
        const Run r = cli({"matrix", "--json"});
        QCOMPARE(r.code, 0);
        const auto doc = parse(r.out).object();
        QCOMPARE(doc["format"].toString(), QStringLiteral("switchyard.matrix"));
        QCOMPARE(doc["format_version"].toInt(), 1);
        const auto rows = doc["cells"].toArray();
        QVERIFY(rows.size() >= 4);
        QStringList previous;
        for (const auto& v : rows) {
            const auto o = v.toObject();
            for (const char* f : {"op", "device", "arch", "variant", "available", "source",
                                  "workspace_bytes", "backend"})
                QVERIFY2(o.contains(f), f);
            const QStringList key{o["op"].toString(), o["device"].toString(), o["arch"].toString(),
                                  o["variant"].toString()};
            if (!previous.isEmpty()) {
                // sorted by the key rendered as strings, field by field
                bool less = false;
                for (int i = 0; i < 4; ++i) {
                    if (previous[i] != key[i]) {
                        less = previous[i].toUtf8() < key[i].toUtf8();
                        break;
                    }
                }
                QVERIFY2(less, qPrintable(previous.join('/') + " before " + key.join('/')));
            }
            previous = key;
        }
    }

    // Every backend that is not loaded says why, as a stable id.
    void listAndShowCarryTheCause() {
        const QString fixtures = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins/");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString open = tmp.filePath("open");
        QDir().mkpath(open);
        for (const auto& entry : QDir(fixtures + "good").entryInfoList(QDir::Files))
            QVERIFY(QFile::copy(entry.filePath(), open + "/" + entry.fileName()));
        QCOMPARE(::chmod(open.toLocal8Bit().constData(), 0777), 0);
        const QString path = fixtures + "library_missing:" + fixtures + "missing_dep:" + fixtures +
                             "invalid_json:" + fixtures + "unavailable:" + open;
        const QMap<QString, QString> expected{
            {"fixture-library-missing", "library_missing"},
            {"broken", "invalid_manifest"},
            {"fixture-unavailable", "optional_dependency_missing"},
            {"fixture-good", "untrusted"},
            {"cpu", "none"}};
        const Run r = cli({"list", "--json", "--all", "--include-unavailable"}, path);
        QCOMPARE(r.code, 0);
        QMap<QString, QString> causes;
        for (const auto& v : parse(r.out).object()["backends"].toArray()) {
            const auto o = v.toObject();
            causes[o["name"].toString()] = o["cause"].toString();
            if (o["state"].toString() != "loaded" && o["state"].toString() != "discovered")
                QVERIFY2(o["cause"].toString() != "none", qPrintable(o["name"].toString()));
        }
        for (auto it = expected.begin(); it != expected.end(); ++it)
            QCOMPARE(causes.value(it.key()), it.value());
        // A library missing is known at discovery: not usable, so not in the default list.
        const Run usable = cli({"list", "--json", "--all"}, path);
        for (const auto& v : parse(usable.out).object()["backends"].toArray())
            QVERIFY(v.toObject()["name"].toString() != "fixture-library-missing");
        // show describes in detail: the missing DT_NEEDED is found and stored.
        const Run show = cli({"show", "fixture-missing-dep", "--json"}, path);
        QCOMPARE(show.code, 1);
        const auto o = parse(show.out).object();
        QCOMPARE(o["cause"].toString(), QStringLiteral("library_dependency_missing"));
        QCOMPARE(o["library_dependencies"].toObject()["unresolved"].toArray().first().toString(),
                 QStringLiteral("libswitchyard-nonexistent-dep.so.1"));
        QVERIFY(o["library_dependencies"].toObject()["dependencies"].isArray());
        const Run untrusted = cli({"show", "fixture-good", "--json"}, path);
        QCOMPARE(parse(untrusted.out).object()["cause"].toString(), QStringLiteral("untrusted"));
        const Run text = cli({"show", "fixture-good"}, path);
        QVERIFY2(QString::fromUtf8(text.out).contains("Problem (untrusted)"), text.out.constData());
    }

    void resolveAndMatrixHaveAFormat() {
        const Run r = cli({"resolve", "gemm", "--json"});
        QCOMPARE(parse(r.out).object()["format"].toString(), QStringLiteral("switchyard.resolve"));
        QCOMPARE(parse(r.out).object()["format_version"].toInt(), 1);
    }

    void matrixCsv() {
        const Run r = cli({"matrix", "--csv"});
        QCOMPARE(r.code, 0);
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.first(),
                 QStringLiteral("op,device,arch,variant,available,source,workspace_bytes,backend"));
        QVERIFY(lines.contains("gemm,cpu,generic,reference,true,builtin,0,cpu"));
    }

    void resolveJson_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("rungs");
        QTest::newRow("cuda sm_90 on a machine without it") << "cuda:sm_90" << 7;
        QTest::newRow("opencl") << "opencl" << 2;
        QTest::newRow("cpu reference") << "cpu:generic" << 2;
    }
    void resolveJson() {
        QFETCH(QString, target);
        QFETCH(int, rungs);
        const Run r = cli({"resolve", "rms_norm", "--target", target, "--json"});
        QCOMPARE(r.code, 0);
        const auto o = parse(r.out).object();
        const auto chain = o["rungs"].toArray();
        QCOMPARE(chain.size(), rungs);
        const auto last = chain.last().toObject();
        QCOMPARE(last["device"].toString(), QStringLiteral("cpu"));
        QCOMPARE(last["variant"].toString(), QStringLiteral("reference"));
        QVERIFY(last["declared"].toBool());
        QVERIFY(!o["winner"].isNull());
        for (const auto& v : chain) {
            const auto rung = v.toObject();
            if (!rung["available"].toBool())
                QVERIFY(!rung["why_not"].toString().isEmpty());
        }
    }

    void resolveHuman() {
        const Run r = cli({"resolve", "gemm", "--target", "cpu:generic", "--variant", "reference"});
        QCOMPARE(r.code, 0);
        QVERIFY(QString::fromUtf8(r.out).contains(
            "Selected: (gemm, cpu, generic, reference) from backend 'cpu'"));
    }
};

QTEST_GUILESS_MAIN(TestCliRegistry)
#include "tst_cli_registry.moc"
