// SPDX-License-Identifier: MIT
// Plugin discovery and loading against the fixture plugins (tests/fixtures/plugins).
#include <switchyard/plugins/pluginprovider.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>

#include <QtTest>

#include <latch>
#include <mutex>
#include <thread>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace switchyard;

namespace {

const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

QString fixture(const QString& name) {
    return kPlugins + "/" + name;
}

std::string library_of(const QString& case_dir, const QString& target) {
    return (fixture(case_dir) + "/lib" + target + ".so").toStdString();
}

// Whether the process has `path` mapped (never opens it).
bool is_mapped(const std::string& path) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        return false;
    ::dlclose(handle);
    return true;
}

// A counter the fixture library exports; 0 when it is not mapped.
int library_counter(const std::string& path, const char* symbol) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        return 0;
    auto fn = reinterpret_cast<int (*)()>(::dlsym(handle, symbol));
    const int value = fn ? fn() : -1;
    ::dlclose(handle);
    return value;
}

// A fresh registry over its own cell registries, discovering exactly `cases`.
struct Fixture {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};

    explicit Fixture(const QStringList& cases) {
        std::vector<std::string> dirs;
        for (const auto& c : cases)
            dirs.push_back(QDir::isAbsolutePath(c) ? c.toStdString() : fixture(c).toStdString());
        registry.set_plugin_discovery(PluginSearchPath::from_dirs(dirs).discovery());
    }

    std::vector<KernelRegistry::CellPtr> kernel_cells_of(const std::string& backend) const {
        std::vector<KernelRegistry::CellPtr> out;
        for (const auto& m : kernels.manifest())
            if (m.cell->backend == backend)
                out.push_back(m.cell);
        return out;
    }
    int loaded_cells_of(const std::string& backend) const {
        int n = 0;
        for (const auto& c : kernel_cells_of(backend))
            n += c->is_loaded();
        for (const auto& m : components.manifest())
            n += m.cell->backend == backend && m.cell->is_loaded();
        return n;
    }
};

std::optional<BackendInfo> find_info(const std::vector<BackendInfo>& infos, const std::string& name,
                                     BackendState state) {
    for (const auto& i : infos)
        if (i.name == name && i.state == state)
            return i;
    return std::nullopt;
}

void copy_folder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    for (const auto& entry : QDir(from).entryInfoList(QDir::Files))
        QVERIFY(QFile::copy(entry.filePath(), to + "/" + entry.fileName()));
}

} // namespace

class TestPluginLoader : public QObject {
    Q_OBJECT
private slots:
    // First, while no fixture library has been opened in this process.
    void discoveryOpensNoLibrary() {
        const auto good = library_of("good", "switchyard-fixture-good");
        QVERIFY(!is_mapped(good));
        Fixture f({"good", "dup_a", "mismatch", "throwing", "no_entry", "missing_dep"});
        const auto infos = f.registry.infos();
        QVERIFY(infos.size() >= 6);
        const auto info = f.registry.info("fixture-good");
        QCOMPARE(info.state, BackendState::Discovered);
        QCOMPARE(info.source, BackendSource::Plugin);
        QCOMPARE(info.version, std::string("1.0.0"));
        QCOMPARE(info.description, std::string("A plugin that does everything right"));
        QCOMPARE(QString::fromStdString(info.manifest_path), fixture("good") + "/good.plugin.json");
        QCOMPARE(info.library_path, good);
        QCOMPARE(info.extra.value("homepage", ""),
                 std::string("https://example.invalid/switchyard-fixture"));
        QCOMPARE(info.declared_kernels.size(), std::size_t(2));
        // The manifest's cells are in the matrix before anything is loaded.
        const auto cells = f.kernel_cells_of("fixture-good");
        QCOMPARE(cells.size(), std::size_t(2));
        for (const auto& c : cells)
            QVERIFY(!c->is_loaded());
        QVERIFY(!f.registry.is_loaded("fixture-good"));
        QVERIFY(!is_mapped(good));
    }

