// SPDX-License-Identifier: MIT
// The opencl backend plugin, loaded from the build's plugin folder like any plugin: its
// devices (PoCL runs OpenCL on the CPU, so this runs in CI), every kernel against the CPU
// reference at odd sizes, build errors with the build log, the reason shown when there
// is no platform, and `switchyard-cli profile --device opencl:0`.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "support/childprocess.h"

#include <switchyard/hardware/sdkjson.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/runtime/runtime.h>

#include <dlfcn.h>

#include <map>
#include <string>
#include <utility>

#ifdef SWITCHYARD_TEST_OPENCL
#include <CL/cl.h>
#endif

using namespace switchyard;

namespace {

const std::string kPluginDir = SWITCHYARD_BUILD_DIR "/lib/switchyard/plugins";
const std::string kLibrary = kPluginDir + "/libswitchyard-opencl.so";

using TryBuildFn = int (*)(void*, const char*, char*, std::size_t);

struct CliResult {
    int code = -1;
    QByteArray out, err;
};

CliResult run_cli(const QStringList& args, const QMap<QString, QString>& extra_env = {}) {
    // The CLI finds build/lib/switchyard/plugins beside its own folder.
    const auto r = test::run_cli(args, "", {.env = extra_env});
    return {r.code, r.out, r.err};
}

ProfileSettings quick() {
    ProfileSettings s;
    s.time_budget_s = 0.01;
    s.warmup_s = 0.001;
    s.min_samples = 2;
    s.all_variants = true;
    s.devices = {"opencl:0"};
    s.reference_budget_s = 0; // the OpenCL rows only
    return s;
}

} // namespace

class TestOpenCl : public QObject {
    Q_OBJECT

private:
    std::shared_ptr<Device> m_device;
    QString m_skip; // why the device tests cannot run here

private slots:
    void initTestCase() {
        // No CPU probes: nothing here measures them.
        find_cpu_device(default_devices())->set_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
        auto& registry = default_backends();
        registry.set_plugin_discovery(PluginSearchPath::from_dirs({kPluginDir}).discovery());
        registry.ensure_initialized();
        if (!QFile::exists(QString::fromStdString(kLibrary)))
            QSKIP("the opencl plugin is not built (SWITCHYARD_ENABLE_OPENCL off or no OpenCL)");
    }

    void discoveredNotLoaded() {
        auto& registry = default_backends();
        const auto info = registry.info("opencl");
        QVERIFY(info.state == BackendState::Discovered);
        QVERIFY(!registry.is_loaded("opencl"));
        QCOMPARE(int(info.declared_kernels.size()), 15);
        QCOMPARE(int(info.dependencies.size()), 1);
        QCOMPARE(info.dependencies[0].dependency.name, std::string("libOpenCL.so.1"));
        QVERIFY(info.dependencies[0].dependency.hint.find("pocl-opencl-icd") != std::string::npos);
        // Its cells are in the matrix before anything is loaded.
        const auto cell = kernels().lookup(kernel_key(kGemm, "opencl", "generic", "tiled"));
        QVERIFY(cell);
        QVERIFY(!cell->is_loaded());
    }

    void loadsAndRegistersWhatItDeclares() {
        auto& registry = default_backends();
        try {
            registry.load("opencl");
        } catch (const MissingDependency& e) {
            QSKIP(qPrintable(QString("no OpenCL ICD loader: ") + e.what()));
        }
        const auto info = registry.info("opencl");
        QVERIFY(info.state == BackendState::Loaded);
        QVERIFY2(info.diagnostics.empty(),
                 info.diagnostics.empty() ? "" : info.diagnostics[0].c_str());
        for (const auto& declared : info.declared_kernels) {
            const auto cell = kernels().lookup(TupleKey(declared.key));
            QVERIFY(cell);
            QVERIFY(cell->is_loaded());
            QVERIFY(cell->meta.contains("requires"));
        }
        m_device = default_devices().find("opencl:0");
        if (!m_device) {
            const auto cell = kernels().lookup(kernel_key(kGemm, "opencl", "generic", "default"));
            QVERIFY(!cell->is_available());
            m_skip = QString::fromStdString("no OpenCL device here: " +
                                            cell->meta.text_or("requires", "?"));
        }
    }

