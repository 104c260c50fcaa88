// SPDX-License-Identifier: MIT
// The seeds' backend registry (and the registry side of their loader): names, tags, capabilities,
// lazy built-ins, suggestions, default backend, reset, the plugin seam, thread safety.
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/devicebackends.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/runtime/runtime.h>

#include <QTest>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

using namespace switchyard;

namespace {

/// A fresh registry over its own tuple registries, so every test starts empty.
struct Fixture {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    std::unique_ptr<BackendRegistry> registry =
        std::make_unique<BackendRegistry>(kernels, components, builtin_backends);
};

BackendSpec spec(std::string name, std::vector<std::string> tags = {}) {
    BackendSpec s;
    s.name = std::move(name);
    s.tags = std::move(tags);
    s.description = "test backend";
    return s;
}

BackendSpec with_kernel(BackendSpec s, std::string op, std::string device, std::string arch,
                        std::string variant) {
    s.register_cells = [=](CellRegistrar& r) {
        r.add_kernel({op, device, arch, variant, [](const KernelArgs&) {}, {}, 64});
    };
    return s;
}

/// An in-memory plugin: describes itself, counts loads, can fail.
class FakeProvider : public BackendProvider {
public:
    explicit FakeProvider(std::string name, bool throws = false) : m_throws(throws) {
        m_info.name = std::move(name);
        m_info.source = BackendSource::Plugin;
        m_info.state = BackendState::Discovered;
        m_info.manifest_path = "/fake/" + m_info.name + ".plugin.json";
        m_info.declared_kernels = {{{"gemm", "opencl", "generic", "default"}, 0}};
    }
    BackendInfo describe() const override { return m_info; }
    void load(CellRegistrar& r) override {
        ++loads;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        r.add_kernel({"gemm", "opencl", "generic", "default", [](const KernelArgs&) {}, {}, 0});
        r.add_kernel({"gemm", "opencl", "generic", "extra", [](const KernelArgs&) {}, {}, 0});
        if (m_throws)
            throw std::runtime_error("hook exploded");
    }
    void unload() noexcept override { ++unloads; }
    BackendInfo m_info;
    std::atomic<int> loads{0};
    std::atomic<int> unloads{0};

private:
    bool m_throws;
};

} // namespace

class TestBackendRegistry : public QObject {
    Q_OBJECT
private slots:
    void builtinsLoadLazilyOnce() {
        Fixture f;
        QCOMPARE(f.kernels.size(), std::size_t{0}); // nothing before first use
        const auto names = f.registry->list();
        QVERIFY(std::find(names.begin(), names.end(), "cpu") != names.end());
        const auto cells = f.kernels.size();
        QVERIFY(cells >= 4);
        for (const char* op : {"flow_match_step", "flow_sde_step", "gemm", "rms_norm"})
            QVERIFY2(f.kernels.lookup({op, "cpu", "generic", "reference"}), op);
        f.registry->list();
        f.registry->ensure_initialized();
        QCOMPARE(f.kernels.size(), cells); // not registered twice
        QCOMPARE(f.registry->info("cpu").source, BackendSource::Builtin);
        QCOMPARE(f.registry->info("cpu").state, BackendState::Loaded);
    }

    void duplicateRegistrationIsAnError() {
        Fixture f;
        f.registry->register_backend(spec("mine"));
        try {
            f.registry->register_backend(spec("mine"));
            QFAIL("duplicate registration must throw");
        } catch (const DuplicateBackend& e) {
            QVERIFY(QString(e.what()).contains("'mine' is already registered"));
        }
        f.registry->ensure_initialized(); // the built-in "cpu" now owns its name
        QVERIFY_THROWS_EXCEPTION(DuplicateBackend, f.registry->register_backend(spec("cpu")));
    }