    void goodPluginLoadsOnFirstUse() {
        Fixture f({"good"});
        const auto good = library_of("good", "switchyard-fixture-good");
        const int before = library_counter(good, "switchyard_fixture_register_calls");
        // Resolution that reaches one of its cells loads it.
        const TupleKey key = kernel_key("gemm", "cpu", "generic", "good");
        f.registry.ensure_initialized();
        const auto cell = f.kernels.resolve_first({key});
        QVERIFY(cell);
        QVERIFY(cell->is_loaded());
        QCOMPARE(cell->backend, std::string("fixture-good"));
        QVERIFY(f.registry.is_loaded("fixture-good"));
        QCOMPARE(library_counter(good, "switchyard_fixture_register_calls"), before + 1);
        // The kernel works: C = A·B for 2x2.
        const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
        float c[4] = {};
        KernelArgs args;
        args.dims = {2, 2, 2};
        args.in = {a, b, nullptr};
        args.out = {c, nullptr};
        args.scalars = {1.0, 0.0, 0, 0};
        cell->fn(args);
        QCOMPARE(c[0], 19.f);
        QCOMPARE(c[3], 50.f);
        const auto info = f.registry.info("fixture-good");
        QCOMPARE(info.state, BackendState::Loaded);
        QVERIFY(info.diagnostics.empty());
        QCOMPARE(f.loaded_cells_of("fixture-good"), 3);
        QCOMPARE(info.dependencies.size(), std::size_t(2));
        QVERIFY(info.dependencies[0].found);
        QVERIFY(QString::fromStdString(info.dependencies[0].location).endsWith("libc.so.6"));
        // Idempotent.
        f.registry.load("fixture-good");
        f.registry.lookup("fixture-good");
        QCOMPARE(library_counter(good, "switchyard_fixture_register_calls"), before + 1);
        // reset reaches the plugin's reset hook.
        const int resets = library_counter(good, "switchyard_fixture_reset_calls");
        f.registry.reset_backends();
        QCOMPARE(library_counter(good, "switchyard_fixture_reset_calls"), resets + 1);
    }

    // Loads racing with lookups and resolutions: the hook runs once and every caller gets the
    // loaded backend. Many rounds, each a fresh registry: the window between the load's
    // publication and its end is short, and a round that lands a reader in it must still pass
    // (a reader there once saw a "no transition from loaded to discovered" error).
    void concurrentLoadsRunTheHookOnce() {
        const std::string manifest = (fixture("good") + "/good.plugin.json").toStdString();
        const auto good = library_of("good", "switchyard-fixture-good");
        constexpr int kRounds = 200;
        constexpr int kThreads = 16;
        for (int round = 0; round < kRounds; ++round) {
            Fixture f({});
            std::shared_ptr<PluginProvider> provider;
            f.registry.set_plugin_discovery([&] {
                provider = std::make_shared<PluginProvider>(manifest);
                return std::vector<std::shared_ptr<BackendProvider>>{provider};
            });
            f.registry.ensure_initialized();
            const int before = library_counter(good, "switchyard_fixture_register_calls");
            std::latch start(kThreads);
            std::mutex errors_mutex;
            QStringList errors;
            auto fail = [&](const QString& what) {
                std::lock_guard lock(errors_mutex);
                errors << what;
            };
            std::vector<std::thread> threads;
            for (int i = 0; i < kThreads; ++i) {
                threads.emplace_back([&, i] {
                    start.arrive_and_wait();
                    try {
                        if (i % 3 == 0)
                            f.registry.load("fixture-good");
                        else if (i % 3 == 1)
                            f.registry.lookup("fixture-good");
                        else if (!f.kernels.resolve_first(
                                     {kernel_key("rms_norm", "cpu", "generic", "good")}))
                            fail("resolve_first found no kernel");
                    } catch (const std::exception& e) {
                        fail(QString::fromStdString(e.what()));
                    } catch (...) {
                        fail("a non-standard exception");
                    }
                });
            }
            for (auto& t : threads)
                t.join();
            if (!errors.isEmpty())
                QFAIL(qPrintable(QString("round %1: %2").arg(round).arg(errors.join("; "))));
            QCOMPARE(provider->register_count(), 1);
            QCOMPARE(library_counter(good, "switchyard_fixture_register_calls"), before + 1);
            QVERIFY(f.registry.is_loaded("fixture-good"));
            QCOMPARE(f.registry.lookup("fixture-good").state, BackendState::Loaded);
        }
    }

