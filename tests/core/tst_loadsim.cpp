// SPDX-License-Identifier: MIT
// The static load simulation (diagnosis/loadsim.h) against the real loader: for each fixture
// (a missing symbol version, an undefined symbol, an aarch64, ELF32, big-endian and FreeBSD
// copy of a good library, copies with a damaged header, of another ELF type, cut off, a text
// file, 64 KiB of initial-exec TLS, an x86-64-v4 library, a healthy one), the cause predicted
// without loading equals the cause the real dlopen() gives (in a forked child: a cut-off file
// kills it), classified from its message. The table is printed for the closing note.
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
#include <cstring>
#include <fstream>
#include <iterator>

#include "support/realload.h"
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

} // namespace

class TestLoadSim : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    // The needs_version, truncated and static_tls fixtures on the plugin path of the process-wide
    // registry, before its first use.
    void initTestCase() {
        qputenv("SWITCHYARD_PLUGIN_PATH",
                (kPlugins + "/needs_version:" + kPlugins + "/truncated:" + kPlugins + "/static_tls")
                    .toLocal8Bit());
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
        // "ELF file data encoding not little-endian", "ELF file OS ABI invalid".
        QTest::newRow("big-endian") << patchedCopy(good, m_dir.filePath("libmsb.so"),
                                                   [](std::string& b) { b[EI_DATA] = ELFDATA2MSB; })
                                    << "wrong_architecture";
        QTest::newRow("freebsd") << patchedCopy(
                                        good, m_dir.filePath("libfreebsd.so"),
                                        [](std::string& b) { b[EI_OSABI] = ELFOSABI_FREEBSD; })
                                 << "wrong_architecture";
        // ELF for this machine, but no shared library the loader maps.
        QTest::newRow("ident version") << patchedCopy(good, m_dir.filePath("libident.so"),
                                                      [](std::string& b) { b[EI_VERSION] = 2; })
                                       << "library_not_loadable";
        QTest::newRow("ET_REL") << patchedCopy(good, m_dir.filePath("librel.so"),
                                               [](std::string& b) { b[16] = ET_REL; })
                                << "library_not_loadable";
        QTest::newRow("ET_EXEC") << patchedCopy(good, m_dir.filePath("libexec.so"),
                                                [](std::string& b) { b[16] = ET_EXEC; })
                                 << "library_not_loadable";
        // Cut off: after its program headers (its segments past the end: SIGBUS in the
        // loader; a cut that removes only the debug info of this unstripped build leaves
        // every page the loader touches, which tst_loadsim_corpus's stripped libraries do
        // not), inside its ELF header ("file too short").
        QTest::newRow("cut after its program headers")
            << patchedCopy(good, m_dir.filePath("libcut.so"),
                           [](std::string& b) {
                               Elf64_Ehdr eh;
                               std::memcpy(&eh, b.data(), sizeof eh);
                               b.resize(eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) + 64);
                           })
            << "library_truncated";
        QTest::newRow("cut in its header") << patchedCopy(good, m_dir.filePath("libcut40.so"),
                                                          [](std::string& b) { b.resize(40); })
                                           << "library_truncated";
        // Not ELF: short ("file too short") and long ("invalid ELF header").
        QTest::newRow("short text") << patchedCopy(good, m_dir.filePath("libshorttext.so"),
                                                   [](std::string& b) { b = "INPUT(libc.so.6)\n"; })
                                    << "library_not_elf";
        QTest::newRow("long text")
            << patchedCopy(good, m_dir.filePath("liblongtext.so"),
                           [](std::string& b) { b = std::string(200, 'x') + "\n"; })
            << "library_not_elf";
        // More initial-exec TLS than the static TLS block has left.
        QTest::newRow("static_tls") << fixtureLibrary("static_tls", "switchyard-fixture-static-tls")
                                    << "static_tls_exhausted";
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
        auto [truth, message] = test::real_load(library.toStdString());
        if (predicted == BackendCause::IsaUnsupported && truth == BackendCause::None &&
            report.isa_level_needed <= test::uncapped_isa_level()) {
            truth = BackendCause::IsaUnsupported;
            message = "refused by the tool: SWITCHYARD_MAX_ISA=" + cpu_isa_cap().level;
        }
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
            const QByteArray tag = QTest::currentDataTag();
            const char* names = tag == "elf32"        ? "ELF32"
                                : tag == "big-endian" ? "big-endian"
                                : tag == "freebsd"    ? "OS ABI 9"
                                                      : "aarch64";
            QVERIFY2(why.find(names) != std::string::npos, why.c_str());
        } else if (expected == "library_truncated") {
            QVERIFY2(why.find("is cut off: ") != std::string::npos, why.c_str());
            QVERIFY2(why.find(" the file has ") != std::string::npos ||
                         why.find("less than an ELF header") != std::string::npos,
                     why.c_str());
        } else if (expected == "static_tls_exhausted") {
            QVERIFY2(why.find("65,536 bytes of the static TLS block") != std::string::npos,
                     why.c_str());
            QVERIFY2(why.find("GLIBC_TUNABLES=glibc.rtld.optional_static_tls=") !=
                         std::string::npos,
                     why.c_str());
        }
        // Refused itself: one problem, and no dependency read (not every dependency "not
        // found" with five wrong fixes).
        if (expected == "wrong_architecture" || expected == "library_truncated" ||
            expected == "library_not_elf" || expected == "library_not_loadable") {
            QCOMPARE(report.load_problems.size(), std::size_t(1));
            QVERIFY(!report.dependencies_read);
            QVERIFY(report.dependencies.empty());
            QVERIFY2(report.to_text().find(kNotReadByLoader) != std::string::npos,
                     report.to_text().c_str());
        } else {
            QVERIFY(report.dependencies_read);
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
            {"/p/lib.so: cannot allocate memory in static TLS block",
             BackendCause::StaticTlsExhausted},
            // elf/dl-load.c's refusals of the file itself.
            {"/nonexistent/lib.so: file too short", BackendCause::LibraryNotElf},
            {"/p/lib.so: invalid ELF header", BackendCause::LibraryNotElf},
            {"/p/lib.so: cannot read file data", BackendCause::LibraryTruncated},
            {"/p/lib.so: cannot read file data: Input/output error", std::nullopt},
            {"/p/lib.so: ELF file data encoding not little-endian",
             BackendCause::WrongArchitecture},
            {"/p/lib.so: ELF file OS ABI invalid", BackendCause::WrongArchitecture},
            {"/p/lib.so: ELF file ABI version invalid", BackendCause::WrongArchitecture},
            {"/p/lib.so: ELF file version ident does not match current one",
             BackendCause::LibraryNotLoadable},
            {"/p/lib.so: nonzero padding in e_ident", BackendCause::LibraryNotLoadable},
            {"/p/lib.so: ELF file version does not match current one",
             BackendCause::LibraryNotLoadable},
            {"/p/lib.so: only ET_DYN and ET_EXEC can be loaded", BackendCause::LibraryNotLoadable},
            {"/p/lib.so: ELF file's phentsize not the expected size",
             BackendCause::LibraryNotLoadable},
            {"/p/lib.so: ELF load command address/offset not page-aligned",
             BackendCause::LibraryNotLoadable},
            {"/p/lib.so: object file has no loadable segments", BackendCause::LibraryNotLoadable},
            {"/p/lib.so: cannot dynamically load executable", BackendCause::LibraryNotLoadable},
            {"/p/lib.so: cannot dynamically load position-independent executable",
             BackendCause::LibraryNotLoadable},
            {"/p/lib.so: object file has no dynamic section", BackendCause::LibraryNotLoadable},
            {"/p/lib.so: shared object cannot be dlopen()ed", BackendCause::LibraryNotLoadable},
            // Unknown: library_load_failed, with the message.
            {"/p/lib.so: failed to map segment from shared object", std::nullopt},
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

    // A cut-off library: its own cause and fix before anything is loaded, and a load refused
    // before dlopen() (which would kill this process with SIGBUS).
    void truncatedLibraryIsRefusedBeforeDlopen() {
        BackendRegistry& registry = default_backends();
        const auto info = registry.details("fixture-truncated");
        QCOMPARE(info.state, BackendState::Failed);
        QCOMPARE(info.cause, BackendCause::LibraryTruncated);
        const auto why = explain(info);
        QVERIFY2(why.summary.find("is cut off: its load segment") != std::string::npos,
                 why.summary.c_str());
        QVERIFY2(why.fix.find("The file is shorter than its headers say: the copy or download "
                              "was cut; reinstall") == 0,
                 why.fix.c_str());
        QVERIFY(info.library_report && !info.library_report->dependencies_read);
        try {
            registry.load("fixture-truncated");
            QFAIL("loaded");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendCause::LibraryTruncated);
        }
    }

    // Static TLS: predicted, and the loader's refusal classified with the same cause; the fix
    // names both workarounds.
    void staticTlsIsPredictedAndClassified() {
        BackendRegistry& registry = default_backends();
        const auto info = registry.details("fixture-static-tls");
        QCOMPARE(info.state, BackendState::Failed);
        QCOMPARE(info.cause, BackendCause::StaticTlsExhausted);
        const auto why = explain(info);
        QVERIFY2(why.summary.find("65,536 bytes of static TLS for ") != std::string::npos,
                 why.summary.c_str());
        QVERIFY2(why.fix.find("LD_PRELOAD") != std::string::npos &&
                     why.fix.find("glibc.rtld.optional_static_tls") != std::string::npos,
                 why.fix.c_str());
        // The loader itself, in a child (a load here would keep the library if it succeeded).
        const auto truth = test::real_load(info.library_path);
        QCOMPARE(truth.cause, BackendCause::StaticTlsExhausted);
        QVERIFY2(truth.message.find("cannot allocate memory in static TLS block") !=
                     std::string::npos,
                 truth.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLoadSim)
#include "tst_loadsim.moc"