    // As in the seed registry: a built-in's name is taken before any explicit registration is
    // accepted, even when nothing has touched the registry yet.
    void explicitRegistrationOfBuiltinNameIsDuplicate() {
        Fixture f;
        QVERIFY_THROWS_EXCEPTION(DuplicateBackend,
                                 f.registry->register_backend(
                                     with_kernel(spec("cpu"), "gemm", "cpu", "generic", "mine")));
        QCOMPARE(f.registry->info("cpu").source, BackendSource::Builtin);
        QVERIFY(f.kernels.lookup({"gemm", "cpu", "generic", "reference"}));
        QVERIFY(!f.kernels.lookup({"gemm", "cpu", "generic", "mine"}));
        // Once the built-in is unregistered, the name is free for an explicit backend.
        QVERIFY(f.registry->unregister_backend("cpu"));
        f.registry->register_backend(with_kernel(spec("cpu"), "gemm", "cpu", "generic", "mine"));
        QCOMPARE(f.registry->info("cpu").source, BackendSource::Registered);
    }

    void unregisterRemovesBackendAndCells() {
        Fixture f;
        f.registry->register_backend(with_kernel(spec("extra"), "gemm", "cpu", "generic", "extra"));
        QVERIFY(f.kernels.lookup({"gemm", "cpu", "generic", "extra"}));
        QVERIFY(f.registry->unregister_backend("extra"));
        QVERIFY(!f.kernels.lookup({"gemm", "cpu", "generic", "extra"}));
        QVERIFY(!f.registry->unregister_backend("extra"));
        QVERIFY_THROWS_EXCEPTION(InvalidBackend, f.registry->info("extra"));
        f.registry->register_backend(spec("extra")); // the name is free again
    }

    void registerHookThatThrowsLeavesNothing() {
        Fixture f;
        BackendSpec s = spec("half");
        s.register_cells = [](CellRegistrar& r) {
            r.add_kernel({"gemm", "cpu", "generic", "half", [](const KernelArgs&) {}, {}, 0});
            throw std::runtime_error("boom");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, f.registry->register_backend(s));
        QVERIFY(!f.kernels.lookup({"gemm", "cpu", "generic", "half"}));
        QVERIFY_THROWS_EXCEPTION(InvalidBackend, f.registry->info("half"));
    }

    void listFiltersTags_data() {
        QTest::addColumn<QStringList>("exclude");
        QTest::addColumn<bool>("useDefault");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("default hides debug and experimental")
            << QStringList{} << true << QStringList{"cpu", "plain", "tagged"};
        QTest::newRow("nothing excluded")
            << QStringList{} << false << QStringList{"cpu", "dbg", "exp", "plain", "tagged"};
        QTest::newRow("custom tag")
            << QStringList{"fast"} << false << QStringList{"cpu", "dbg", "exp", "plain"};
        QTest::newRow("only debug")
            << QStringList{"debug"} << false << QStringList{"cpu", "exp", "plain", "tagged"};
    }
    void listFiltersTags() {
        QFETCH(QStringList, exclude);
        QFETCH(bool, useDefault);
        QFETCH(QStringList, expected);
        Fixture f;
        f.registry->register_debug_backend(spec("dbg"));
        f.registry->register_experimental_backend(spec("exp"));
        f.registry->register_backend(spec("plain"));
        f.registry->register_backend(spec("tagged", {"fast"}));
        ListOptions options;
        if (!useDefault) {
            options.exclude_tags.clear();
            for (const auto& t : exclude)
                options.exclude_tags.push_back(t.toStdString());
        }
        QStringList got;
        for (const auto& n : f.registry->list(options))
            got << QString::fromStdString(n);
        QCOMPARE(got, expected);
        QCOMPARE(f.registry->info("dbg").tags, std::vector<std::string>{"debug"});
    }

