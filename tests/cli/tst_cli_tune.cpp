// SPDX-License-Identifier: MIT
// switchyard-cli tune and the resolution that follows a tuning, run as a user would, on a real
// plugin whose preferred cell is deliberately slow (tests/fixtures/tuning): tune keeps the
// fast cell, resolve follows it for the sizes measured, and an entry whose plugin was rebuilt,
// or that comes from another machine, is ignored alone with its reason.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <algorithm>

#include <switchyard/diagnosis/buildid.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/sdk/version.h>

#include "support/childprocess.h"

namespace {

const QString kTuningFixture = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/tuning");
const QString kRebuiltFixture = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/tuning-rebuilt");

QJsonObject parse(const QByteArray& text) {
    return QJsonDocument::fromJson(text).object();
}

} // namespace

class TestCliTune : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QJsonObject m_tuned; // tune --json's output
    // The cell tune kept: the fixture's fast generic/tunable, or the CPU reference where that
    // one is faster still (a sanitized build: both are scalar loops, instrumented).
    QString m_chosen;
    // A size the first entry covers: 8192, between the two measured, where one entry spans
    // both (the usual case: the two fast cells tie, and a range keeps one of them); else the
    // first entry's own size (the reference measured faster than the fixture's fast cell at
    // one size only, beyond the noise: two entries, with no range between them).
    QString m_inside = QStringLiteral("8192");

    QString tuningFile() const { return m_dir.filePath("this-machine.tuning"); }

    // The suite's own data folder and ceiling cache; tunings only from SWITCHYARD_TUNING.
    QMap<QString, QString> env(const QString& tuning) const {
        return {{"XDG_DATA_HOME", m_dir.filePath("xdg")},
                {"SWITCHYARD_CEILINGS_CACHE", m_dir.filePath("ceilings")},
                {"SWITCHYARD_TUNING", tuning}};
    }

    switchyard::test::ProcessResult cli(const QStringList& args, const QString& tuning,
                                        const QString& plugins = kTuningFixture) {
        return switchyard::test::run_cli(args, plugins, {.env = env(tuning)});
    }

    // resolve --json of flow_match_step's `tunable` chain at `size`.
    QJsonObject resolve(const QString& size, const QString& tuning,
                        const QString& plugins = kTuningFixture, const QStringList& extra = {}) {
        const auto r = cli(QStringList{"resolve", "flow_match_step", "--variant", "tunable",
                                       "--size", size, "--json"} +
                               extra,
                           tuning, plugins);
        if (r.code != 0)
            qWarning("resolve exited %d: %s", r.code, r.err.constData());
        return parse(r.out);
    }

    static QString selected(const QJsonObject& resolved) {
        const auto applied = resolved["tuning"].toObject()["applied"];
        if (applied.isObject())
            return applied.toObject()["cell"].toString();
        const auto winner = resolved["winner"].toObject();
        return winner.isEmpty() ? QString()
                                : winner["arch"].toString() + "/" + winner["variant"].toString();
    }

    static QStringList ignored(const QJsonObject& resolved) {
        QStringList out;
        for (const auto& w : resolved["tuning"].toObject()["ignored"].toArray())
            out << w.toString();
        return out;
    }

    // A copy of the tuning with `edit` applied to its document, written to `name`.
    QString editedTuning(const QString& name, const std::function<void(QJsonObject&)>& edit) {
        QFile in(tuningFile());
        if (!in.open(QIODevice::ReadOnly))
            return {};
        auto doc = parse(in.readAll());
        edit(doc);
        const QString path = m_dir.filePath(name);
        QFile out(path);
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return {};
        out.write(QJsonDocument(doc).toJson());
        return path;
    }

    // The tuning as another machine (another CPU brand) would have written it.
    QString otherMachinesTuning(const QString& name) {
        return editedTuning(name, [](QJsonObject& doc) {
            auto machine = doc["machine"].toObject();
            auto cpu = machine["cpu"].toObject();
            cpu["brand"] = "Another CPU";
            machine["cpu"] = cpu;
            doc["machine"] = machine;
        });
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!QFile::exists(kTuningFixture + "/tuning.plugin.json"))
            QSKIP("the tuning fixture plugin is not built");
        // The fixture's slow cell sits on the x86-64-v2 rung; other ladders never reach it.
        if (switchyard::host_cpu_arch().rfind("x86-64", 0) != 0)
            QSKIP("the fixture's chain is an x86-64 one");
        // Before tuning, the chain picks the slow cell.
        QCOMPARE(selected(resolve("4096", QString())), QStringLiteral("x86-64-v2/tunable"));
        // The chain's two cells (--cells: the built-in cells of other variants would win
        // otherwise), two sizes, three runs each: the fast generic cell beats the slow one (1 ms
        // and four passes a call).
        const auto r = cli({"tune", "--op", "flow_match_step", "--variant", "tunable", "--cells",
                            "tunable", "--device", "cpu", "--sizes", "4096,65536", "--budget",
                            "0.05", "--repeat", "3", "-o", tuningFile(), "--json"},
                           QString());
        QVERIFY2(r.code == 0, r.err.constData());
        m_tuned = parse(r.out);
        QCOMPARE(m_tuned["format"].toString(), QStringLiteral("switchyard.tune"));
        const auto entries = m_tuned["tuning"].toObject()["entries"].toArray();
        if (!entries.isEmpty()) {
            const auto first = entries[0].toObject();
            m_chosen = first["chosen"].toObject()["cell"].toString();
            if (first["sizes"].toArray().size() < 2)
                m_inside = first["sizes"].toArray()[0].toString();
        }
    }

    // The slow preferred cell is tuned away from at both sizes (one entry over both, or one
    // each where the two fast cells are told apart), with the evidence and both cells' code
    // identity.
    void slowPreferredCellIsTunedAway() {
        const auto entries = m_tuned["tuning"].toObject()["entries"].toArray();
        QVERIFY2(entries.size() == 1 || entries.size() == 2,
                 QJsonDocument(m_tuned).toJson().constData());
        qsizetype sizes = 0;
        for (const auto& entry : entries) {
            const auto o = entry.toObject();
            sizes += o["sizes"].toArray().size();
            QCOMPARE(o["overrides"].toObject()["cell"].toString(),
                     QStringLiteral("x86-64-v2/tunable"));
            QVERIFY(o["chosen"].toObject()["cell"].toString().startsWith("generic/"));
        }
        QCOMPARE(sizes, qsizetype(2));
        const auto e = entries[0].toObject();
        QCOMPARE(e["op"].toString(), QStringLiteral("flow_match_step"));
        QCOMPARE(e["device"].toString(), QStringLiteral("cpu"));
        QCOMPARE(e["variant"].toString(), QStringLiteral("tunable"));
        QVERIFY2(m_chosen == "generic/tunable" || m_chosen == "generic/reference",
                 qPrintable(m_chosen));
        // Both cells' code: the plugin's library, or the core for the built-in reference.
        const auto overridden = e["overrides"].toObject();
        QCOMPARE(overridden["backend"].toString(), QStringLiteral("fixture-tuning"));
        QCOMPARE(overridden["version"].toString(), QStringLiteral("1.0.0"));
        QCOMPARE(overridden["build_id"].toString().toStdString(),
                 switchyard::file_build_id(
                     (kTuningFixture + "/libswitchyard-fixture-tuning.so").toStdString()));
        const auto chosen = e["chosen"].toObject();
        QCOMPARE(chosen["build_id"].toString().toStdString(),
                 m_chosen == "generic/tunable"
                     ? switchyard::file_build_id(
                           (kTuningFixture + "/libswitchyard-fixture-tuning.so").toStdString())
                     : switchyard::core_build_id());
        QCOMPARE(e["evidence"].toArray().size(), e["sizes"].toArray().size());
        for (const auto& ev : e["evidence"].toArray()) {
            const auto x = ev.toObject();
            QVERIFY2(x["speedup"].toDouble() > 1.5, qPrintable(x["size"].toString()));
            QVERIFY(x["p_value"].toDouble() < 0.05);
            // --repeat 3 in the default 5 slices: max(repeat, slices) runs of each row.
            QCOMPARE(x["runs"].toInt(),
                     int(std::max<std::int64_t>(3, switchyard::ProfileSettings::kDefaultSlices)));
        }
        QVERIFY(QFile::exists(tuningFile()));
        QVERIFY(QFile::exists(m_tuned["report"].toString()));
    }

    // resolve follows the entry for the sizes it covers, says why, and --no-tuning or a size
    // outside the range resolves by the chain.
    void resolveFollowsTheTuning() {
        const auto tuned = resolve(m_inside, tuningFile());
        QCOMPARE(selected(tuned), m_chosen);
        const auto why = tuned["tuning"].toObject()["applied"].toObject()["explanation"].toString();
        QVERIFY2(why.startsWith("tuned -> " + m_chosen) &&
                     why.contains("the chain would pick x86-64-v2/tunable"),
                 qPrintable(why));
        QCOMPARE(selected(resolve(m_inside, tuningFile(), kTuningFixture, {"--no-tuning"})),
                 QStringLiteral("x86-64-v2/tunable"));
        const auto outside = resolve("16M", tuningFile());
        QCOMPARE(selected(outside), QStringLiteral("x86-64-v2/tunable"));
        QVERIFY2(ignored(outside).join("\n").contains("tuned for"),
                 qPrintable(ignored(outside).join("\n")));
        // The human output says it too.
        const auto text =
            cli({"resolve", "flow_match_step", "--variant", "tunable", "--size", m_inside},
                tuningFile());
        QVERIFY2(text.out.contains("Selected: (flow_match_step, cpu, generic, " +
                                   m_chosen.section('/', 1).toUtf8() + ")") &&
                     text.out.contains("tuned -> " + m_chosen.toUtf8()),
                 text.out.constData());
    }

    // profile's resolved row runs the tuned cell and says which pick it replaced; --no-tuning
    // runs the chain's.
    void profileFollowsTheTuning() {
        for (const bool follow : {true, false}) {
            QStringList args{"profile", "--op",   "flow_match_step", "--variant", "tunable",
                             "--sizes", m_inside, "--device",        "cpu",       "--budget",
                             "0.02",    "--json"};
            if (!follow)
                args << "--no-tuning";
            const auto r = cli(args, tuningFile());
            QVERIFY2(r.code == 0, r.err.constData());
            const auto report = parse(r.out);
            QJsonObject resolved;
            for (const auto& row : report["rows"].toArray())
                if (row.toObject()["resolved"].toBool())
                    resolved = row.toObject();
            QVERIFY2(!resolved.isEmpty(), r.out.constData());
            const QString cell = resolved["arch"].toString() + "/" + resolved["variant"].toString();
            QCOMPARE(cell, follow ? m_chosen : QStringLiteral("x86-64-v2/tunable"));
            QCOMPARE(resolved["tuned_from"].toString(),
                     follow ? QStringLiteral("x86-64-v2/tunable") : QString());
            QCOMPARE(resolved["code"].toObject()["backend"].toString(),
                     cell.endsWith("/tunable") ? QStringLiteral("fixture-tuning")
                                               : QStringLiteral("cpu"));
            QCOMPARE(report["context"].toObject()["settings"].toObject()["use_tuning"].toBool(),
                     follow);
        }
    }

    // The same plugin rebuilt (another build ID): its entry is ignored with the reason, and an
    // entry of a built-in cell in the same file still applies.
    void rebuiltPluginsEntryIsIgnoredAlone() {
        const auto builtin_id = QString::fromStdString(switchyard::core_build_id());
        const auto core = QString::fromStdString(std::string(switchyard::core_version()));
        // rms_norm's chain pick on this machine, from resolve itself.
        const auto r = cli({"resolve", "rms_norm", "--json", "--no-tuning"}, QString());
        const QString pick = selected(parse(r.out));
        QVERIFY(!pick.isEmpty());
        const QString path = editedTuning("two.tuning", [&](QJsonObject& doc) {
            auto entries = doc["entries"].toArray();
            auto e = entries[0].toObject();
            e["op"] = "rms_norm";
            e["variant"] = "default";
            e["sizes"] = QJsonArray{"4x1024"};
            e["min_work"] = 4096;
            e["max_work"] = 4096;
            const QJsonObject builtin{
                {"backend", "cpu"}, {"version", core}, {"build_id", builtin_id}};
            auto chosen = builtin;
            chosen["cell"] = "generic/reference";
            auto overrides = builtin;
            overrides["cell"] = pick;
            e["chosen"] = chosen;
            e["overrides"] = overrides;
            entries.append(e);
            doc["entries"] = entries;
        });
        QVERIFY(!path.isEmpty());
        const auto rebuilt = resolve(m_inside, path, kRebuiltFixture);
        QCOMPARE(selected(rebuilt), QStringLiteral("x86-64-v2/tunable"));
        QVERIFY2(ignored(rebuilt).join("\n").contains("fixture-tuning's library was rebuilt"),
                 qPrintable(ignored(rebuilt).join("\n")));
        const auto other =
            cli({"resolve", "rms_norm", "--size", "4x1024", "--json"}, path, kRebuiltFixture);
        QCOMPARE(selected(parse(other.out)), QStringLiteral("generic/reference"));
    }

    // A tuning measured on another machine is ignored, and says so.
    void otherMachinesTuningIsIgnored() {
        const QString path = otherMachinesTuning("other.tuning");
        const auto resolved = resolve(m_inside, path);
        QCOMPARE(selected(resolved), QStringLiteral("x86-64-v2/tunable"));
        QVERIFY2(ignored(resolved).join("\n").contains("tuned on another machine"),
                 qPrintable(ignored(resolved).join("\n")));
    }

    // matrix marks the cells a tuning that applies here chooses and overrides; --no-tuning,
    // or a tuning of another machine (said in a note), marks none.
    void matrixMarksTheTunedCells() {
        auto marks = [&](const QString& tuning, const QStringList& extra = {}) {
            const auto r = cli(QStringList{"matrix", "--json"} + extra, tuning);
            QMap<QString, QString> out;
            for (const auto& c : parse(r.out)["cells"].toArray()) {
                const auto cell = c.toObject();
                if (cell.contains("tuning"))
                    out[cell["op"].toString() + " " + cell["arch"].toString() + "/" +
                        cell["variant"].toString()] = cell["tuning"].toString();
            }
            return out;
        };
        const auto tuned = marks(tuningFile());
        QVERIFY2(tuned.value("flow_match_step " + m_chosen).startsWith("tuned for 4096") &&
                     tuned.value("flow_match_step " + m_chosen).contains("over x86-64-v2/tunable"),
                 qPrintable(QStringList(tuned.values()).join('\n')));
        QVERIFY(tuned.value("flow_match_step x86-64-v2/tunable").startsWith("tuned away for 4096"));
        QVERIFY(marks(tuningFile(), {"--no-tuning"}).isEmpty());
        const QString other = otherMachinesTuning("other-matrix.tuning");
        QVERIFY(marks(other).isEmpty());
        const auto text = cli({"matrix"}, other);
        QVERIFY2(text.out.contains("note: tuning ignored:") &&
                     text.out.contains("tuned on another machine"),
                 text.out.constData());
        // The table has the column where a tuning applies.
        QVERIFY(cli({"matrix"}, tuningFile()).out.contains("TUNING"));
    }

    // A file that is not a tuning, and a malformed entry, cost themselves only.
    void badFilesCostThemselvesOnly() {
        const QString junk = m_dir.filePath("junk.tuning");
        QFile f(junk);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"something.else\"}");
        f.close();
        const QString broken = editedTuning("broken.tuning", [](QJsonObject& doc) {
            auto entries = doc["entries"].toArray();
            entries.prepend(QJsonObject{{"op", "flow_match_step"}});
            doc["entries"] = entries;
        });
        const auto resolved = resolve(m_inside, junk + ":" + broken);
        QCOMPARE(selected(resolved), m_chosen);
        const auto notes = ignored(resolved).join("\n");
        QVERIFY2(notes.contains("not a tuning file") && notes.contains("entry 0 ignored"),
                 qPrintable(notes));
    }
};

QTEST_GUILESS_MAIN(TestCliTune)
#include "tst_cli_tune.moc"