    void deviceDescribesItself() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto& info = m_device->info();
        QCOMPARE(info.id, std::string("opencl:0"));
        QCOMPARE(info.kind, std::string("opencl"));
        QCOMPARE(info.arch, std::string("generic"));
        QVERIFY(!info.name.empty());
        QVERIFY(info.has_device_timer);
        for (const char* key :
             {"platform", "vendor", "version", "driver_version", "compute_units",
              "global_memory_bytes", "local_memory_bytes", "max_work_group_size", "max_clock_mhz"})
            QVERIFY2(info.properties.contains(key), key);
        QVERIFY(info.properties.integer_or("compute_units", 0) > 0);
        // Every cell is available when there is a device.
        for (const auto& m : kernels().manifest())
            if (m.cell->key[1] == "opencl")
                QVERIFY(m.available);
    }

    void probesMeasurePeaks() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        m_device->prepare();
        const auto& info = m_device->info();
        QVERIFY2(info.peak_bandwidth_gbs > 0, info.peak_bandwidth_source.c_str());
        QVERIFY(info.peak_bandwidth_source.find("OpenCL copy probe") != std::string::npos);
        QVERIFY(info.peak_bandwidth_source.find("read+write") != std::string::npos);
        QVERIFY2(info.peak_gflops > 0, info.peak_gflops_source.c_str());
        QVERIFY(info.peak_gflops_source.find("OpenCL FMA probe") != std::string::npos);
        // The memory probe's working set is beyond the device's last cache, wherever the
        // device allows buffers of 8x that cache: 16x a cache up to 128 MiB, at least 4x a
        // larger one (a VM's report of the host's whole L3).
        const auto prop = [&](const char* key) { return info.properties.number_or(key, -1.0); };
        const double cache = prop("global_memory_cache_bytes");
        const Ceiling* copy = nullptr;
        for (const auto& c : info.ceilings)
            if (c.id == "device.copy")
                copy = &c;
        QVERIFY(copy);
        QCOMPARE(copy->capacity_bytes, 0.0);
        if (std::min(prop("max_alloc_bytes"), prop("global_memory_bytes") / 4) >= 8 * cache)
            QVERIFY2(
                copy->working_set_bytes >= (cache <= double(128 << 20) ? 16 : 4) * cache,
                (std::to_string(copy->working_set_bytes) + " vs " + std::to_string(cache)).c_str());
    }

    // The empirical per-level ceilings: the sweep's points ascend, its plateaus are labelled
    // in cache order (smallest first) with memory last, and each cache plateau is a ceiling
    // whose working set fits the cache it is labelled with (within 2x).
    void sweepFindsPlateaus() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        m_device->prepare();
        const auto& info = m_device->info();
        QVERIFY(info.properties.contains("sweep"));
        const nlohmann::json sweep = *info.properties.find("sweep");
        QVERIFY2(!sweep.contains("error"), sweep.dump().c_str());
        const auto& points = sweep["points"];
        QVERIFY(points.size() >= 4);
        for (std::size_t i = 1; i < points.size(); ++i) {
            QVERIFY(points[i]["working_set_bytes"].get<double>() >
                    points[i - 1]["working_set_bytes"].get<double>());
            QVERIFY(points[i]["gbs"].get<double>() > 0);
        }
        const auto& plateaus = sweep["plateaus"];
        QVERIFY(!plateaus.empty());
        QCOMPARE(plateaus.back()["level"].get<std::string>(), std::string("device"));
        double last_capacity = 0, last_end = 0;
        for (std::size_t i = 0; i + 1 < plateaus.size(); ++i) {
            const double cap = plateaus[i]["capacity_bytes"].get<double>();
            QVERIFY(cap > last_capacity);
            QVERIFY(plateaus[i]["first_bytes"].get<double>() > last_end);
            QVERIFY(plateaus[i]["last_bytes"].get<double>() <= 2 * cap);
            // The label is one of the caches the sweep was matched against.
            bool known = false;
            for (const auto& c : sweep["caches"])
                known = known || (c["level"] == plateaus[i]["level"] &&
                                  c["capacity_bytes"].get<double>() == cap);
            QVERIFY2(known, plateaus[i].dump().c_str());
            last_capacity = cap;
            last_end = plateaus[i]["last_bytes"].get<double>();
        }
        for (const auto& c : info.ceilings) {
            if (c.id == "device.copy" || c.kind != "bandwidth")
                continue;
            QVERIFY2(c.capacity_bytes > 0 && c.value > 0, c.id.c_str());
            QVERIFY2(c.working_set_bytes <= 2 * c.capacity_bytes, c.id.c_str());
            QVERIFY(c.method.find("working-set sweep") != std::string::npos);
        }
    }

    void buffersRoundTrip() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        QVERIFY(m_device->stream());
        std::vector<float> in(1023), out(1023, -1.0f);
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = float(i) * 0.5f;
        void* buffer = m_device->allocate(in.size() * sizeof(float));
        QVERIFY(buffer);
        m_device->upload(buffer, in.data(), in.size() * sizeof(float));
        m_device->download(out.data(), buffer, out.size() * sizeof(float));
        m_device->release(buffer);
        QCOMPARE(out, in);
    }

    void parity_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QStringList>("sizes");
        QTest::addColumn<QStringList>("variants");
        // 1, 7, 1023 and sizes that are no multiple of any work-group size, tile or block.
        QTest::newRow("flow_match_step")
            << "flow_match_step" << QStringList{"1", "7", "1023", "100003"}
            << QStringList{"default", "element", "vec4"};
        QTest::newRow("flow_sde_step") << "flow_sde_step" << QStringList{"1", "7", "1023", "3x1029"}
                                       << QStringList{"default", "group", "row8", "vec4"};
        QTest::newRow("rms_norm") << "rms_norm" << QStringList{"1", "7", "1023", "5x1001"}
                                  << QStringList{"default", "group", "row8", "vec4"};
        QTest::newRow("gemm") << "gemm" << QStringList{"1x1x1",    "7x7x7",    "1023x7x9",
                                                       "9x1023x7", "7x9x1023", "67x45x129"}
                              << QStringList{"blocked", "default", "element", "tiled"};
    }

    void parity() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        QFETCH(QString, op);
        QFETCH(QStringList, sizes);
        QFETCH(QStringList, variants);
        auto settings = quick();
        settings.ops = {op.toStdString()};
        for (const auto& s : sizes)
            settings.sizes["*"].push_back(s.toStdString());
        Profiler profiler(settings, default_backends(), default_devices());
        const auto plan = profiler.plan();
        QStringList planned;
        for (const auto& spec : plan) {
            QCOMPARE(spec.device, std::string("opencl:0"));
            if (!planned.contains(QString::fromStdString(spec.variant)))
                planned << QString::fromStdString(spec.variant);
            const auto row = profiler.run_row(spec);
            const auto what = spec.op + " " + spec.size + " " + spec.variant + ": " +
                              std::string(to_string(row.status)) + " " + row.reason;
            QVERIFY2(row.status == RowStatus::Ok, what.c_str());
            QVERIFY2(row.parity.checked && row.parity.pass, what.c_str());
            QCOMPARE(row.timer, Timer::Device);
            QVERIFY2(row.stats.median > 0, what.c_str());
            // A clock on every row, or the reason it has none: a CPU device (PoCL) runs on
            // the host's cores, so the host's clock (the chain around the row) applies; a GPU
            // device has no clock query in core OpenCL, and the row says so.
            const bool onHost =
                m_device->info().properties.text_or("device_type", std::string()) == "CPU";
            const auto clock = row.to_json().at("clock");
            if (onHost) {
                QVERIFY2(row.clock.measured() && row.clock.median_ghz > 0, what.c_str());
                QVERIFY2(row.clock.method.find("host CPU") != std::string::npos,
                         row.clock.method.c_str());
                QVERIFY(!clock.contains("none_reason"));
            } else {
                QVERIFY(!row.clock.measured());
                QVERIFY2(clock.at("none_reason").get<std::string>().find("core OpenCL") !=
                             std::string::npos,
                         clock.dump().c_str());
            }
            QCOMPARE(ProfileRow::from_json(row.to_json()).clock.none_reason, row.clock.none_reason);
        }
        planned.sort();
        QCOMPARE(planned, variants);
        QCOMPARE(int(plan.size()), int(variants.size() * sizes.size()));
        // `default` says which form's code it runs on this device, by the device's type
        // (the dispatch findings then take a gap between the two for noise); no other
        // cell says anything.
        const bool cpu = m_device->info().properties.text_or("device_type", std::string()) == "CPU";
        const std::map<QString, std::pair<std::string, std::string>> forms = {
            {"flow_match_step", {"generic/vec4", "generic/element"}},
            {"flow_sde_step", {"generic/row8", "generic/group"}},
            {"rms_norm", {"generic/row8", "generic/group"}},
            {"gemm", {"generic/blocked", "generic/element"}}};
        for (const auto& spec : plan) {
            const auto want = spec.variant != "default" ? std::string()
                              : cpu                     ? forms.at(op).first
                                                        : forms.at(op).second;
            QCOMPARE(spec.runs_as, want);
        }
    }

    // Guard zones around OpenCL buffers: outputs are sub-buffers of a buffer with
    // canaries on both sides, read back after the launches. A kernel that writes 2 floats
    // past `out` (here: the real kernel, then a write into the parent buffer right after
    // the sub-buffer's end) is a parity FAIL that says so; the real kernel alone passes.
    void guardZonesAroundOpenClBuffers() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
