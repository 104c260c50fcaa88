// SPDX-License-Identifier: MIT
#include "core/fakedevice.h"

#include <switchyard/doctor/doctor.h>
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/version.h>

#include <QTemporaryDir>
#include <QtTest>

#include "support/childprocess.h"

#include <dlfcn.h>
#include <sys/stat.h>

using namespace switchyard;

namespace {

const QString kPlugins = QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins");

bool is_mapped(const QString& path) {
    void* handle = ::dlopen(path.toLocal8Bit().constData(), RTLD_NOW | RTLD_NOLOAD);
    if (handle)
        ::dlclose(handle);
    return handle != nullptr;
}

struct Fixture {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};
    PluginSearchPath path;

    explicit Fixture(const QStringList& cases) {
        std::vector<std::string> dirs;
        for (const auto& c : cases)
            dirs.push_back((kPlugins + "/" + c).toStdString());
        path = PluginSearchPath::from_dirs(dirs);
        registry.set_plugin_discovery(path.discovery());
    }
};

const DoctorProblem* find_problem(const DoctorReport& r, const std::string& subject,
                                  const std::string& part) {
    for (const auto& p : r.problems)
        if (p.subject == subject && p.problem.find(part) != std::string::npos)
            return &p;
    return nullptr;
}

// A plugin folder holding one plugin, "gpu", whose library is the fatbin fixture (sm_80 and
// sm_90 cubins, compute_90 PTX of PTX ISA 9.0), and the doctor's report of it beside one
// device of `kind` and `arch` (with `properties`).
class GpuPluginFolder {
public:
    GpuPluginFolder() {
        m_ok = m_dir.isValid() &&
               QFile::copy(QStringLiteral(SWITCHYARD_FIXTURE_DIR
                                          "/gpucode/libswitchyard-fixture-fatbin.so"),
                           m_dir.filePath("libgpu.so"));
        QFile manifest(m_dir.filePath("gpu.plugin.json"));
        m_ok = m_ok && manifest.open(QIODevice::WriteOnly) &&
               manifest.write(R"({"schema": 1, "name": "gpu", "version": "1.0.0",
                                  "library": "libgpu.so", "provides_devices": []})") > 0;
    }
    bool valid() const { return m_ok; }
    DoctorReport doctor(const std::string& kind, const std::string& arch,
                        Value properties = Value::object()) const {
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        const auto path = PluginSearchPath::from_dirs({m_dir.path().toStdString()});
        registry.set_plugin_discovery(path.discovery());
        DeviceRegistry devices;
        devices.add_provider(
            std::make_shared<test::ClocklessProvider>(kind, "GPU", arch, std::move(properties)));
        return DoctorReport::collect(registry, devices, path);
    }

private:
    QTemporaryDir m_dir;
    bool m_ok = false;
};

test::ProcessResult run_cli(const QStringList& args, const QString& plugin_path) {
    return test::run_cli(args, plugin_path, {.timeout_ms = 60000});
}

} // namespace

class TestDoctor : public QObject {
    Q_OBJECT
private slots:
    void reportsEveryProblemWithAFix() {
        Fixture f({"good", "missing_dep", "unavailable", "invalid_json", "dup_a", "dup_b",
                   "library_missing"});
        const auto report = DoctorReport::collect(f.registry, default_devices(), f.path);
        QCOMPARE(report.build.version, std::string(core_version()));
        QVERIFY(!report.system.host.os.empty());
        QVERIFY(!report.devices.empty());
        QCOMPARE(report.search_path.size(), std::size_t(7));
        QCOMPARE(report.search_path[0].manifests.size(), std::size_t(1));
        QVERIFY(report.has_errors());

        const auto* dep =
            find_problem(report, "fixture-missing-dep", "libswitchyard-nonexistent-dep.so.1");
        QVERIFY(dep);
        QCOMPARE(dep->severity, DoctorProblem::Severity::Error);
        QVERIFY(dep->fix.find("LD_LIBRARY_PATH") != std::string::npos);
        const auto* invalid = find_problem(report, "broken", "not valid JSON");
        QVERIFY(invalid);
        QCOMPARE(invalid->severity, DoctorProblem::Severity::Error);
        const auto* missing_lib = find_problem(report, "fixture-library-missing", "does not exist");
        QVERIFY(missing_lib);
        const auto* optional =
            find_problem(report, "fixture-unavailable", "libswitchyard-no-such-library.so.7");
        QVERIFY(optional);
        QCOMPARE(optional->severity, DoctorProblem::Severity::Warning);
        QCOMPARE(optional->fix,
                 std::string("Install switchyard-fixture-runtime (it does not exist)"));
        const auto* shadowed = find_problem(report, "fixture-dup", "owned by");
        QVERIFY(shadowed);
        QCOMPARE(shadowed->severity, DoctorProblem::Severity::Info);
        QVERIFY(!find_problem(report, "fixture-good", ""));
        // Errors come first.
        QCOMPARE(report.problems.front().severity, DoctorProblem::Severity::Error);

        // Collecting opened no plugin library.
        QVERIFY(!is_mapped(kPlugins + "/good/libswitchyard-fixture-good.so"));
        QVERIFY(!f.registry.is_loaded("fixture-good"));
    }