    void failuresKeepTheirCausesApart_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("error");   // the exception type
        QTest::addColumn<int>("cause");       // BackendLoadError::Cause, or -1
        QTest::addColumn<QString>("message"); // a fragment of the message
        QTest::addColumn<int>("state");       // BackendState afterwards
        QTest::addColumn<QString>("library"); // a library that must not have been opened
        using C = BackendLoadError::Cause;
        QTest::newRow("invalid JSON")
            << "invalid_json"
            << "broken"
            << "load" << int(C::InvalidManifest) << "not valid JSON at line 6"
            << int(BackendState::Invalid) << "";
        QTest::newRow("wrong type") << "wrong_type"
                                    << "fixture-wrong-type"
                                    << "load" << int(C::InvalidManifest)
                                    << "key 'tags': expected an array of strings, got string"
                                    << int(BackendState::Invalid) << "";
        QTest::newRow("library missing")
            << "library_missing"
            << "fixture-library-missing"
            << "load" << int(C::LibraryMissing) << "libswitchyard-fixture-never-built.so is missing"
            << int(BackendState::Failed) << "";
        // The loader says "file too short" (48 bytes of text): library_not_elf, as predicted.
        QTest::newRow("library is not a library")
            << "library_garbage"
            << "fixture-library-garbage"
            << "load" << int(C::LibraryNotElf) << "is not an ELF file: it has 48 bytes"
            << int(BackendState::Failed) << "";
        QTest::newRow("dependency missing")
            << "missing_dep"
            << "fixture-missing-dep"
            << "load" << int(C::LibraryDependencyMissing)
            << "a library it needs is missing: libswitchyard-nonexistent-dep.so.1"
            << int(BackendState::Failed) << "";
        QTest::newRow("entry missing")
            << "no_entry"
            << "fixture-no-entry"
            << "load" << int(C::EntryMissing) << "exports no 'switchyard_plugin_entry' symbol"
            << int(BackendState::Failed) << "";
        QTest::newRow("entry says contract 99")
            << "entry_contract99"
            << "fixture-entry-contract99"
            << "load" << int(C::EntryContractTooNew) << "built for backend-contract revision 99"
            << int(BackendState::Failed) << "";
        QTest::newRow("register hook throws")
            << "throwing"
            << "fixture-throwing"
            << "load" << int(C::RegisterHookThrew) << "fails on purpose after two cells"
            << int(BackendState::Failed) << "";
        QTest::newRow("manifest contract 99")
            << "contract99"
            << "fixture-contract99"
            << "contract" << -1 << "revision 99" << int(BackendState::Unavailable)
            << "contract99/libswitchyard-fixture-contract99.so";
        QTest::newRow("min core 99.0.0")
            << "min_core"
            << "fixture-min-core"
            << "contract" << -1 << "requires Switchyard >= 99.0.0" << int(BackendState::Unavailable)
            << "min_core/libswitchyard-fixture-min-core.so";
        QTest::newRow("optional dependency missing")
            << "unavailable"
            << "fixture-unavailable"
            << "missing" << -1 << "Install switchyard-fixture-runtime (it does not exist)"
            << int(BackendState::Unavailable) << "unavailable/libswitchyard-fixture-unavailable.so";
    }
    void failuresKeepTheirCausesApart() {
        QFETCH(QString, dir);
        QFETCH(QString, name);
        QFETCH(QString, error);
        QFETCH(int, cause);
        QFETCH(QString, message);
        QFETCH(int, state);
        QFETCH(QString, library);
        Fixture f({dir});
        const std::string backend = name.toStdString();
        f.registry.ensure_initialized();
        for (int attempt = 0; attempt < 2; ++attempt) { // a failure is remembered, not retried
            QString kind;
            QString what;
            int got_cause = -1;
            try {
                f.registry.load(backend);
                QFAIL("load() succeeded");
            } catch (const BackendLoadError& e) {
                kind = "load";
                got_cause = int(e.cause());
                what = e.what();
                QCOMPARE(e.backend(), backend);
            } catch (const ContractMismatch& e) {
                kind = "contract";
                what = e.what();
            } catch (const MissingDependency& e) {
                kind = "missing";
                what = e.what();
            } catch (const std::exception& e) {
                kind = "other";
                what = e.what();
            }
            QCOMPARE(kind, error);
            QCOMPARE(got_cause, cause);
            QVERIFY2(what.contains(message), qPrintable(what));
            QVERIFY2(what.contains(name), qPrintable(what)); // names the backend
        }
        QVERIFY(!f.registry.is_loaded(backend));
        const auto info = f.registry.info(backend);
        QCOMPARE(int(info.state), state);
        QVERIFY(!info.error.empty());
        // Rollback: nothing it registered is visible, its declared cells are unusable.
        QCOMPARE(f.loaded_cells_of(backend), 0);
        for (const auto& c : f.kernel_cells_of(backend)) {
            QVERIFY(!c->is_available());
            QVERIFY(!f.kernels.resolve_first({c->key}));
        }
        if (!library.isEmpty()) // refused before any plugin code ran
            QVERIFY(!is_mapped(fixture(library).toStdString()));
    }

    void throwingHookLeavesNothingAndOthersAreUnaffected() {
        Fixture f({"throwing", "good"});
        f.registry.ensure_initialized();
        const auto key1 = kernel_key("gemm", "cpu", "generic", "throwing");
        const auto key2 = kernel_key("rms_norm", "cpu", "generic", "throwing");
        QVERIFY(!f.kernels.resolve_first({key1, key2})); // tries to load, fails, falls through
        QCOMPARE(f.registry.info("fixture-throwing").state, BackendState::Failed);
        for (const auto& key : {key1, key2}) {
            const auto cell = f.kernels.lookup(key);
            QVERIFY(!cell || !cell->is_loaded());
        }
        QCOMPARE(f.loaded_cells_of("fixture-throwing"), 0);
        QVERIFY(!f.registry.is_loaded("fixture-throwing"));
        f.registry.load("fixture-good");
        QVERIFY(f.registry.is_loaded("fixture-good"));
        QCOMPARE(f.loaded_cells_of("fixture-good"), 3);
    }

    void declaredAndRegisteredCellsAreCompared() {
        Fixture f({"mismatch"});
        f.registry.load("fixture-mismatch");
        const auto info = f.registry.info("fixture-mismatch");
        QCOMPARE(info.state, BackendState::Loaded);
        QString all;
        for (const auto& d : info.diagnostics)
            all += QString::fromStdString(d) + "\n";
        QVERIFY2(all.contains("did not register: (rms_norm, cpu, generic, mismatch)"),
                 qPrintable(all));
        QVERIFY2(all.contains("does not declare: (flow_match_step, cpu, generic, mismatch)"),
                 qPrintable(all));
        QVERIFY(f.kernels.lookup(kernel_key("flow_match_step", "cpu", "generic", "mismatch"))
                    ->is_loaded());
    }

    void writableByOthersIsNotLoaded_data() {
        QTest::addColumn<QString>("what");
        QTest::newRow("folder") << "plugin folder";
        QTest::newRow("manifest") << "manifest";
        QTest::newRow("library") << "library";
    }
    void writableByOthersIsNotLoaded() {
        QFETCH(QString, what);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath("plugins");
        copy_folder(fixture("good"), dir);
        const QString target = what == "plugin folder" ? dir
                               : what == "manifest"    ? dir + "/good.plugin.json"
                                                       : dir + "/libswitchyard-fixture-good.so";
        struct stat st {};
        QCOMPARE(::stat(target.toLocal8Bit().constData(), &st), 0);
        QCOMPARE(::chmod(target.toLocal8Bit().constData(), st.st_mode | S_IWOTH), 0);
        Fixture f({dir});
        const auto info = f.registry.info("fixture-good");
        QCOMPARE(info.state, BackendState::Invalid);
        QCOMPARE(info.cause, BackendCause::Untrusted);
        QCOMPARE(to_string(info.cause), std::string_view("untrusted"));
        QVERIFY(!info.is_available());
        const auto usable = f.registry.list({.exclude_tags = {}});
        QVERIFY(std::find(usable.begin(), usable.end(), "fixture-good") == usable.end());
        const QString error = QString::fromStdString(info.error);
        QVERIFY2(error.contains(what + " " + target + " is writable by other users"),
                 qPrintable(error));
        QVERIFY2(error.contains("chmod o-w"), qPrintable(error));
        try {
            f.registry.load("fixture-good");
            QFAIL("an untrusted plugin was loaded");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendLoadError::Cause::Untrusted);
        }
        QCOMPARE(f.registry.info("fixture-good").cause, BackendCause::Untrusted);
        QVERIFY(!is_mapped((dir + "/libswitchyard-fixture-good.so").toStdString()));
    }

    // What can be known without loading is known at discovery.
    void libraryMissingIsNotDiscovered() {
        Fixture f({"library_missing"});
        const auto info = f.registry.info("fixture-library-missing");
        QCOMPARE(info.state, BackendState::Failed);
        QCOMPARE(info.cause, BackendCause::LibraryMissing);
        QVERIFY(!info.is_available());
        QVERIFY(info.error.find("does not exist") != std::string::npos);
        const auto usable = f.registry.list({.exclude_tags = {}});
        QVERIFY(std::find(usable.begin(), usable.end(), "fixture-library-missing") == usable.end());
    }

    // A missing DT_NEEDED or a library that is not ELF is found when described in detail,
    // and stored.
    void detailsStoreWhatTheLibraryShows_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("cause");
        QTest::newRow("missing DT_NEEDED")
            << "missing_dep"
            << "fixture-missing-dep" << int(BackendCause::LibraryDependencyMissing);
        QTest::newRow("not ELF") << "library_garbage"
                                 << "fixture-library-garbage" << int(BackendCause::LibraryNotElf);
    }
    void detailsStoreWhatTheLibraryShows() {
        QFETCH(QString, dir);
        QFETCH(QString, name);
        QFETCH(int, cause);
        Fixture f({dir});
        const std::string backend = name.toStdString();
        QCOMPARE(f.registry.info(backend).state, BackendState::Discovered);
        const auto details = f.registry.details(backend);
        QCOMPARE(details.state, BackendState::Failed);
        QCOMPARE(int(details.cause), cause);
        QVERIFY(details.library_report.has_value());
        QCOMPARE(int(f.registry.info(backend).cause), cause); // stored
        QVERIFY_THROWS_EXCEPTION(BackendLoadError, f.registry.load(backend));
        QVERIFY(!f.registry.is_loaded(backend));
    }

    void trustIsCheckedAgainAtLoad() {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath("plugins");
        copy_folder(fixture("good"), dir);
        PluginProvider provider((dir + "/good.plugin.json").toStdString());
        QCOMPARE(provider.describe().state, BackendState::Discovered);
        QCOMPARE(::chmod(dir.toLocal8Bit().constData(), 0777), 0);
        CellRegistrar registrar("fixture-good", CellSource::Plugin);
        try {
            provider.load(registrar);
            QFAIL("an untrusted plugin was loaded");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendLoadError::Cause::Untrusted);
        }
        QVERIFY(registrar.pending_kernels().empty());
        QVERIFY(!is_mapped((dir + "/libswitchyard-fixture-good.so").toStdString()));
    }

    void firstPluginClaimingANameWins() {
        Fixture f({"dup_a", "dup_b"});
        const auto info = f.registry.info("fixture-dup");
        QVERIFY(QString::fromStdString(info.manifest_path).endsWith("dup_a/dup.plugin.json"));
        const auto shadowed = find_info(f.registry.infos(), "fixture-dup", BackendState::Shadowed);
        QVERIFY(shadowed);
        QVERIFY(QString::fromStdString(shadowed->manifest_path).endsWith("dup_b/dup.plugin.json"));
        QVERIFY2(QString::fromStdString(shadowed->shadowed_by).contains("dup_a/dup.plugin.json"),
                 shadowed->shadowed_by.c_str());
        QVERIFY(shadowed->error.find("owned by") != std::string::npos);
        f.registry.load("fixture-dup");
        QVERIFY(is_mapped(library_of("dup_a", "switchyard-fixture-dup-a")));
        QVERIFY(!is_mapped(library_of("dup_b", "switchyard-fixture-dup-b")));
        QVERIFY(f.kernels.lookup(kernel_key("gemm", "cpu", "generic", "dup_a"))->is_loaded());
        QVERIFY(!f.kernels.lookup(kernel_key("gemm", "cpu", "generic", "dup_b")));
    }

    void builtinNamesWin() {
        Fixture f({"claims_cpu"});
        QCOMPARE(f.registry.info("cpu").source, BackendSource::Builtin);
        const auto shadowed = find_info(f.registry.infos(), "cpu", BackendState::Shadowed);
        QVERIFY(shadowed);
        QVERIFY2(shadowed->shadowed_by.find("cpu (builtin)") != std::string::npos,
                 shadowed->shadowed_by.c_str());
        QVERIFY(!f.kernels.lookup(kernel_key("gemm", "cpu", "generic", "claims_cpu")));
    }

    void unknownNamesAreNotInstalled() {
        Fixture f({"good"});
        try {
            f.registry.load("fixture-goood");
            QFAIL("loaded a plugin that is not installed");
        } catch (const InvalidBackend& e) {
            QCOMPARE(e.suggestions().front(), std::string("fixture-good"));
        }
    }

    void filesThatAreNotManifestsAreSkipped() {
        std::vector<PluginDirectoryScan> scans;
        const auto path = PluginSearchPath::from_dirs({fixture("invalid_json").toStdString(),
                                                       fixture("invalid_json").toStdString(),
                                                       "/nonexistent/dir"});
        const auto providers = path.discover(&scans);
        QCOMPARE(providers.size(),
                 std::size_t(1)); // README.txt skipped; the folder listed twice is read once
        QCOMPARE(scans.size(), std::size_t(3));
        QCOMPARE(scans[0].skipped_files, std::size_t(1));
        QCOMPARE(scans[0].manifests.size(), std::size_t(1));
        QVERIFY(scans[1].duplicate);
        QVERIFY(!scans[2].exists);
        QCOMPARE(providers[0]->describe().state, BackendState::Invalid);
    }

    void rescanPicksUpChanges() {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath("plugins");
        copy_folder(fixture("good"), dir);
        Fixture f({dir});
        ListOptions all{{}, true};
        QCOMPARE(f.registry.list(all).size(), std::size_t(2)); // cpu, fixture-good
        copy_folder(fixture("dup_a"), dir);
        f.registry.rescan();
        auto names = f.registry.list(all);
        QVERIFY(std::find(names.begin(), names.end(), "fixture-dup") != names.end());
        QVERIFY(QFile::remove(dir + "/dup.plugin.json"));
        f.registry.rescan();
        names = f.registry.list(all);
        QVERIFY(std::find(names.begin(), names.end(), "fixture-dup") == names.end());
        QVERIFY(std::find(names.begin(), names.end(), "fixture-good") != names.end());
    }

    void searchPathOrder() {
        qputenv("SWITCHYARD_PLUGIN_PATH", "/opt/a::/opt/b");
        qputenv("XDG_DATA_HOME", "/xdg/data");
        auto path = PluginSearchPath::from_environment();
        QCOMPARE(path.dirs().size(), std::size_t(4));
        QCOMPARE(path.dirs()[0].path, std::string("/opt/a"));
        QCOMPARE(path.dirs()[0].origin, std::string("SWITCHYARD_PLUGIN_PATH"));
        QCOMPARE(path.dirs()[1].path, std::string("/opt/b"));
        QCOMPARE(path.dirs()[2].path, std::string("/xdg/data/switchyard/plugins"));
        QCOMPARE(path.dirs()[2].origin, std::string("user"));
        const QString exe_dir = QCoreApplication::applicationDirPath();
        QCOMPARE(QString::fromStdString(path.dirs()[3].path),
                 QDir::cleanPath(exe_dir + "/../lib/switchyard/plugins"));
        QCOMPARE(path.dirs()[3].origin, std::string("install"));
        // A relative XDG_DATA_HOME is ignored (XDG spec): ~/.local/share is used.
        qputenv("XDG_DATA_HOME", "relative");
        qputenv("HOME", "/home/someone");
        qunsetenv("SWITCHYARD_PLUGIN_PATH");
        path = PluginSearchPath::from_environment();
        QCOMPARE(path.dirs()[0].path, std::string("/home/someone/.local/share/switchyard/plugins"));
    }
};

QTEST_GUILESS_MAIN(TestPluginLoader)
#include "tst_pluginloader.moc"