    void missingDependencyHidesAndExplains() {
        Fixture f;
        qunsetenv("SWITCHYARD_TEST_DEP_VAR");
        clear_dependency_cache();
        BackendSpec s = spec("needy");
        s.capabilities.optional_deps = {
            {"SWITCHYARD_TEST_DEP_VAR", DependencyKind::Env, "export SWITCHYARD_TEST_DEP_VAR=1"},
            {"libswitchyard-definitely-missing.so.7", DependencyKind::Library,
             "apt install libmissing7"}};
        f.registry->register_backend(s);
        auto names = f.registry->list();
        QVERIFY(std::find(names.begin(), names.end(), "needy") == names.end());
        ListOptions all;
        all.include_unavailable = true;
        names = f.registry->list(all);
        QVERIFY(std::find(names.begin(), names.end(), "needy") != names.end());
        const auto info = f.registry->info("needy");
        QCOMPARE(info.state, BackendState::Unavailable);
        QCOMPARE(info.missing_dependencies().size(), std::size_t{2});
        try {
            f.registry->lookup("needy");
            QFAIL("lookup of a backend with missing dependencies must throw");
        } catch (const MissingDependency& e) {
            const QString msg = e.what();
            QVERIFY2(msg.contains("missing optional dependencies: SWITCHYARD_TEST_DEP_VAR, "
                                  "libswitchyard-definitely-missing.so.7"),
                     qPrintable(msg));
            QVERIFY2(msg.contains("export SWITCHYARD_TEST_DEP_VAR=1"), qPrintable(msg));
            QVERIFY2(msg.contains("apt install libmissing7"), qPrintable(msg));
            QCOMPARE(e.missing().size(), std::size_t{2});
        }
        QVERIFY_THROWS_EXCEPTION(MissingDependency, f.registry->set_default_backend("needy"));
        QCOMPARE(f.registry->default_backend(), std::string("cpu"));
    }

    void foundDependencySaysWhere() {
        Fixture f;
        qputenv("SWITCHYARD_TEST_DEP_SET", "yes");
        clear_dependency_cache();
        BackendSpec s = spec("happy");
        s.capabilities.optional_deps = {{"SWITCHYARD_TEST_DEP_SET", DependencyKind::Env, ""},
                                        {"sh", DependencyKind::Executable, ""},
                                        {"/", DependencyKind::File, ""},
                                        {"libc.so.6", DependencyKind::Library, ""}};
        f.registry->register_backend(s);
        const auto info = f.registry->lookup("happy");
        QCOMPARE(info.state, BackendState::Loaded);
        for (const auto& d : info.dependencies) {
            QVERIFY2(d.found, d.dependency.name.c_str());
            QVERIFY2(!d.location.empty(), d.dependency.name.c_str());
        }
    }

