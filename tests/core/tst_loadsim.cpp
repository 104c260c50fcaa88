// SPDX-License-Identifier: MIT
// The static load simulation (diagnosis/loadsim.h) against the real loader: for each fixture
// (a missing symbol version, an undefined symbol, an aarch64 and an ELF32 copy of a good
// library, an x86-64-v4 library, a healthy one), the cause predicted without loading equals the
// cause the real dlopen() gives, classified from its message. The table is printed for the
// closing note.
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/diagnosis/loadsim.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/plugins/pluginprovider.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "support/versionneed.h"

using namespace switchyard;

namespace {

const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

QString fixtureLibrary(const QString& dir, const QString& name) {
    return kPlugins + "/" + dir + "/lib" + name + ".so";
}

// A copy of `from` with `patch` applied to its bytes, in `dir`.
QString patchedCopy(const QString& from, const QString& to, void (*patch)(std::string&)) {
    std::ifstream in(from.toStdString(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    patch(bytes);
    std::ofstream out(to.toStdString(), std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    return to;
}

// What the real loader says: None when it loads (then closed), else its message classified.
std::pair<BackendCause, std::string> realLoad(const QString& path) {
    ::dlerror();
    void* handle = ::dlopen(path.toLocal8Bit().constData(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
        ::dlclose(handle);
        return {BackendCause::None, "loads"};
    }
    const char* raw = ::dlerror();
    const std::string message = raw ? raw : "";
    if (const auto cause = classify_dlopen_error(message, path.toStdString()))
        return {*cause, message};
    if (message.find("cannot open shared object file") != std::string::npos)
        return {BackendCause::LibraryDependencyMissing, message};
    return {BackendCause::LibraryLoadFailed, message};
}

// The machine's x86-64 level before any SWITCHYARD_MAX_ISA cap (what the loader judges).
int uncappedLevel() {
    int level = 1;
    for (const auto& l : cpu_isa_cap().detected)
        if (l.rfind("x86-64-v", 0) == 0)
            level = std::max(level, std::atoi(l.c_str() + 8));
    return level;
}

} // namespace

class TestLoadSim : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    // The needs_version fixture on the plugin path of the process-wide registry, before its
    // first use.
    void initTestCase() {
        qputenv("SWITCHYARD_PLUGIN_PATH", (kPlugins + "/needs_version").toLocal8Bit());
    }

    void table_data() {
        QTest::addColumn<QString>("library");
        QTest::addColumn<QString>("expected"); // the cause id the simulation must predict
        const QString good = fixtureLibrary("good", "switchyard-fixture-good");
        QTest::newRow("good") << good << "none";
        QTest::newRow("needs_version")
            << fixtureLibrary("needs_version", "switchyard-fixture-needs-version")
            << "symbol_version_missing";
        QTest::newRow("undefined_symbol")
            << fixtureLibrary("undefined_symbol", "switchyard-fixture-undefined-symbol")
            << "undefined_symbol";
        QTest::newRow("missing_dep")
            << fixtureLibrary("missing_dep", "switchyard-fixture-missing-dep")
            << "library_dependency_missing";
        // Foreign ELF files written here: the good library with its machine set to aarch64,
        // and with its class set to ELF32.
        QTest::newRow("aarch64") << patchedCopy(good, m_dir.filePath("libaarch64.so"),
                                                [](std::string& b) {
                                                    b[18] = char(EM_AARCH64 & 0xff);
                                                    b[19] = char(EM_AARCH64 >> 8);
                                                })
                                 << "wrong_architecture";
        QTest::newRow("elf32") << patchedCopy(good, m_dir.filePath("libelf32.so"),
                                              [](std::string& b) { b[EI_CLASS] = ELFCLASS32; })
                               << "wrong_architecture";
        // The GLIBCXX case of the report: one version need renamed to one the system's
        // libstdc++ does not define (a plugin built with a newer GCC).
        QTest::newRow("glibcxx") << patchedCopy(good, m_dir.filePath("libglibcxx.so"),
                                                [](std::string& b) {
                                                    const auto at = test::glibcxx_version_need(b);
                                                    if (at != std::string::npos)
                                                        b.replace(at, 14, "GLIBCXX_3.4.99");
                                                })
                                 << "symbol_version_missing";
        const QString v4 = fixtureLibrary("isa_v4", "switchyard-fixture-isa-v4");
        if (QFile::exists(v4)) {
            // Judged against this CPU's level as detected and capped (SWITCHYARD_MAX_ISA).
            const bool reaches = cpu_supports("x86-64-v4");
            QTest::newRow("isa_v4") << v4 << (reaches ? "none" : "isa_unsupported");
        }
    }
    void table() {
        QFETCH(QString, library);
        QFETCH(QString, expected);
        QVERIFY(m_dir.isValid());
        const auto report = diagnose_library(library.toStdString());
        const auto [predicted, why] = predict_load_failure(report);
        QCOMPARE(QString::fromStdString(std::string(to_string(predicted))), expected);

        // The truth: the real loader, its message classified. For the ISA level, the loader
        // judges the CPU itself; where only SWITCHYARD_MAX_ISA stops below the library's
        // level, the tool's own refusal is the truth (the loader would run it).
        auto [truth, message] = realLoad(library);
        if (predicted == BackendCause::IsaUnsupported && truth == BackendCause::None &&
            report.isa_level_needed <= uncappedLevel()) {
            truth = BackendCause::IsaUnsupported;
            message = "refused by the tool: SWITCHYARD_MAX_ISA=" + cpu_isa_cap().level;
        }
        if (truth == BackendCause::LibraryNotElf)
            truth = BackendCause::WrongArchitecture;
        qInfo("| %s | %s | %s | %s | %s |", QTest::currentDataTag(),
              std::string(to_string(predicted)).c_str(), message.c_str(),
              std::string(to_string(truth)).c_str(), truth == predicted ? "agree" : "DISAGREE");
        QCOMPARE(QString::fromStdString(std::string(to_string(truth))), expected);

        // What the prediction names: the version and the provider's newest one, the symbol
        // demangled, the architecture.
        if (expected == "symbol_version_missing") {
            QVERIFY(!report.load_problems.empty());
            const auto& p = report.load_problems.front();
            QVERIFY2(p.message.find(" provides ") != std::string::npos, p.message.c_str());
            if (QTest::currentDataTag() == QByteArray("glibcxx")) {
                QVERIFY2(p.missing == "GLIBCXX_3.4.99 from libstdc++.so.6", p.missing.c_str());
                QVERIFY2(p.provided.rfind("GLIBCXX_3.4 … GLIBCXX_3.4.", 0) == 0,
                         p.provided.c_str());
            } else {
                QVERIFY2(p.missing ==
                             "SWITCHYARD_FIXTURE_DEP_2.0 from libswitchyard-versioned-dep.so.1",
                         p.missing.c_str());
                QCOMPARE(p.provided, std::string("SWITCHYARD_FIXTURE_DEP_1.0"));
            }
        } else if (expected == "undefined_symbol") {
            QVERIFY(!report.load_problems.empty());
            QVERIFY2(report.load_problems.front().missing.find(
                         "switchyard::fixture_function_of_a_newer_sdk(int)") == 0,
                     report.load_problems.front().missing.c_str());
        } else if (expected == "wrong_architecture") {
            QVERIFY2(
                why.find(QTest::currentDataTag() == QByteArray("elf32") ? "ELF32" : "aarch64") !=
                    std::string::npos,
                why.c_str());
            // One problem, not every dependency "not found" with five wrong fixes.
            QCOMPARE(report.load_problems.size(), std::size_t(1));
        }
    }

    // The loader's messages, typed.
    void dlopenMessagesAreClassified() {
        const std::pair<const char*, std::optional<BackendCause>> cases[] = {
            {"/x/libstdc++.so.6: version `GLIBCXX_3.4.99' not found (required by /p/lib.so)",
             BackendCause::SymbolVersionMissing},
            {"/p/lib.so: undefined symbol: _ZN10switchyard3fooEv", BackendCause::UndefinedSymbol},
            {"/p/lib.so: wrong ELF class: ELFCLASS32", BackendCause::WrongArchitecture},
            {"/p/lib.so: CPU ISA level is lower than required", BackendCause::IsaUnsupported},
            {"/p/lib.so: cannot open shared object file: No such file or directory", std::nullopt},
        };
        for (const auto& [message, cause] : cases)
            QCOMPARE(classify_dlopen_error(message), cause);
        QCOMPARE(demangled("_ZN10switchyard3fooEi"), std::string("switchyard::foo(int)"));
        QCOMPARE(demangled("plain_c"), std::string("plain_c"));
    }

    // The registry says it before anything is loaded (list's Full detail, show, doctor), with
    // the cause table's summary filled in, and the load refuses with the same cause.
    void registryPredictsBeforeLoading() {
        BackendRegistry& registry = default_backends();
        const auto info = registry.details("fixture-needs-version");
        QCOMPARE(info.state, BackendState::Failed);
        QCOMPARE(info.cause, BackendCause::SymbolVersionMissing);
        const auto why = explain(info);
        QVERIFY2(
            why.summary.find("SWITCHYARD_FIXTURE_DEP_2.0 from libswitchyard-versioned-dep.so.1") !=
                std::string::npos,
            why.summary.c_str());
        QVERIFY2(why.fix.find("newer toolchain") != std::string::npos, why.fix.c_str());
        QVERIFY(info.library_report &&
                info.library_report->to_text().find("FAILS:") != std::string::npos);
        // Loading it refuses with the same cause: the predicted failure is kept, the library
        // never opened.
        try {
            registry.load("fixture-needs-version");
            QFAIL("loaded");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendCause::SymbolVersionMissing);
            QVERIFY2(std::string(e.what()).find("provides SWITCHYARD_FIXTURE_DEP_1.0") !=
                         std::string::npos,
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestLoadSim)
#include "tst_loadsim.moc"
