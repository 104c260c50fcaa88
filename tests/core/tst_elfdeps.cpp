// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/elfdeps.h>

#include "diagnosis/ldcache.h"

#include <QtTest>

#include "support/childprocess.h"

#include <cstring>
#include <map>

using namespace switchyard;

namespace {

const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");
const std::string kGood = SWITCHYARD_FIXTURE_DIR "/plugins/good/libswitchyard-fixture-good.so";
const std::string kMissingDep =
    SWITCHYARD_FIXTURE_DIR "/plugins/missing_dep/libswitchyard-fixture-missing-dep.so";
const QString kUnshipped = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins-unshipped");

const ResolvedLibrary* find(const ElfDependencyReport& r, const std::string& soname) {
    for (const auto& d : r.dependencies)
        if (d.soname == soname)
            return &d;
    return nullptr;
}

// A synthetic glibc-ld.so.cache1.1 image.
std::string make_cache(
    const std::vector<std::tuple<std::int32_t, std::string, std::string, std::uint64_t>>& entries) {
    const std::size_t header = 48, entry = 24;
    std::string strings;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
    const std::size_t base = header + entries.size() * entry;
    for (const auto& [flags, key, value, hwcap] : entries) {
        const auto k = std::uint32_t(base + strings.size());
        strings += key + '\0';
        const auto v = std::uint32_t(base + strings.size());
        strings += value + '\0';
        offsets.emplace_back(k, v);
    }
    std::string data(base, '\0');
    std::memcpy(data.data(), "glibc-ld.so.cache1.1", 20);
    const auto n = std::uint32_t(entries.size());
    const auto len = std::uint32_t(strings.size());
    std::memcpy(data.data() + 20, &n, 4);
    std::memcpy(data.data() + 24, &len, 4);
    data[28] = 2; // little endian
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto flags = std::get<0>(entries[i]);
        const auto hwcap = std::get<3>(entries[i]);
        std::memcpy(data.data() + header + i * entry, &flags, 4);
        std::memcpy(data.data() + header + i * entry + 4, &offsets[i].first, 4);
        std::memcpy(data.data() + header + i * entry + 8, &offsets[i].second, 4);
        std::memcpy(data.data() + header + i * entry + 16, &hwcap, 8);
    }
    return data + strings;
}

} // namespace

class TestElfDeps : public QObject {
    Q_OBJECT
private slots:
    void readsTheDynamicSection() {
        std::string error;
        const auto info = read_elf_dynamic(kMissingDep, &error);
        QVERIFY2(info, error.c_str());
        QCOMPARE(info->elf_class, 2); // ELFCLASS64 on the machines we build for
        const auto& needed = info->needed;
        QVERIFY(std::find(needed.begin(), needed.end(), "libswitchyard-nonexistent-dep.so.1") !=
                needed.end());
        QVERIFY(std::find(needed.begin(), needed.end(), "libswitchyard-core.so.0") != needed.end());
        QVERIFY(std::find(info->runpath.begin(), info->runpath.end(), "$ORIGIN/deps") !=
                info->runpath.end());
        QVERIFY(info->rpath.empty());
    }

