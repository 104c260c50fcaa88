// SPDX-License-Identifier: MIT
// Lazy resolution, counted the way a user would check it: the dynamic loader's own
// trace (LD_DEBUG=files, one LD_DEBUG_OUTPUT file per process) says which plugin libraries
// each process of `switchyard-cli` (the CLI and its inspection workers) opened.
//
// 1,000 generated plugins declare gemm cells on no rung of the default chain and cuda cells
// for a kind another backend provides; they share ten copies of the good fixture's library,
// so "loaded none" means none of the ten files was opened by any process.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "support/childprocess.h"

#include <sys/stat.h>

namespace {

constexpr int kPlugins = 1000;
constexpr int kLibraries = 10;
const QString kFixtures = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

bool copy_library(const QString& from, const QString& to) {
    QFile::remove(to);
    return QFile::copy(from, to) &&
           QFile::setPermissions(to, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                         QFile::ReadGroup | QFile::ExeGroup | QFile::ReadOther |
                                         QFile::ExeOther);
}

bool write_json(const QString& path, const QJsonObject& o) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(o).toJson()) > 0;
}

QJsonObject manifest(const QString& name, const QString& library, const QJsonArray& kernels) {
    return QJsonObject{
        {"schema", 1},
        {"name", name},
        {"version", "1.0.0"},
        {"description", "A generated plugin (tst_cli_lazyload)"},
        {"library", library},
        {"capabilities", QJsonObject{{"contract_version", 1}, {"optional_deps", QJsonArray{}}}},
        {"kernels", kernels}};
}

QJsonObject kernel(const QString& op, const QString& device, const QString& arch,
                   const QString& variant) {
    return {{"op", op},
            {"device", device},
            {"arch", arch},
            {"variant", variant},
            {"workspace_bytes", 0}};
}

// Per process of the traced run: the libraries under `dir` it opened.
using Loads = QMap<QString, QSet<QString>>; // trace file (one per pid) -> library paths

Loads loads_under(const QString& traces, const QString& dir) {
    Loads loads;
    static const QRegularExpression re(R"(file=(\S+)\s+\[\d+\];\s+dynamically loaded by)");
    for (const auto& name : QDir(traces).entryList(QDir::Files)) {
        QFile f(traces + "/" + name);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        auto& mine = loads[name]; // every process is listed, loads or not
        for (const auto& line : QString::fromUtf8(f.readAll()).split('\n')) {
            const auto m = re.match(line);
            if (m.hasMatch() && m.captured(1).startsWith(dir + "/"))
                mine.insert(QFileInfo(m.captured(1)).fileName());
        }
    }
    return loads;
}

int total(const Loads& loads) {
    int n = 0;
    for (const auto& l : loads)
        n += int(l.size());
    return n;
}

QString describe(const Loads& loads) {
    QStringList out;
    for (auto it = loads.begin(); it != loads.end(); ++it)
        out << it.key() + ": " + QStringList(it->begin(), it->end()).join(',');
    return out.join("; ");
}

} // namespace