    void unknownNameSuggests_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("suggestions");
        // Expected values are what python3's difflib.get_close_matches(name, names, n=2,
        // cutoff=0.6) returns.
        QTest::newRow("typo") << "cdua" << QStringList{"cuda"};
        QTest::newRow("extra letter") << "cpuu" << QStringList{"cpu"};
        QTest::newRow("two, ordered by score") << "openc" << QStringList{"opencl", "opencl-pocl"};
        QTest::newRow("two, other order") << "opencl-poc" << QStringList{"opencl-pocl", "opencl"};
        QTest::newRow("hidden tags still suggested") << "fastexpr" << QStringList{"fastexp"};
        QTest::newRow("nothing close") << "xyz" << QStringList{};
        QTest::newRow("case matters") << "CPU" << QStringList{};
    }
    void unknownNameSuggests() {
        QFETCH(QString, name);
        QFETCH(QStringList, suggestions);
        Fixture f;
        for (const char* n : {"cuda", "opencl", "openblas-cpu", "cuda-graphs", "opencl-pocl"})
            f.registry->register_backend(spec(n));
        f.registry->register_debug_backend(spec("debugdump"));
        f.registry->register_experimental_backend(spec("fastexp"));
        try {
            f.registry->lookup(name.toStdString());
            QFAIL("unknown name must throw");
        } catch (const InvalidBackend& e) {
            QStringList got;
            for (const auto& s : e.suggestions())
                got << QString::fromStdString(s);
            QCOMPARE(got, suggestions);
            const QString msg = e.what();
            QVERIFY(msg.startsWith("Invalid backend: '" + name + "'"));
            if (suggestions.isEmpty())
                QVERIFY(!msg.contains("did you mean"));
            else
                QVERIFY2(msg.contains("did you mean: '" + suggestions.join("', '") + "'?"),
                         qPrintable(msg));
            QVERIFY(msg.contains("switchyard-cli list"));
        }
    }

    void contractIsChecked_data() {
        QTest::addColumn<int>("contract");
        QTest::addColumn<QString>("minCore");
        QTest::addColumn<QString>("maxCore");
        QTest::addColumn<QString>("core");
        QTest::addColumn<int>("expect"); // 0 ok, 1 upgrade Switchyard, 2 upgrade backend
        QTest::addColumn<QString>("message");
        QTest::newRow("defaults") << 1 << ""
                                  << ""
                                  << "0.1.0" << 0 << "";
        QTest::newRow("older contract ok") << 0 << ""
                                           << ""
                                           << "0.1.0" << 0 << "";
        QTest::newRow("contract too new")
            << kContractVersion + 1 << ""
            << ""
            << "0.1.0" << 1
            << QString("implements backend-contract revision %1").arg(kContractVersion + 1);
        QTest::newRow("min inclusive") << 1 << "0.1.0"
                                       << ""
                                       << "0.1.0" << 0 << "";
        QTest::newRow("max inclusive") << 1 << ""
                                       << "0.1.0"
                                       << "0.1.0" << 0 << "";
        QTest::newRow("below min") << 1 << "99.0.0"
                                   << ""
                                   << "0.1.0" << 1 << "requires Switchyard >= 99.0.0, found 0.1.0";
        QTest::newRow("above max") << 1 << ""
                                   << "0.0.9"
                                   << "0.1.0" << 2 << "supports Switchyard <= 0.0.9, found 0.1.0";
        QTest::newRow("numeric not lexical") << 1 << "0.9.0"
                                             << ""
                                             << "0.10.0" << 0 << "";
        QTest::newRow("only three components") << 1 << ""
                                               << "1.2.3"
                                               << "1.2.3.9" << 0 << "";
        QTest::newRow("suffix ignored") << 1 << "1.2.3"
                                        << ""
                                        << "1.2.3rc1" << 0 << "";
        QTest::newRow("unparseable core skips range") << 1 << "99.0.0"
                                                      << "0.0.1"
                                                      << "dev" << 0 << "";
        QTest::newRow("unparseable core keeps contract")
            << kContractVersion + 1 << ""
            << ""
            << "dev" << 1 << QString("revision %1").arg(kContractVersion + 1);
        QTest::newRow("unparseable bound skipped") << 1 << "latest"
                                                   << ""
                                                   << "0.1.0" << 0 << "";
    }
    void contractIsChecked() {
        QFETCH(int, contract);
        QFETCH(QString, minCore);
        QFETCH(QString, maxCore);
        QFETCH(QString, core);
        QFETCH(int, expect);
        QFETCH(QString, message);
        BackendCapabilities caps;
        caps.contract_version = contract;
        if (!minCore.isEmpty())
            caps.min_core_version = minCore.toStdString();
        if (!maxCore.isEmpty())
            caps.max_core_version = maxCore.toStdString();
        try {
            check_contract(caps, "b", core.toStdString());
            QCOMPARE(expect, 0);
        } catch (const ContractMismatch& e) {
            QVERIFY2(expect != 0, e.what());
            QCOMPARE(e.upgrade(), expect == 1 ? ContractMismatch::Upgrade::Switchyard
                                              : ContractMismatch::Upgrade::Backend);
            QVERIFY2(QString(e.what()).contains(message), e.what());
            QVERIFY(QString(e.what()).contains(expect == 1 ? "upgrade Switchyard"
                                                           : "check the backend for an update"));
        }
    }

    void lookupChecksContract() {
        Fixture f;
        BackendSpec s = spec("future");
        s.capabilities.contract_version = 99;
        f.registry->register_backend(s);
        QVERIFY_THROWS_EXCEPTION(ContractMismatch, f.registry->lookup("future"));
        QCOMPARE(f.registry->info("future").state, BackendState::Unavailable);
        auto names = f.registry->list();
        QVERIFY(std::find(names.begin(), names.end(), "future") == names.end());
    }

    void defaultBackend() {
        Fixture f;
        QCOMPARE(f.registry->default_backend(), std::string("cpu"));
        f.registry->register_backend(spec("mine"));
        f.registry->set_default_backend("mine");
        QCOMPARE(f.registry->default_backend(), std::string("mine"));
        QVERIFY_THROWS_EXCEPTION(InvalidBackend, f.registry->set_default_backend("nope"));
        QCOMPARE(f.registry->default_backend(), std::string("mine"));
        f.registry->set_default_backend(std::nullopt);
        QCOMPARE(f.registry->default_backend(), std::string("cpu"));
        f.registry->set_default_backend("mine");
        f.registry->unregister_backend("mine");
        QCOMPARE(f.registry->default_backend(), std::string("cpu"));
    }

    void resetCallsLoadedBackends() {
        Fixture f;
        int resets = 0;
        BackendSpec s = spec("stateful");
        s.reset = [&] { ++resets; };
        f.registry->register_backend(s);
        f.registry->register_backend(spec("stateless"));
        f.registry->reset_backends();
        f.registry->reset_backends();
        QCOMPARE(resets, 2);
    }

    void clearForgetsEverything() {
        Fixture f;
        f.registry->register_backend(spec("mine"));
        f.registry->clear();
        QVERIFY_THROWS_EXCEPTION(InvalidBackend, f.registry->info("mine"));
        QVERIFY(f.registry->info("cpu").source ==
                BackendSource::Builtin); // built-ins come back lazily
    }

    void pluginClaimsOnlyFreeNames() {
        Fixture f;
        auto p1 = std::make_shared<FakeProvider>("cpu");
        auto p2 = std::make_shared<FakeProvider>("gpuish");
        auto p3 = std::make_shared<FakeProvider>("gpuish");
        p3->m_info.manifest_path = "/second/gpuish.plugin.json";
        f.registry->set_plugin_discovery([=] {
            return std::vector<std::shared_ptr<BackendProvider>>{p1, p2, p3};
        });
        const auto infos = f.registry->infos();
        int shadowed = 0;
        for (const auto& i : infos) {
            if (i.state == BackendState::Shadowed) {
                ++shadowed;
                QVERIFY2(QString::fromStdString(i.error).contains("is owned by"), i.error.c_str());
            }
        }
        QCOMPARE(shadowed, 2);
        QCOMPARE(f.registry->info("cpu").source, BackendSource::Builtin);
        QCOMPARE(f.registry->info("gpuish").manifest_path, std::string("/fake/gpuish.plugin.json"));
        QCOMPARE(f.registry->info("gpuish").state, BackendState::Discovered);
        QCOMPARE(p1->loads.load() + p2->loads.load() + p3->loads.load(),
                 0); // discovery never loads
    }

    void placeholderCellsLoadOnResolution() {
        Fixture f;
        auto p = std::make_shared<FakeProvider>("gpuish");
        f.registry->set_plugin_discovery(
            [=] { return std::vector<std::shared_ptr<BackendProvider>>{p}; });
        f.registry->ensure_initialized();
        auto declared = f.kernels.lookup({"gemm", "opencl", "generic", "default"});
        QVERIFY(declared);
        QVERIFY(!declared->is_loaded());
        QCOMPARE(p->loads.load(), 0);
        const auto r = resolve_kernel(*f.registry, "gemm", Target{"opencl", ""});
        QVERIFY(r.winner);
        QCOMPARE(*r.winner, std::size_t{0});
        QCOMPARE(p->loads.load(), 1);
        QVERIFY(f.registry->is_loaded("gpuish"));
        const auto info = f.registry->info("gpuish");
        QCOMPARE(info.state, BackendState::Loaded);
        QCOMPARE(info.diagnostics.size(), std::size_t{1}); // "extra" was not declared
        QVERIFY(QString::fromStdString(info.diagnostics[0]).contains("does not declare"));
    }

    // The observer hears of a load before the plugin's code runs and after it ended, also
    // when a resolution reaches the plugin's cell and when the load fails.
    void loadObserverHearsEveryLoad() {
        Fixture f;
        auto good = std::make_shared<FakeProvider>("gpuish");
        auto bad = std::make_shared<FakeProvider>("broken", true);
        bad->m_info.declared_kernels = {{{"gemm", "opencl", "generic", "other"}, 0}};
        f.registry->set_plugin_discovery([=] {
            return std::vector<std::shared_ptr<BackendProvider>>{good, bad};
        });
        QStringList heard;
        f.registry->set_load_observer([&](const std::string& name, bool begin) {
            const int loads = name == "gpuish" ? good->loads.load() : bad->loads.load();
            heard << QString("%1 %2 after %3 loads")
                         .arg(QString::fromStdString(name), begin ? "begins" : "ends")
                         .arg(loads);
        });
        (void)resolve_kernel(*f.registry, "gemm", Target{"opencl", ""});
        QVERIFY2(heard == (QStringList{"gpuish begins after 0 loads", "gpuish ends after 1 loads"}),
                 qPrintable(heard.join("; ")));
        QVERIFY_THROWS_EXCEPTION(BackendLoadError, f.registry->load("broken"));
        QCOMPARE(heard.mid(2),
                 (QStringList{"broken begins after 0 loads", "broken ends after 1 loads"}));
        // A remembered failure runs no plugin code: nothing to announce.
        QVERIFY_THROWS_EXCEPTION(BackendLoadError, f.registry->load("broken"));
        QCOMPARE(heard.size(), 4);
        QCOMPARE(bad->loads.load(), 1);
        f.registry->set_load_observer({});
    }

    // A backend provides the device kinds its manifest says; an older manifest (no key) those
    // of its cells that no manifest claims. Only providers are loaded to list devices.
    void deviceBackendsAreTheProvidersOfAKind() {
        auto plugin = [](std::string name, std::vector<std::vector<std::string>> cells,
                         std::optional<std::vector<std::string>> provides) {
            BackendInfo i;
            i.name = std::move(name);
            i.source = BackendSource::Plugin;
            i.state = BackendState::Discovered;
            for (auto& c : cells)
                i.declared_kernels.push_back({std::move(c), 0});
            i.provides_devices = std::move(provides);
            return i;
        };
        std::vector<BackendInfo> infos = {
            plugin("cuda", {{"gemm", "cuda", "sm_80", "default"}},
                   std::vector<std::string>{"cuda"}),
            plugin("cublas", {{"gemm", "cuda", "sm_80", "cublas"}}, std::vector<std::string>{}),
            plugin("old-kernels", {{"gemm", "cuda", "generic", "old"}}, std::nullopt),
            plugin("old-device",
                   {{"gemm", "fx", "generic", "default"}, {"gemm", "cpu", "generic", "x"}},
                   std::nullopt),
            plugin("cpu-only", {{"gemm", "cpu", "generic", "y"}}, std::nullopt),
        };
        QCOMPARE(provided_device_kinds(infos[0], infos), std::vector<std::string>{"cuda"});
        QVERIFY(provided_device_kinds(infos[1], infos).empty());
        QVERIFY(provided_device_kinds(infos[2], infos).empty()); // cuda is claimed by "cuda"
        QCOMPARE(provided_device_kinds(infos[3], infos), std::vector<std::string>{"fx"});
        QVERIFY(provided_device_kinds(infos[4], infos).empty());
        QCOMPARE(device_backends(infos), (std::vector<std::string>{"cuda", "old-device"}));
        QCOMPARE(device_backends(infos, {"cuda:1"}), std::vector<std::string>{"cuda"});
        QCOMPARE(device_backends(infos, {"cpu"}), std::vector<std::string>{});
        // Without the claim, the older manifest's cuda cells make it a device backend again.
        infos.erase(infos.begin());
        QCOMPARE(provided_device_kinds(infos[1], infos), std::vector<std::string>{"cuda"});
        // A provider that is not loadable is not loaded to list devices.
        infos[2].state = BackendState::Failed;
        QCOMPARE(device_backends(infos), std::vector<std::string>{"old-kernels"});
    }

    void failedLoadRollsBack() {
        Fixture f;
        auto bad = std::make_shared<FakeProvider>("bad", /*throws=*/true);
        auto good = std::make_shared<FakeProvider>("good");
        good->m_info.declared_kernels = {{{"gemm", "opencl", "generic", "other"}, 0}};
        f.registry->set_plugin_discovery([=] {
            return std::vector<std::shared_ptr<BackendProvider>>{bad, good};
        });
        try {
            f.registry->load("bad");
            QFAIL("a throwing hook must fail the load");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendLoadError::Cause::RegisterHookThrew);
            QVERIFY(QString(e.what()).contains("hook exploded"));
        }
        QVERIFY(!f.registry->is_loaded("bad"));
        QCOMPARE(bad->unloads.load(), 1);
        QVERIFY(!f.kernels.lookup({"gemm", "opencl", "generic", "extra"}));
        auto placeholder = f.kernels.lookup({"gemm", "opencl", "generic", "default"});
        QVERIFY(placeholder && !placeholder->is_loaded() && !placeholder->is_available());
        QCOMPARE(f.registry->info("bad").state, BackendState::Failed);
        // The failure is remembered, not retried on every lookup.
        QVERIFY_THROWS_EXCEPTION(BackendLoadError, f.registry->lookup("bad"));
        QCOMPARE(bad->loads.load(), 1);
        // Other plugins are unaffected.
        f.registry->load("good");
        QVERIFY(f.registry->is_loaded("good"));
    }

    // Every cause has a stable id that reads back to it, in JSON too.
    void causeIdsRoundTrip() {
        const auto all = all_backend_causes();
        QCOMPARE(all.size(), std::size_t(32));
        std::set<std::string> ids;
        for (const auto cause : all) {
            const std::string id(to_string(cause));
            QVERIFY(ids.insert(id).second);
            for (char c : id)
                QVERIFY2((c >= 'a' && c <= 'z') || c == '_', id.c_str()); // snake_case
            QCOMPARE(backend_cause_from_string(id), std::optional<BackendCause>(cause));
            const nlohmann::json j = cause;
            QCOMPARE(j.get<std::string>(), id);
            QCOMPARE(j.get<BackendCause>(), cause);
        }
        QCOMPARE(to_string(BackendCause::Untrusted), std::string_view("untrusted"));
        QVERIFY(!backend_cause_from_string("Untrusted"));
        // The cause table: one row per cause, in order, each with a summary and a fix (none
        // for a healthy backend); a load error carries the registry's own cause.
        QCOMPARE(cause_table().size(), all_backend_causes().size());
        for (const auto& row : cause_table()) {
            QCOMPARE(&cause_entry(row.cause), &row);
            QCOMPARE(to_string(row.cause), row.id);
            const bool healthy = row.cause == BackendCause::None;
            QCOMPARE(row.summary.empty(), healthy);
            QCOMPARE(row.fix.empty(), healthy);
        }
        const BackendLoadError error("x", BackendCause::HookCrashed, "signal 11");
        QCOMPARE(error.cause(), BackendCause::HookCrashed);
        QVERIFY(dynamic_cast<const Error*>(&error));
    }

    void concurrentLoadsLoadOnce() {
        Fixture f;
        auto p = std::make_shared<FakeProvider>("gpuish");
        f.registry->set_plugin_discovery(
            [=] { return std::vector<std::shared_ptr<BackendProvider>>{p}; });
        std::vector<std::thread> threads;
        for (int i = 0; i < 8; ++i)
            threads.emplace_back([&, i] {
                if (i % 2)
                    f.registry->lookup("gpuish");
                else
                    f.kernels.resolve_first({TupleKey{"gemm", "opencl", "generic", "default"}});
            });
        for (auto& t : threads)
            t.join();
        QCOMPARE(p->loads.load(), 1);
        QVERIFY(f.registry->is_loaded("gpuish"));
    }

    void registrationShadowsUnloadedPlugin() {
        Fixture f;
        auto p = std::make_shared<FakeProvider>("gpuish");
        f.registry->set_plugin_discovery(
            [=] { return std::vector<std::shared_ptr<BackendProvider>>{p}; });
        f.registry->ensure_initialized();
        f.registry->register_backend(spec("gpuish"));
        QCOMPARE(f.registry->info("gpuish").source, BackendSource::Registered);
        QVERIFY(!f.kernels.lookup({"gemm", "opencl", "generic", "default"}));
        f.registry->unregister_backend("gpuish");
        QCOMPARE(f.registry->info("gpuish").source,
                 BackendSource::Plugin); // the plugin gets its name back
    }

    void stressConcurrentLookupRegistrationAndLazyLoading() {
        Fixture f;
        auto p = std::make_shared<FakeProvider>("gpuish");
        f.registry->set_plugin_discovery(
            [=] { return std::vector<std::shared_ptr<BackendProvider>>{p}; });
        std::atomic<int> unexpected{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                try {
                    for (int i = 0; i < 200; ++i) {
                        const std::string mine =
                            "t" + std::to_string(t) + "_" + std::to_string(i % 5);
                        switch ((t + i) % 5) {
                        case 0:
                            f.registry->lookup("cpu");
                            break;
                        case 1:
                            try {
                                f.registry->register_backend(
                                    with_kernel(spec(mine), "gemm", "cpu", mine, "default"));
                            } catch (const DuplicateBackend&) {
                            }
                            break;
                        case 2:
                            f.registry->unregister_backend(mine);
                            break;
                        case 3:
                            f.registry->list();
                            break;
                        case 4:
                            f.registry->lookup("gpuish");
                            break;
                        }
                    }
                } catch (const std::exception& e) {
                    qWarning("unexpected: %s", e.what());
                    ++unexpected;
                }
            });
        }
        for (auto& t : threads)
            t.join();
        QCOMPARE(unexpected.load(), 0);
        QCOMPARE(p->loads.load(), 1);
        // Built-ins registered exactly once: one reference cell per op.
        int refs = 0;
        for (const auto& m : f.kernels.manifest())
            if (m.cell->key[3] == "reference")
                ++refs;
        QCOMPARE(refs, 4);
        // Every registered backend's cells are present, every unregistered one's gone.
        for (const auto& m : f.kernels.manifest()) {
            if (m.cell->backend == "cpu" || m.cell->backend == "gpuish")
                continue;
            QVERIFY2(f.registry->is_loaded(m.cell->backend), m.cell->backend.c_str());
        }
    }

    // A plugin library built against an SDK layout this core no longer reads (its entry says
    // contract 1: TupleKey was a vector of strings then) is refused before its hook runs,
    // with a typed cause and a message that says to rebuild it; the manifest's contract 1 is
    // fine on its own.
    void libraryBuiltAgainstAnOldLayoutIsRefused() {
        Fixture f;
        f.registry->set_plugin_discovery(
            PluginSearchPath::from_dirs({SWITCHYARD_FIXTURE_DIR "/plugins/entry_contract1"})
                .discovery());
        const std::string name = "fixture-entry-contract1";
        QCOMPARE(f.registry->info(name).state, BackendState::Discovered);
        for (int attempt = 0; attempt < 2; ++attempt) { // remembered, not retried
            try {
                f.registry->load(name);
                QFAIL("an old-layout library was loaded");
            } catch (const BackendLoadError& e) {
                QCOMPARE(e.cause(), BackendLoadError::Cause::EntryContractTooOld);
                const std::string what = e.what();
                QVERIFY2(what.find("built against backend-contract revision 1") !=
                             std::string::npos,
                         what.c_str());
                QVERIFY2(what.find("rebuild the plugin against this Switchyard") !=
                             std::string::npos,
                         what.c_str());
            }
        }
        const auto info = f.registry->info(name);
        QCOMPARE(info.state, BackendState::Failed);
        QCOMPARE(info.cause, BackendCause::EntryContractTooOld);
        QCOMPARE(to_string(info.cause), std::string_view("entry_contract_too_old"));
        QVERIFY(!f.registry->is_loaded(name));
        for (const auto& m : f.kernels.manifest()) // the hook never ran: only placeholders
            if (m.cell->backend == name)
                QVERIFY(!m.cell->is_loaded());
    }
};

QTEST_GUILESS_MAIN(TestBackendRegistry)
#include "tst_backendregistry.moc"