    void refusesWhatIsNotElf_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("error");
        QTest::newRow("missing") << "/nonexistent/libx.so"
                                 << "No such file";
        QTest::newRow("a manifest") << kPlugins + "/good/good.plugin.json"
                                    << "not an ELF file";
        QTest::newRow("a folder") << kPlugins << "not a regular file";
    }
    void refusesWhatIsNotElf() {
        QFETCH(QString, path);
        QFETCH(QString, error);
        std::string why;
        QVERIFY(!read_elf_dynamic(path.toStdString(), &why));
        QVERIFY2(QString::fromStdString(why).contains(error), why.c_str());
        const auto report = diagnose_library(path.toStdString());
        QVERIFY(!report.readable);
        QVERIFY(!report.ok());
    }

    void resolvesLikeTheDynamicLoader() {
        const auto report = diagnose_library(kGood);
        QVERIFY(report.readable);
        QVERIFY2(report.ok(), report.to_text().c_str());
        const auto* core = find(report, "libswitchyard-core.so.0");
        QVERIFY(core);
        QCOMPARE(core->source, LibrarySearchSource::Runpath);
        QCOMPARE(core->depth, 1);
        const auto* libc = find(report, "libc.so.6");
        QVERIFY(libc && libc->found());
        QVERIFY(libc->source == LibrarySearchSource::LdCache ||
                libc->source == LibrarySearchSource::DefaultDir);
        // Transitive: the core's own dependencies (libelf) appear one level down.
        const auto* elf = find(report, "libelf.so.1");
        QVERIFY2(elf, report.to_text().c_str());
        QCOMPARE(elf->depth, 2);
        QVERIFY(elf->needed_by.find("libswitchyard-core") != std::string::npos);
    }

    void agreesWithLdd() {
        if (QStandardPaths::findExecutable("ldd").isEmpty())
            QSKIP("ldd is not installed");
        const auto ldd =
            test::run_process("ldd", {QString::fromStdString(kGood)}, {.timeout_ms = 30000});
        QVERIFY2(ldd.finished, ldd.err.constData());
        std::map<std::string, std::string> expected; // soname -> canonical path
        for (const auto& line : QString::fromLocal8Bit(ldd.out).split('\n')) {
            const auto parts = line.trimmed().split(' ');
            if (parts.size() >= 3 && parts[1] == "=>")
                expected[parts[0].toStdString()] =
                    QFileInfo(parts[2]).canonicalFilePath().toStdString();
        }
        QVERIFY(!expected.empty());
        const auto report = diagnose_library(kGood);
        for (const auto& [soname, path] : expected) {
            const auto* got = find(report, soname);
            QVERIFY2(got, ("ldd lists " + soname + ", we do not").c_str());
            QCOMPARE(QFileInfo(QString::fromStdString(got->path)).canonicalFilePath().toStdString(),
                     path);
        }
    }

    void marksEveryUnresolvedSoname() {
        const auto report = diagnose_library(kMissingDep);
        QVERIFY(report.readable);
        QVERIFY(!report.ok());
        QCOMPARE(report.unresolved(),
                 std::vector<std::string>{"libswitchyard-nonexistent-dep.so.1"});
        const auto* missing = find(report, "libswitchyard-nonexistent-dep.so.1");
        QVERIFY(missing->detail.find("deps") != std::string::npos); // names the folders searched
        QVERIFY(QString::fromStdString(report.to_text())
                    .contains("libswitchyard-nonexistent-dep.so.1 => not found"));
    }

    void ldLibraryPathComesBeforeRunpath() {
        ElfDependencyResolver::Options options;
        options.ld_library_path = {kUnshipped.toStdString()};
        const auto report = ElfDependencyResolver(options).diagnose(kMissingDep);
        QVERIFY2(report.ok(), report.to_text().c_str());
        QCOMPARE(find(report, "libswitchyard-nonexistent-dep.so.1")->source,
                 LibrarySearchSource::LdLibraryPath);
    }

    void expandsOrigin() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath("deps"));
        const QString lib = dir.filePath("libswitchyard-fixture-missing-dep.so");
        QVERIFY(QFile::copy(QString::fromStdString(kMissingDep), lib));
        QVERIFY(QFile::copy(kUnshipped + "/libswitchyard-nonexistent-dep.so.1",
                            dir.filePath("deps/libswitchyard-nonexistent-dep.so.1")));
        const auto report = diagnose_library(lib.toStdString());
        QVERIFY2(report.ok(), report.to_text().c_str());
        const auto* dep = find(report, "libswitchyard-nonexistent-dep.so.1");
        QCOMPARE(dep->source, LibrarySearchSource::Runpath);
        QCOMPARE(QString::fromStdString(dep->path),
                 dir.filePath("deps/libswitchyard-nonexistent-dep.so.1"));
    }

    void resolvesForTheProcess() {
        ElfDependencyResolver resolver;
        const auto libc = resolver.resolve_for_process("libc.so.6");
        QVERIFY2(libc.found(), libc.detail.c_str());
        const auto none = resolver.resolve_for_process("libswitchyard-no-such-library.so.9");
        QVERIFY(!none.found());
        QVERIFY(none.detail.find("searched") != std::string::npos);
    }

    void parsesTheLoaderCache() {
        const auto data = make_cache({{0x0303, "libfoo.so.1", "/opt/a/libfoo.so.1", 0},
                                      {0x0303, "libbar.so.2", "/opt/b/libbar.so.2", 0},
                                      {0x0303, "libfoo.so.1", "/opt/c/libfoo.so.1", 0}});
        std::string error;
        const auto cache = LdCache::parse(data, &error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(cache.entries().size(), std::size_t(3));
        const auto foo = cache.find("libfoo.so.1");
        QCOMPARE(foo.size(), std::size_t(2));
        QCOMPARE(foo[0]->path, std::string("/opt/a/libfoo.so.1")); // the cache's order is kept
        QCOMPARE(foo[1]->path, std::string("/opt/c/libfoo.so.1"));
        QVERIFY(cache.find("libbaz.so").empty());
        // Old "ld.so-1.7.0" table in front of the new one.
        const auto compat =
            LdCache::parse(std::string("ld.so-1.7.0") + std::string(5, '\0') + data);
        QCOMPARE(compat.entries().size(), std::size_t(3));
    }

    void refusesBrokenCaches_data() {
        QTest::addColumn<QByteArray>("data");
        QTest::addColumn<QString>("error");
        QTest::newRow("empty") << QByteArray() << "not a glibc-ld.so.cache1.1 file";
        QTest::newRow("other format")
            << QByteArray("ld.so-1.7.0\0\0\0\0\0", 16) << "not a glibc-ld.so.cache1.1 file";
        QTest::newRow("truncated header")
            << QByteArray("glibc-ld.so.cache1.1") << "truncated header";
        auto many = QByteArray::fromStdString(make_cache({{0x0303, "a", "/a", 0}}));
        const std::uint32_t huge = 1000;
        std::memcpy(many.data() + 20, &huge, 4);
        QTest::newRow("truncated entries") << many << "truncated";
    }
    void refusesBrokenCaches() {
        QFETCH(QByteArray, data);
        QFETCH(QString, error);
        std::string why;
        const auto cache =
            LdCache::parse(std::string_view(data.constData(), std::size_t(data.size())), &why);
        QVERIFY(cache.empty());
        QVERIFY2(QString::fromStdString(why).contains(error), why.c_str());
    }

    void readsTheSystemCache() {
        if (!QFileInfo::exists("/etc/ld.so.cache"))
            QSKIP("this system has no /etc/ld.so.cache");
        const auto cache = LdCache::system();
        QVERIFY(!cache->empty());
        QVERIFY(!cache->find("libc.so.6").empty());
        QCOMPARE(LdCache::system().get(), cache.get()); // read once while unchanged
    }
};

QTEST_GUILESS_MAIN(TestElfDeps)
#include "tst_elfdeps.moc"