class TestCliLazyLoad : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_plugins; // the 1,000 generated plugins (+ one cuda provider)
    QString m_good;    // the good fixture, whose gemm cell a chain can reach

    // Runs the CLI with every process traced; returns the libraries under `dir` each opened.
    Loads traced(const QStringList& args, const QString& pluginPath, const QString& dir,
                 switchyard::test::ProcessResult* result = nullptr) {
        static int run = 0;
        const QString traces = m_tmp.path() + "/traces-" + QString::number(++run);
        QDir().mkpath(traces);
        switchyard::test::ProcessOptions options;
        options.timeout_ms = 120000;
        options.env = {{"LD_DEBUG", "files"}, {"LD_DEBUG_OUTPUT", traces + "/trace"}};
        const auto r = switchyard::test::run_cli(args, pluginPath, options);
        if (result)
            *result = r;
        [&] { QVERIFY2(r.finished && r.signal == 0, r.err.left(2000).constData()); }();
        return loads_under(traces, dir);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        ::chmod(QFile::encodeName(m_tmp.path()).constData(), 0755);
        const QString good = kFixtures + "/good/libswitchyard-fixture-good.so";
        const QString device = kFixtures + "/device_good/libswitchyard-fixture-device-good.so";
        QVERIFY2(QFile::exists(good) && QFile::exists(device), qPrintable(kFixtures));
        m_plugins = m_tmp.path() + "/plugins";
        QVERIFY(QDir().mkpath(m_plugins));
        for (int l = 0; l < kLibraries; ++l)
            QVERIFY(copy_library(good, m_plugins + QString("/liblazy-%1.so").arg(l)));
        for (int i = 0; i < kPlugins; ++i) {
            const QString name = QString("lazy-%1").arg(i, 4, 10, QChar('0'));
            // gemm on the CPU under a variant of its own (on no rung of the default chain),
            // and kernels for cuda, which the provider below provides.
            const QJsonArray kernels = {
                kernel("gemm", "cpu", "generic", name), kernel("gemm", "cpu", "x86-64-v2", name),
                kernel("gemm", "cuda", "sm_80", name), kernel("rms_norm", "cuda", "generic", name)};
            auto m = manifest(name, QString("liblazy-%1.so").arg(i % kLibraries), kernels);
            if (i % 2 == 0) // half say so; the others are manifests older than the key
                m["provides_devices"] = QJsonArray{};
            QVERIFY(write_json(m_plugins + "/" + name + ".plugin.json", m));
        }
        QVERIFY(copy_library(device, m_plugins + "/libcuda-provider.so"));
        auto provider = manifest("lazy-cuda-provider", "libcuda-provider.so",
                                 {kernel("gemm", "cuda", "generic", "default")});
        provider["provides_devices"] = QJsonArray{"cuda"};
        QVERIFY(write_json(m_plugins + "/lazy-cuda-provider.plugin.json", provider));
        m_good = kFixtures + "/good";
    }

    // Before: `resolve gemm` loaded, in its inspection worker, every plugin declaring a gemm
    // cell for the CPU, although the chain ends at a built-in cell. Now such a chain runs only
    // the application's own code, so it is resolved in the CLI itself (worker/inspect.h,
    // resolve_place: the GUI's rule too), and no plugin library is opened anywhere.
    void resolveLoadsNoPluginItsChainDoesNotReach() {
        switchyard::test::ProcessResult r;
        const auto loads = traced({"resolve", "gemm", "--json"}, m_plugins, m_plugins, &r);
        QCOMPARE(r.code, 0);
        QVERIFY2(loads.size() >= 1, qPrintable(describe(loads))); // the CLI (no worker needed)
        QVERIFY2(total(loads) == 0, qPrintable(describe(loads)));
        const auto doc = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(doc.value("winner").toObject().value("backend").toString(), QString("cpu"));
        for (const auto& rung : doc.value("rungs").toArray()) // no generated cell on the chain
            QVERIFY(!rung.toObject().value("backend").toString().startsWith("lazy-"));
        qInfo("lazy: resolve gemm with %d plugins declaring gemm cells: %d plugin libraries "
              "loaded in %lld processes",
              kPlugins, total(loads), static_cast<long long>(loads.size()));
    }

    // A chain that reaches a plugin's cell loads that plugin, once, in the worker only.
    void resolveLoadsThePluginItsChainReaches() {
        switchyard::test::ProcessResult r;
        const QString path = m_plugins + ":" + m_good;
        const auto generated =
            traced({"resolve", "gemm", "--variant", "lazy-0007", "--json"}, path, m_plugins, &r);
        QCOMPARE(r.code, 0);
        // lazy-0007's library (copy 7) and no other; in one process (the worker).
        QCOMPARE(total(generated), 1);
        for (const auto& l : generated)
            if (!l.isEmpty())
                QCOMPARE(l, QSet<QString>{"liblazy-7.so"});
        // (Its library is the good fixture's, which registers the "good" cells only: after the
        // load no cell of variant lazy-0007 is left, and the chain ends at the reference.)

        const auto good =
            traced({"resolve", "gemm", "--variant", "good", "--json"}, path, m_good, &r);
        QCOMPARE(r.code, 0);
        QCOMPARE(total(good), 1);
        QCOMPARE(QJsonDocument::fromJson(r.out)
                     .object()
                     .value("winner")
                     .toObject()
                     .value("backend")
                     .toString(),
                 QString("fixture-good"));
        qInfo("lazy: resolve gemm --variant good: %d library loaded (fixture-good's)", total(good));
    }

    // Devices are listed by the backends that provide their kind: the provider's library is
    // opened, none of the 1,000 that only add cuda kernels (half of them without the
    // manifest key: the kind is claimed by the provider).
    void deviceListingLoadsOnlyTheProviders_data() {
        QTest::addColumn<QStringList>("args");
        // --no-probe: which libraries a listing opens does not depend on the ceiling probes,
        // which under LD_DEBUG beside other suites took past the 120 s limit once.
        QTest::newRow("hardware") << QStringList{"hardware", "--json", "--no-probe"};
        QTest::newRow("doctor") << QStringList{"doctor", "--json"};
    }
    void deviceListingLoadsOnlyTheProviders() {
        QFETCH(QStringList, args);
        const auto loads = traced(args, m_plugins, m_plugins);
        QSet<QString> all;
        for (const auto& l : loads)
            all.unite(l);
        QCOMPARE(all, QSet<QString>{"libcuda-provider.so"});
        qInfo("lazy: %s with %d plugins adding cuda kernels: %d plugin libraries loaded (the "
              "provider's)",
              qPrintable(args.first()), kPlugins, total(loads));
    }

    // A bad value of the key is a clear error naming it, never a crash, and the plugin stays
    // listed as invalid.
    void badProvidedKindIsAnInvalidManifest() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ::chmod(QFile::encodeName(dir.path()).constData(), 0755);
        QVERIFY(copy_library(kFixtures + "/good/libswitchyard-fixture-good.so",
                             dir.path() + "/libbad.so"));
        auto m = manifest("bad-kinds", "libbad.so", {});
        m["provides_devices"] = QJsonArray{"cpu"};
        QVERIFY(write_json(dir.path() + "/bad.plugin.json", m));
        const auto r = switchyard::test::run_cli({"show", "bad-kinds", "--json"}, dir.path());
        QCOMPARE(r.code, 1);
        const auto doc = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(doc.value("state").toString(), QString("invalid"));
        QCOMPARE(doc.value("cause").toString(), QString("invalid_manifest"));
        QVERIFY2(doc.value("error").toString().contains("provides_devices[0]"), r.out.constData());
        QVERIFY2(doc.value("error").toString().contains("'cpu' is built in"), r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliLazyLoad)
#include "tst_cli_lazyload.moc"