    void rendersJsonAndMarkdown() {
        Fixture f({"good", "missing_dep"});
        const auto report = DoctorReport::collect(f.registry, default_devices(), f.path);
        const auto j = report.to_json();
        for (const char* key : {"format", "format_version", "switchyard", "system", "devices",
                                "runtimes", "plugin_path", "backends", "problems", "ok"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["format"], "switchyard.doctor");
        QCOMPARE(j["format_version"], 1);
        QVERIFY(j["switchyard"].contains("git_hash"));
        QCOMPARE(j["ok"].get<bool>(), false);
        bool saw_unresolved = false;
        for (const auto& b : j["backends"])
            if (b["name"] == "fixture-missing-dep")
                saw_unresolved = b["library_dependencies"]["unresolved"] ==
                                 nlohmann::json::array({"libswitchyard-nonexistent-dep.so.1"});
        QVERIFY(saw_unresolved);
        const auto md = QString::fromStdString(report.to_markdown());
        for (const char* section :
             {"# Switchyard doctor report", "## Switchyard", "## System", "## Devices",
              "## Drivers and runtimes", "| cpu | ", "## Plugin search path", "## Backends",
              "## Problems (1)", "libswitchyard-nonexistent-dep.so.1 => not found",
              "| fixture-good | plugin | discovered"})
            QVERIFY2(md.contains(section), section);
        const auto text = QString::fromStdString(report.to_text());
        QVERIFY(text.contains("[error] fixture-missing-dep"));
        QVERIFY(text.contains("\nDevices:\n  cpu: "));
    }

    // A device runtime that cannot list its devices is an error that quotes it (before:
    // the H200 host's doctor listed no CUDA device and said "Problems: none").
    // A plugin library whose CUDA GPU code (sm_80 and sm_90 cubins, compute_90 PTX: the
    // fatbin fixture) runs on no CUDA device here (an sm_75 one) is a problem with its own
    // cause and fix, found from the file alone; on an sm_90 device it is none.
    void gpuCodeThatRunsNowhereIsAProblem() {
        const GpuPluginFolder dir;
        QVERIFY(dir.valid());
        for (const std::string arch : {"sm_75", "sm_90"}) {
            const auto report = dir.doctor("cuda", arch);
            const auto* p = find_problem(report, "gpu", "cuda:0 is sm_75");
            if (arch == "sm_75") {
                QVERIFY2(p, report.to_text().c_str());
                QCOMPARE(p->cause, BackendCause::GpuCodeMissing);
                QVERIFY2(p->problem.find("its library carries sm_80 and sm_90 cubins") == 0,
                         p->problem.c_str());
                QVERIFY2(p->fix.find("compiled for this GPU") != std::string::npos, p->fix.c_str());
            } else {
                for (const auto& q : report.problems)
                    QVERIFY2(q.cause != BackendCause::GpuCodeMissing, q.problem.c_str());
            }
        }
    }

    // The same library on an sm_100 device whose driver supports CUDA 12.8: only its
    // compute_90 PTX (PTX ISA 9.0, CUDA 13.0) reaches the device, and that driver cannot
    // compile it. A driver of 13.0 can.
    void driverTooOldForThePtxIsAProblem() {
        const GpuPluginFolder dir;
        QVERIFY(dir.valid());
        for (const std::string driver : {"12.8", "13.0"}) {
            const auto report = dir.doctor("cuda", "sm_100", Value{{"driver_version", driver}});
            const auto* p = find_problem(report, "gpu", "the driver supports CUDA");
            if (driver == "12.8") {
                QVERIFY2(p, report.to_text().c_str());
                QCOMPARE(p->cause, BackendCause::DriverTooOld);
                QCOMPARE(p->problem,
                         std::string("it needs CUDA 13.0 on cuda:0 (its compute_90 PTX is PTX ISA "
                                     "9.0, which the driver must compile there); the driver "
                                     "supports CUDA 12.8"));
                QVERIFY2(p->fix.find("Upgrade the NVIDIA driver") == 0, p->fix.c_str());
            } else {
                QVERIFY2(!p, p ? p->problem.c_str() : "");
            }
            // The PTX runs there: no gpu_code_missing either way.
            for (const auto& q : report.problems)
                QVERIFY2(q.cause != BackendCause::GpuCodeMissing, q.problem.c_str());
        }
    }

    // A CUDA runtime newer than the driver refuses to list devices
    // (cudaErrorInsufficientDriver, with both versions as the CUDA backend adds them): the
    // problem is driver_too_old with its fix, not "check the driver".
    void driverTooOldForTheRuntimeIsAProblem() {
        Fixture f({"good"});
        DeviceRegistry devices;
        devices.add_provider(std::make_shared<test::BrokenProvider>(
            "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime "
            "version (this runtime is CUDA 13.0; the driver supports CUDA 12.4)",
            "cuda"));
        const auto report = DoctorReport::collect(f.registry, devices, f.path);
        const auto* p = find_problem(report, "cuda devices", "insufficient");
        QVERIFY2(p, report.to_text().c_str());
        QCOMPARE(p->cause, BackendCause::DriverTooOld);
        QVERIFY2(p->problem.find("it needs CUDA 13.0; the driver supports CUDA 12.4 (") == 0,
                 p->problem.c_str());
        QVERIFY2(p->fix.find("Upgrade the NVIDIA driver") == 0, p->fix.c_str());
    }

    void deviceListingFailureIsAProblem() {
        Fixture f({"good"});
        DeviceRegistry devices;
        devices.add_provider(std::make_shared<test::FakeProvider>());
        devices.add_provider(std::make_shared<test::BrokenProvider>(
            "cudaErrorOperatingSystem: OS call failed or operation not supported on this OS"));
        const auto report = DoctorReport::collect(f.registry, devices, f.path);
        QCOMPARE(report.devices.size(), std::size_t(2)); // fake:0 and fake:1 still listed
        QVERIFY(report.has_errors());
        const auto text = QString::fromStdString(report.to_text());
        QVERIFY2(text.contains("[error] broken devices: the broken backend is loaded but listing "
                               "its devices failed: cudaErrorOperatingSystem: OS call failed"),
                 qPrintable(text));
        const auto errors = devices.enumeration_errors();
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].first, std::string("broken"));
    }

    // The system section is cpu_features' and host_info()'s view; the devices are
    // DeviceRegistry's; peaks appear only once something measured them.
    void describesHardwareWithoutProbing() {
        Fixture f({"good"});
        auto& devices = default_devices();
        devices.add_provider(std::make_shared<test::FakeProvider>());
        auto report = DoctorReport::collect(f.registry, default_devices(), f.path);
        QVERIFY(devices.remove_provider("fake"));

        const auto& cpu = cpu_info();
        QCOMPARE(report.system.cpu.brand, cpu.brand);
        QCOMPARE(report.system.cpu.logical_cpus, cpu.logical_cpus);
        QCOMPARE(report.system.cpu.physical_cores, cpu.physical_cores);
        QCOMPARE(report.system.cpu.best_level, cpu.best_level);
        QCOMPARE(report.system.cpu.caches.size(), cpu.caches.size());
        QVERIFY(report.system.host.memory_bytes > 0);

        QCOMPARE(report.devices.size(), std::size_t(3));
        QCOMPARE(report.devices[0].id, std::string("cpu"));
        QCOMPARE(report.devices[0].arch, cpu.best_level);
        QCOMPARE(report.devices[1].id, std::string("fake:0"));
        QCOMPARE(report.devices[1].arch, std::string("fk_1"));

        // Collecting ran no probe: the CPU's peaks are unknown, and left out.
        auto j = report.to_json();
        QVERIFY(!j["devices"][0].contains("peak_bandwidth_gbs"));
        QVERIFY(!j["devices"][0].contains("peak_gflops"));
        QCOMPARE(j["devices"][1]["peak_bandwidth_gbs"].get<double>(), 1000.0);
        QVERIFY(QString::fromStdString(report.to_markdown()).contains("| not measured |"));

        // Once measured (here: set, as a profile worker does), they are reported.
        find_cpu_device(devices)->set_peaks({12.5, 1 << 20, 3.0});
        devices.find("cpu")->prepare();
        report = DoctorReport::collect(f.registry, default_devices(), f.path);
        j = report.to_json();
        QCOMPARE(j["devices"][0]["peak_bandwidth_gbs"].get<double>(), 12.5);
        QCOMPARE(j["devices"][0]["peak_gflops"].get<double>(), 3.0);
        QVERIFY(QString::fromStdString(report.to_text()).contains("12.5 GB/s"));
    }

    // A plugin folder other users can write to reads "untrusted", with the fix from the table.
    void reportsUntrusted() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath("open");
        QDir().mkpath(dir);
        for (const auto& entry : QDir(kPlugins + "/good").entryInfoList(QDir::Files))
            QVERIFY(QFile::copy(entry.filePath(), dir + "/" + entry.fileName()));
        QCOMPARE(::chmod(dir.toLocal8Bit().constData(), 0777), 0);
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        const auto path = PluginSearchPath::from_dirs({dir.toStdString()});
        registry.set_plugin_discovery(path.discovery());
        const auto report = DoctorReport::collect(registry, default_devices(), path);
        const DoctorProblem* problem = nullptr;
        for (const auto& p : report.problems)
            if (p.subject == "fixture-good")
                problem = &p;
        QVERIFY(problem);
        QCOMPARE(problem->cause, BackendCause::Untrusted);
        QVERIFY(problem->problem.find("chmod o-w") != std::string::npos);
        const auto j = report.to_json();
        bool saw = false;
        for (const auto& b : j["backends"])
            if (b["name"] == "fixture-good")
                saw = b["cause"] == "untrusted" && b["state"] == "invalid";
        QVERIFY(saw);
        QVERIFY(QString::fromStdString(report.to_text()).contains("invalid [untrusted]"));
    }

    void aHealthyMachineHasNoErrors() {
        Fixture f({"good"});
        const auto report = DoctorReport::collect(f.registry, default_devices(), f.path);
        QVERIFY(!report.has_errors());
        QVERIFY(report.to_json()["ok"].get<bool>());
        QCOMPARE(QString::fromStdString(report.to_markdown()).count("None found."), 1);
    }

    void cliDoctor() {
        // The CLI finds the build tree's plugin folder next to itself, with no configuration.
        auto r = run_cli({"doctor", "--json"}, kPlugins + "/good");
        const auto j = nlohmann::json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!j.is_discarded(), r.err.constData());
        QCOMPARE(r.code, j["ok"].get<bool>() ? 0 : 1);
        QCOMPARE(j["devices"][0]["id"].get<std::string>(), std::string("cpu"));
        QVERIFY(!j["devices"][0].contains("peak_bandwidth_gbs")); // doctor runs no probe
        bool install = false;
        for (const auto& d : j["plugin_path"])
            if (d["origin"] == "install")
                install = d["path"] == SWITCHYARD_BUILD_DIR "/lib/switchyard/plugins";
        QVERIFY(install);
        QCOMPARE(j["plugin_path"][0]["path"].get<std::string>(),
                 (kPlugins + "/good").toStdString());

        r = run_cli({"doctor", "--markdown"}, kPlugins + "/missing_dep");
        QCOMPARE(r.code, 1);
        QVERIFY(r.out.startsWith("# Switchyard doctor report"));
        QVERIFY(r.out.contains("libswitchyard-nonexistent-dep.so.1"));

        r = run_cli({"doctor", "--json", "--markdown"}, {});
        QCOMPARE(r.code, 2);
    }
};

QTEST_GUILESS_MAIN(TestDoctor)
#include "tst_doctor.moc"
