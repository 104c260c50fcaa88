// SPDX-License-Identifier: MIT
// switchyard-cli against files other people wrote: bad manifests, special
// files, report targets that must not be replaced, control characters, bad options.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "support/childprocess.h"

#include <sys/stat.h>
#include <unistd.h>

namespace {

struct Run {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

// Runs the CLI with a plugin path; -1 when it did not finish within `timeout_ms`.
Run cli(const QStringList& args, const QString& pluginPath = {}, const QByteArray& input = {},
        int timeout_ms = 60000) {
    const auto r = switchyard::test::run_cli(
        args, pluginPath, {.input = input, .has_input = !input.isNull(), .timeout_ms = timeout_ms});
    if (!r.finished)
        return {};
    return {r.code, r.out, r.err};
}

// JSON written with single quotes (readable in C++ source), as real JSON.
QByteArray q(const char* text) {
    return QByteArray(text).replace('\'', '"');
}

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray manifest(const QByteArray& name, const QByteArray& extra = {}) {
    return "{\"schema\": 1, \"name\": \"" + name +
           "\", \"version\": \"1.0.0\", \"library\": \"lib" + name + ".so\"" +
           (extra.isEmpty() ? QByteArray() : ", " + extra) + "}";
}

QJsonObject byName(const QByteArray& listJson, const QString& name) {
    for (const auto& v : QJsonDocument::fromJson(listJson).object()["backends"].toArray())
        if (v.toObject()["name"].toString() == name)
            return v.toObject();
    return {};
}

} // namespace

class TestCliUntrusted : public QObject {
    Q_OBJECT
private slots:
    // One manifest with 1e400 or nested 100,000 deep: listed as invalid with file, line and
    // column; every other plugin and the built-in cpu are still listed.
    void oneBadManifestNeverHidesTheOthers() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeFile(dir.filePath("a.plugin.json"), manifest("a", "\"x\": 1e400")));
        QVERIFY(writeFile(
            dir.filePath("b.plugin.json"),
            manifest("b", "\"x\": " + QByteArray(100000, '[') + QByteArray(100000, ']'))));
        QVERIFY(writeFile(dir.filePath("c.plugin.json"), manifest("c")));
        QVERIFY(writeFile(dir.filePath("libc.so"), "not an ELF file"));
        for (const QString& command : {"list", "matrix", "doctor"}) {
            QStringList args{command, "--json"};
            if (command == "list")
                args << "--all"
                     << "--include-unavailable";
            const Run r = cli(args, dir.path());
            QVERIFY2(r.code == 0 || (command == "doctor" && r.code == 1),
                     qPrintable(command + ": " + r.err));
            QVERIFY2(!r.err.contains("json.exception"), r.err.constData());
        }
        const Run r = cli({"list", "--json", "--all", "--include-unavailable"}, dir.path());
        QCOMPARE(r.code, 0);
        QCOMPARE(byName(r.out, "cpu")["state"].toString(), QStringLiteral("loaded"));
        const auto a = byName(r.out, "a");
        QCOMPARE(a["state"].toString(), QStringLiteral("invalid"));
        QVERIFY2(a["error"].toString().contains("a.plugin.json") &&
                     a["error"].toString().contains("line 1, column") &&
                     a["error"].toString().contains("number overflow"),
                 qPrintable(a["error"].toString()));
        QVERIFY2(byName(r.out, "b")["error"].toString().contains("nested deeper"),
                 qPrintable(byName(r.out, "b")["error"].toString()));
        QCOMPARE(byName(r.out, "c")["name"].toString(), QStringLiteral("c"));
        // show of the invalid one explains it, and show --json stays small.
        const Run show = cli({"show", "b", "--json"}, dir.path());
        QVERIFY(show.out.size() < 100000);
    }

    void fifoManifestDoesNotHangList() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(::mkfifo(dir.filePath("x.plugin.json").toLocal8Bit().constData(), 0600), 0);
        const Run r =
            cli({"list", "--json", "--all", "--include-unavailable"}, dir.path(), {}, 20000);
        QCOMPARE(r.code, 0);
        QVERIFY2(byName(r.out, "x")["error"].toString().contains("not a regular file"),
                 r.out.constData());
        QCOMPARE(byName(r.out, "cpu")["state"].toString(), QStringLiteral("loaded"));
    }

    void compareSaysWhatAnInputIs() {
        QTemporaryDir dir;
        // A folder stands for its report*.json files; an empty one is a usage error.
        const Run folder = cli({"compare", dir.path(), dir.path()});
        QCOMPARE(folder.code, 2);
        QVERIFY2(folder.err.contains("holds no report*.json files"), folder.err.constData());
        const Run zero = cli({"compare", "/dev/zero", "/dev/zero"});
        QVERIFY2(zero.err.contains("not a regular file"), zero.err.constData());
    }

    void compareReadsStandardInputAndEscapesNames() {
        QTemporaryDir dir;
        const QByteArray report =
            q("{'format': 'switchyard.report', 'format_version': 2, 'context': {}, 'rows': "
              "[{'index': 0, 'op': 'co\\u001b]0;pwned\\u0007py', 'size': '1\\nFAKE ROW SAME', "
              "'dims': [1, 1, 1], 'device': 'cpu', 'device_kind': 'cpu', 'arch': 'generic', "
              "'variant': 'de\\u202efault', "
              "'backend': 'cpu', 'source': 'builtin', 'workspace_bytes': 0, 'status': 'ok', "
              "'timer': 'host', 'launches_per_sample': 1, 'stop_reason': '', 'stats': {'count': 3, "
              "'min': 1e-3, 'max': 1e-3, 'mean': 1e-3, 'median': 1e-3, 'p90': 1e-3, 'stddev': 0, "
              "'rel_noise': 0}, 'samples': [1e-3, 1e-3, 1e-3], 'bytes': 0, 'flops': 0, 'gbps': 0, "
              "'gflops': 0, 'peak_bandwidth_gbs': 0, 'bandwidth_fraction': 0, 'peak_gflops': 0, "
              "'flops_fraction': 0, 'parity': {'verdict': 'NOT_CHECKED'}, 'warnings': []}]}");
        QVERIFY(writeFile(dir.filePath("a.json"), report));
        const Run r = cli({"compare", dir.filePath("a.json"), "-"}, {}, report);
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(!r.out.contains('\x1b') && !r.out.contains('\x07'), r.out.constData());
        QVERIFY2(r.out.contains("\\x1b]0;pwned\\x07"), r.out.constData());
        // A newline in a field cannot forge a row, a bidi override cannot reorder one.
        QVERIFY2(!r.out.contains("\nFAKE ROW") && r.out.contains("\\x0aFAKE ROW SAME"),
                 r.out.constData());
        QVERIFY2(!r.out.contains("\u202e") && r.out.contains("de\\u202efault"), r.out.constData());
        for (const QString& alpha : {"nan", "2", "0", "inf"}) {
            const Run bad =
                cli({"compare", dir.filePath("a.json"), dir.filePath("a.json"), "--alpha", alpha});
            QVERIFY2(bad.code == 2 && bad.err.contains("--fdr"), qPrintable(alpha + bad.err));
        }
        // Duplicate keys: appending "rows": [] never hides every row.
        QByteArray dup = report;
        dup.insert(dup.size() - 1, ", \"rows\": []");
        QVERIFY(writeFile(dir.filePath("dup.json"), dup));
        const Run d = cli({"compare", dir.filePath("a.json"), dir.filePath("dup.json")});
        QCOMPARE(d.code, 2); // an unreadable report is a usage error: 1 means a regression
        QVERIFY2(d.err.contains("duplicate key 'rows'"), d.err.constData());
    }

    void controlCharactersFromManifestsAreEscaped() {
        QTemporaryDir dir;
        QVERIFY(writeFile(dir.filePath("e.plugin.json"),
                          manifest("e", q("'description': '\\u001b[2J\\u0000x\\ncuda plugin "
                                          "loaded', 'tags': ['t\\u001b']"))));
        QVERIFY(writeFile(dir.filePath("libe.so"), "x"));
        for (const QStringList& args :
             {QStringList{"list", "--all", "--include-unavailable"}, QStringList{"show", "e"}}) {
            const Run r = cli(args, dir.path());
            QVERIFY2(!r.out.contains('\x1b') && !r.out.contains('\0'), r.out.constData());
            QVERIFY2(r.out.contains("\\x1b"), r.out.constData());
        }
        const Run list = cli({"list", "--all", "--include-unavailable"}, dir.path());
        QVERIFY2(!list.out.contains("\ncuda plugin loaded"), list.out.constData());
    }

    // show --json of a manifest nested 20,000 levels deep stays small (refused by the
    // manifest's nesting limit), and unknown keys are echoed only up to a size.
    // `show` of a manifest whose library is a refused absolute path prints the manifest's own
    // value, never joined to the folder; the tool's own multi-line messages keep their lines,
    // while a newline from the manifest stays escaped where it enters them.
    void showPrintsTheManifestsOwnValues() {
        QTemporaryDir dir;
        QVERIFY(writeFile(dir.filePath("abs.plugin.json"),
                          q("{'schema': 1, 'name': 'abs', 'version': '1.0.0', "
                            "'library': '/etc/passwd'}")));
        const Run abs = cli({"show", "abs"}, dir.path());
        QVERIFY2(abs.out.contains("library:          /etc/passwd\n"), abs.out.constData());
        QVERIFY2(!abs.out.contains("//etc/passwd"), abs.out.constData());
        QVERIFY2(abs.out.contains("Problem (invalid_manifest): its manifest "),
                 abs.out.constData());

        QVERIFY(
            writeFile(dir.filePath("dep.plugin.json"),
                      manifest("dep", q("'capabilities': {'contract_version': 1, 'optional_deps': "
                                        "[{'name': 'SWITCHYARD_NO_SUCH_VAR', 'kind': 'env', "
                                        "'hint': 'export it\\nFAKE: line'}]}"))));
        // A real plugin library (never loaded: the missing dependency keeps it unavailable).
        // Not a copy of the core: a sanitizer build's core needs more static TLS than a
        // process that already holds the core has left, a problem that outranks this one.
        QVERIFY(QFile::copy(SWITCHYARD_FIXTURE_DIR "/plugins/good/libswitchyard-fixture-good.so",
                            dir.filePath("libdep.so")));
        const Run dep = cli({"show", "dep"}, dir.path());
        QVERIFY2(dep.out.contains("Problem (optional_dependency_missing): missing "
                                  "SWITCHYARD_NO_SUCH_VAR\n  fix: SWITCHYARD_NO_SUCH_VAR: export "
                                  "it\\x0aFAKE: line\n"),
                 dep.out.constData());
        QVERIFY2(!dep.out.contains("\nFAKE"), dep.out.constData());
    }

    void showJsonStaysProportional() {
        QTemporaryDir dir;
        QVERIFY(
            writeFile(dir.filePath("d.plugin.json"),
                      manifest("d", "\"x\": " + QByteArray(20000, '[') + QByteArray(20000, ']'))));
        const Run deep = cli({"show", "d", "--json"}, dir.path());
        QVERIFY2(deep.out.size() < 20000, QByteArray::number(deep.out.size()).constData());
        QVERIFY2(deep.out.contains("nested deeper"), deep.out.constData());
        // 200 KiB of unknown keys (within the manifest limits): not echoed, said instead.
        QVERIFY(writeFile(dir.filePath("u.plugin.json"),
                          manifest("u", "\"x-big\": \"" + QByteArray(200 << 10, 'a') + "\"")));
        QVERIFY(writeFile(dir.filePath("libu.so"), "not an ELF file"));
        const Run big = cli({"show", "u", "--json"}, dir.path());
        QVERIFY2(big.out.size() < 20000, QByteArray::number(big.out.size()).constData());
        const auto j = QJsonDocument::fromJson(big.out).object();
        QVERIFY2(j["extra_omitted"].toString().contains("bytes of unknown manifest keys"),
                 big.out.constData());
    }

    // --- Arguments and resources ---

    // Every numeric option of every command: out of range is a usage error naming the
    // option as typed and the value, never an internal key.
    void outOfRangeOptionsNameTheOption_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        const QStringList profile{"profile", "--op", "flow_match_step"};
        const QList<QPair<QString, QString>> cases = {
            {"--timeout", "nan"},
            {"--timeout", "inf"},
            {"--timeout", "0"},
            {"--timeout", "1e999"},
            {"--budget", "nan"},
            {"--budget", "-1"},
            {"--max-noise", "nan"},
            {"--max-noise", "101"},
            {"--warmup", "inf"},
            {"--warmup", "-0.5"},
            {"--min-samples", "9223372036854775807"},
            {"--min-samples", "0"},
            {"--min-samples", "1.5"},
            {"--seed", "-1"},
            {"--seed", "18446744073709551616"},
            {"--sizes", "1099511627776"},
            {"--sizes", "0"},
        };
        for (const auto& [option, value] : cases)
            QTest::addRow("%s %s", qPrintable(option), qPrintable(value))
                << (profile + QStringList{option, value}) << option << value;
        QTest::addRow("--fdr nan") << QStringList{"compare", "a", "b", "--fdr", "nan"} << "--fdr"
                                   << "nan";
    }
    void outOfRangeOptionsNameTheOption() {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        QFETCH(QString, value);
        const Run r = cli(args);
        QVERIFY2(r.code == 2, r.err.constData());
        QVERIFY2(r.err.contains(option.toUtf8() + ":") || r.err.contains(option.toUtf8() + " "),
                 r.err.constData());
        QVERIFY2(r.err.contains(value.toUtf8()), r.err.constData());
        QVERIFY2(!r.err.contains("settings."), r.err.constData());
    }

    // gemm 100000^3 would need about 260 GiB: a usage error that says how much it needs and
    // how much this machine has, not std::bad_alloc.
    void tooLargeForMemorySaysHowMuch() {
        const Run r = cli({"profile", "--op", "gemm", "--sizes", "100000x100000x100000"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--sizes: gemm 100000x100000x100000 needs") &&
                     r.err.contains("GiB of memory") && r.err.contains("this machine has"),
                 r.err.constData());
        QVERIFY(!r.err.contains("bad_alloc"));
    }

    // Empty and relative entries of SWITCHYARD_PLUGIN_PATH are ignored with a warning: on
    // stderr, and as a problem in doctor. The absolute entry is still searched.
    void pluginPathIgnoresEmptyAndRelativeEntries() {
        QTemporaryDir dir;
        QVERIFY(writeFile(dir.filePath("c.plugin.json"), manifest("c")));
        QVERIFY(writeFile(dir.filePath("libc.so"), "not an ELF file"));
        const QString path = "::plugins/relative:" + dir.path() + ":";
        const Run list = cli({"list", "--json", "--all", "--include-unavailable"}, path);
        QCOMPARE(list.code, 0);
        QCOMPARE(byName(list.out, "c")["name"].toString(), QStringLiteral("c"));
        QVERIFY2(list.err.contains("warning: SWITCHYARD_PLUGIN_PATH: the relative entry "
                                   "'plugins/relative' is ignored"),
                 list.err.constData());
        QVERIFY2(list.err.contains("entry 1 is empty") && list.err.contains("entry 5 is empty"),
                 list.err.constData());
        const Run doctor = cli({"doctor", "--json"}, path);
        bool relative = false;
        for (const auto& p : QJsonDocument::fromJson(doctor.out).object()["problems"].toArray())
            relative |= p.toObject()["subject"].toString() == "SWITCHYARD_PLUGIN_PATH" &&
                        p.toObject()["problem"].toString().contains("'plugins/relative'");
        QVERIFY2(relative, doctor.out.left(4000).constData());
        // An unset or empty variable is no mistake: nothing is said.
        QVERIFY(!cli({"list"}).err.contains("warning"));
    }
};

QTEST_GUILESS_MAIN(TestCliUntrusted)
#include "tst_cli_untrusted.moc"