#ifndef SWITCHYARD_TEST_OPENCL
        QSKIP("built without the OpenCL headers for the test");
#else
        const auto real =
            kernels().lookup(kernel_key(kFlowMatchStep, "opencl", "generic", "default"));
        QVERIFY(real);
        const KernelFn realFn = real->fn;
        KernelCell cell;
        cell.key = kernel_key(kFlowMatchStep, "opencl", "generic", "overrun");
        cell.fn = [realFn](const KernelArgs& a) {
            realFn(a);
            auto* sub = static_cast<cl_mem>(static_cast<void*>(a.out[0]));
            cl_mem parent = nullptr;
            std::size_t offset = 0, size = 0;
            clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr);
            clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof offset, &offset, nullptr);
            clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof size, &size, nullptr);
            if (!parent)
                throw std::runtime_error("`out` is not a sub-buffer: it has no guard zones");
            const float junk[2] = {1.0f, 2.0f};
            clEnqueueWriteBuffer(static_cast<cl_command_queue>(a.stream), parent, CL_TRUE,
                                 offset + size, sizeof junk, junk, 0, nullptr, nullptr);
        };
        cell.source = CellSource::Registered;
        cell.backend = "test";
        cell.meta = {{"workspace_bytes", 0}};
        kernels().put(std::move(cell));

        auto settings = quick();
        settings.ops = {std::string(kFlowMatchStep)};
        settings.sizes["*"] = {"1023"};
        Profiler profiler(settings, default_backends(), default_devices());
        bool seenOverrun = false, seenDefault = false;
        for (const auto& spec : profiler.plan()) {
            if (spec.variant != "overrun" && spec.variant != "default")
                continue;
            const auto row = profiler.run_row(spec);
            if (spec.variant == "default") {
                seenDefault = true;
                QVERIFY2(row.parity.pass, row.parity.first_failure.c_str());
                continue;
            }
            seenOverrun = true;
            QVERIFY(!row.parity.pass);
            QCOMPARE(row.parity.first_failure, std::string("wrote 2 elements past `out`"));
        }
        QVERIFY(seenOverrun && seenDefault);
        kernels().erase(kernel_key(kFlowMatchStep, "opencl", "generic", "overrun"));
#endif
    }

    void deviceTimerTimesLaunches() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto cell =
            kernels().lookup(kernel_key(kFlowMatchStep, "opencl", "generic", "default"));
        const std::int64_t n = 1 << 16;
        std::vector<float> host(std::size_t(n), 1.0f);
        KernelArgs args;
        args.dims = {n, 0, 0};
        args.scalars = {0.5, 0, 0, 0};
        args.stream = m_device->stream();
        void* x = m_device->allocate(host.size() * sizeof(float));
        void* out = m_device->allocate(host.size() * sizeof(float));
        m_device->upload(x, host.data(), host.size() * sizeof(float));
        args.in = {static_cast<const float*>(x), static_cast<const float*>(x), nullptr};
        args.out = {static_cast<float*>(out), nullptr};
        // The best of five of each: one timing on a loaded machine can be anything.
        double one = 1e300, ten = 1e300;
        for (int i = 0; i < 5; ++i) {
            one = std::min(one, m_device->time_launches([&] { cell->fn(args); }, 1));
            ten = std::min(ten, m_device->time_launches([&] { cell->fn(args); }, 10));
        }
        m_device->download(host.data(), out, host.size() * sizeof(float));
        m_device->release(x);
        m_device->release(out);
        QVERIFY(one > 0);
        QVERIFY(ten > one); // ten launches' device times summed
        QCOMPARE(host[12345], 1.5f);
    }

    // `default` (what the chain resolves) runs the form of the device's type: bit for bit the
    // output of row8 on a CPU device (PoCL), of group on a GPU; the other form's reduction
    // order gives other bits, so the comparison tells them apart.
    void defaultRunsTheFormOfTheDeviceType() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const bool cpu =
            m_device->info().properties.text_or("device_type", std::string()).find("CPU") !=
            std::string::npos;
        constexpr std::int64_t rows = 64, d = 1001;
        std::vector<float> x(rows * d), w(d);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = float((i * 2654435761u) % 1000) / 997.0f - 0.5f;
        for (std::size_t i = 0; i < w.size(); ++i)
            w[i] = 0.5f + float(i % 13) / 13.0f;
        auto run = [&](const char* variant) {
            const auto cell = kernels().lookup(kernel_key(kRmsNorm, "opencl", "generic", variant));
            if (!cell)
                throw std::runtime_error(std::string("no rms_norm cell ") + variant);
            void* dx = m_device->allocate(x.size() * sizeof(float));
            void* dw = m_device->allocate(w.size() * sizeof(float));
            void* dy = m_device->allocate(x.size() * sizeof(float));
            m_device->upload(dx, x.data(), x.size() * sizeof(float));
            m_device->upload(dw, w.data(), w.size() * sizeof(float));
            KernelArgs args;
            args.dims = {rows, d, 0};
            args.in = {static_cast<const float*>(dx), static_cast<const float*>(dw), nullptr};
            args.out = {static_cast<float*>(dy), nullptr};
            args.scalars = {1e-6, 0, 0, 0};
            args.stream = m_device->stream();
            cell->fn(args);
            m_device->synchronize();
            std::vector<float> y(x.size());
            m_device->download(y.data(), dy, y.size() * sizeof(float));
            for (void* p : {dx, dw, dy})
                m_device->release(p);
            return y;
        };
        const auto chosen = run("default");
        const auto same = run(cpu ? "row8" : "group");
        const auto other = run(cpu ? "group" : "row8");
        QVERIFY(chosen == same);
        QVERIFY2(chosen != other,
                 "row8 and group gave the same bits: the check cannot tell them apart");
    }

    void kernelWithoutQueueSaysSo() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto cell = kernels().lookup(kernel_key(kRmsNorm, "opencl", "generic", "vec4"));
        KernelArgs args;
        args.dims = {1, 7, 0};
        try {
            cell->fn(args);
            QFAIL("a kernel without a queue ran");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("cl_command_queue") != std::string::npos, e.what());
        }
    }

    void badSourceShowsBuildLog() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        void* handle = dlopen(kLibrary.c_str(), RTLD_NOW | RTLD_NOLOAD);
        QVERIFY2(handle, "the registry loaded the plugin from the build's plugin folder");
        auto try_build = reinterpret_cast<TryBuildFn>(dlsym(handle, "switchyard_opencl_try_build"));
        QVERIFY(try_build);
        char message[8192] = {};
        QCOMPARE(try_build(m_device->stream(),
                           "__kernel void fine(__global float* p) { p[0] = 1.0f; }", message,
                           sizeof message),
                 0);
        QCOMPARE(try_build(m_device->stream(),
                           "__kernel void broken(__global float* p) { p[0] = no_such_symbol_xyz; }",
                           message, sizeof message),
                 1);
        const std::string text = message;
        QVERIFY2(text.find("clBuildProgram: -11 CL_BUILD_PROGRAM_FAILURE") != std::string::npos,
                 message);
        QVERIFY2(text.find("build log:") != std::string::npos, message);
        QVERIFY2(text.find("no_such_symbol_xyz") != std::string::npos, message); // from the log
        dlclose(handle);
    }

    void noPlatformIsExplained() {
        // ocl-icd reads the ICDs from OCL_ICD_VENDORS: an empty folder means no platform.
        QTemporaryDir empty;
        const auto r = run_cli({"resolve", "flow_match_step", "--target", "opencl", "--json"},
                               {{"OCL_ICD_VENDORS", empty.path()}});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto rungs = QJsonDocument::fromJson(r.out).object().value("rungs").toArray();
        QVERIFY(!rungs.isEmpty());
        const auto first = rungs.at(0).toObject();
        QCOMPARE(first.value("device").toString(), QString("opencl"));
        QVERIFY(first.value("declared").toBool());
        QVERIFY(!first.value("available").toBool());
        const auto why = first.value("why_not").toString();
        QVERIFY2(why.contains("clGetPlatformIDs: -1001 CL_PLATFORM_NOT_FOUND_KHR"),
                 qPrintable(why));
        QVERIFY2(why.contains("no ICD in " + empty.path()), qPrintable(why));
    }

    void cliProfilesTheDevice() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto r = run_cli({"profile", "--device", "opencl:0", "--op", "flow_match_step",
                                "--sizes", "1023", "--budget", "0.05", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto doc = QJsonDocument::fromJson(r.out).object();
        const auto rows = doc.value("rows").toArray();
        QCOMPARE(rows.size(), 2); // the CPU reference first, for the speedup
        QCOMPARE(rows.at(0).toObject().value("variant").toString(), QString("reference"));
        const auto row = rows.at(1).toObject();
        QVERIFY(row.value("speedup_vs_reference").toDouble() > 0);
        // Every row has a level; a CPU device (PoCL) is judged against the host's ceilings,
        // and no row reads above 110 % of its ceiling.
        QVERIFY(!row.value("level").toString().isEmpty());
        if (row.value("ceiling_value").toDouble() > 0)
            QVERIFY2(row.value("ceiling_fraction").toDouble() <= 1.10,
                     qPrintable(row.value("ceiling_id").toString()));
        QCOMPARE(row.value("device").toString(), QString("opencl:0"));
        QCOMPARE(row.value("backend").toString(), QString("opencl"));
        QCOMPARE(row.value("status").toString(), QString("ok"));
        QCOMPARE(row.value("timer").toString(), QString("device"));
        QCOMPARE(row.value("parity").toObject().value("verdict").toString(), QString("PASS"));
        bool listed = false;
        for (const auto& d : doc.value("context").toObject().value("devices").toArray())
            listed |= d.toObject().value("id").toString() == "opencl:0";
        QVERIFY(listed);
    }

    void resetKeepsTheDeviceUsable() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        default_backends().reset_backends(); // releases the built programs
        auto settings = quick();
        settings.ops = {"rms_norm"};
        settings.sizes["*"] = {"7"};
        Profiler profiler(settings, default_backends(), default_devices());
        for (const auto& spec : profiler.plan()) {
            const auto row = profiler.run_row(spec);
            QVERIFY2(row.status == RowStatus::Ok, row.reason.c_str());
        }
    }

    void unregisterWithdrawsTheDevices() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        m_device.reset();
        QVERIFY(default_backends().unregister_backend("opencl"));
        QVERIFY(!default_devices().find("opencl:0"));
        QVERIFY(default_devices().find("cpu"));
    }
};

QTEST_GUILESS_MAIN(TestOpenCl)
#include "tst_opencl.moc"
