// SPDX-License-Identifier: MIT
// The vulkan backend plugin, loaded from the build's plugin folder like any plugin: its
// devices (Mesa's lavapipe runs Vulkan on the CPU, so this runs in CI), every shader against
// the CPU reference at odd sizes, device timestamps, the shader probes' ceilings, guard zones
// around its buffers, the reason shown when the loader finds no driver, and
// `switchyard-cli profile --device vulkan:0` over the four ops.
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

#include <cstring>
#include <map>
#include <string>

#ifdef SWITCHYARD_TEST_VULKAN
#include "backends/vulkan/vulkandevice.h"
#endif

using namespace switchyard;

namespace {

const std::string kPluginDir = SWITCHYARD_BUILD_DIR "/lib/switchyard/plugins";
const std::string kLibrary = kPluginDir + "/libswitchyard-vulkan.so";

ProfileSettings quick() {
    ProfileSettings s;
    s.time_budget_s = 0.01;
    s.warmup_s = 0.001;
    s.min_samples = 2;
    s.all_variants = true;
    s.devices = {"vulkan:0"};
    s.reference_budget_s = 0; // the Vulkan rows only
    return s;
}

bool on_cpu(const Device& d) {
    return d.info().properties.text_or("device_type", std::string()) == "CPU";
}

} // namespace

class TestVulkan : public QObject {
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
            QSKIP("the vulkan plugin is not built (SWITCHYARD_ENABLE_VULKAN off, or no Vulkan "
                  "headers or glslc)");
    }

    void discoveredNotLoaded() {
        auto& registry = default_backends();
        const auto info = registry.info("vulkan");
        QVERIFY(info.state == BackendState::Discovered);
        QVERIFY(!registry.is_loaded("vulkan"));
        QCOMPARE(int(info.declared_kernels.size()), 12);
        QCOMPARE(int(info.dependencies.size()), 1);
        QCOMPARE(info.dependencies[0].dependency.name, std::string("libvulkan.so.1"));
        QVERIFY(info.dependencies[0].dependency.hint.find("mesa-vulkan-drivers") !=
                std::string::npos);
        const auto cell = kernels().lookup(kernel_key(kGemm, "vulkan", "generic", "tiled"));
        QVERIFY(cell);
        QVERIFY(!cell->is_loaded());
    }

    void loadsAndRegistersWhatItDeclares() {
        auto& registry = default_backends();
        try {
            registry.load("vulkan");
        } catch (const MissingDependency& e) {
            QSKIP(qPrintable(QString("no Vulkan loader: ") + e.what()));
        }
        const auto info = registry.info("vulkan");
        QVERIFY(info.state == BackendState::Loaded);
        QVERIFY2(info.diagnostics.empty(),
                 info.diagnostics.empty() ? "" : info.diagnostics[0].c_str());
        for (const auto& declared : info.declared_kernels) {
            const auto cell = kernels().lookup(TupleKey(declared.key));
            QVERIFY(cell);
            QVERIFY(cell->is_loaded());
            QVERIFY(cell->meta.contains("requires"));
        }
        m_device = default_devices().find("vulkan:0");
        if (!m_device) {
            const auto cell = kernels().lookup(kernel_key(kGemm, "vulkan", "generic", "default"));
            QVERIFY(!cell->is_available());
            m_skip = QString::fromStdString("no Vulkan device here: " +
                                            cell->meta.text_or("requires", "?"));
        }
    }

    void deviceDescribesItself() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto& info = m_device->info();
        QCOMPARE(info.id, std::string("vulkan:0"));
        QCOMPARE(info.kind, std::string("vulkan"));
        QCOMPARE(info.arch, std::string("generic"));
        QVERIFY(!info.name.empty());
        for (const char* key :
             {"api_version", "driver_version", "device_type", "vulkan_device_type", "memory_heaps",
              "subgroup_size", "timestamp_period_ns", "timestamp_valid_bits", "max_work_group_size",
              "global_memory_bytes"})
            QVERIFY2(info.properties.contains(key), key);
        QVERIFY(info.properties.find("memory_heaps")->size() > 0);
        QVERIFY(info.properties.integer_or("subgroup_size", 0) > 0);
        // Timestamps where the compute queue has them: the timer follows the device.
        QCOMPARE(info.has_device_timer, info.properties.integer_or("timestamp_valid_bits", 0) > 0);
        if (info.has_device_timer)
            QVERIFY(info.properties.number_or("timestamp_period_ns", 0.0) > 0);
        const auto api = info.properties.text_or("api_version", "");
        QVERIFY2(api.rfind("1.", 0) == 0 && api != "1.0" && api.rfind("1.0.", 0) != 0, api.c_str());
        for (const auto& m : kernels().manifest())
            if (m.cell->key[1] == "vulkan")
                QVERIFY(m.available);
    }

    // The shader probes: read, copy and triad over buffers of the same size, and FMA; each
    // a ceiling of its own, the memory ones at level "device" with no capacity.
    void probesMeasureCeilings() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        m_device->prepare();
        const auto& info = m_device->info();
        std::map<std::string, const Ceiling*> by_id;
        for (const auto& c : info.ceilings)
            by_id[c.id] = &c;
        for (const char* id : {"device.read", "device.copy", "device.triad"}) {
            QVERIFY2(by_id.count(id), id);
            const Ceiling& c = *by_id[id];
            QVERIFY2(c.value > 0, c.method.c_str());
            QCOMPARE(c.kind, std::string("bandwidth"));
            QCOMPARE(c.level, std::string("device"));
            QCOMPARE(c.capacity_bytes, 0.0);
            QVERIFY(c.working_set_bytes >= double(1 << 20));
            QVERIFY2(c.method.find("shader") != std::string::npos, c.method.c_str());
        }
        // The copy's working set is two buffers, the triad's three, of one size.
        QCOMPARE(by_id["device.triad"]->working_set_bytes * 2,
                 by_id["device.copy"]->working_set_bytes * 3);
        QVERIFY(by_id.count("fma.fp32.all"));
        QVERIFY2(by_id["fma.fp32.all"]->value > 0, info.peak_gflops_source.c_str());
        QCOMPARE(info.peak_bandwidth_gbs, by_id["device.copy"]->value);
        QVERIFY(info.peak_gflops_source.find("probe_fma") != std::string::npos);
        // The JSON the report and the ceiling cache carry keeps them.
        const nlohmann::json j = info;
        QCOMPARE(j.at("ceilings").size(), info.ceilings.size());
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
        QCOMPARE(out, in);
        // At an offset, and through a view where the alignment allows one.
        auto* views = dynamic_cast<BufferViews*>(m_device.get());
        QVERIFY(views);
        const float seven[2] = {7.0f, 8.0f};
        views->upload_at(buffer, 100 * sizeof(float), seven, sizeof seven);
        float back[3] = {};
        views->download_at(back, buffer, 99 * sizeof(float), sizeof back);
        QCOMPARE(back[0], 49.5f);
        QCOMPARE(back[1], 7.0f);
        QCOMPARE(back[2], 8.0f);
        if (void* v = views->view(buffer, 256, 64)) {
            float first = 0;
            m_device->download(&first, v, sizeof first);
            QCOMPARE(first, 32.0f); // element 64
            views->release_view(v);
        }
        m_device->release(buffer);
    }

    void parity_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QStringList>("sizes");
        QTest::addColumn<QStringList>("variants");
        // 1, 7, 1023 and sizes that are no multiple of 4, of a work-group or of a tile: the
        // vec4 shaders' heads and tails (a row of 1029 starts off a multiple of 4).
        QTest::newRow("flow_match_step")
            << "flow_match_step" << QStringList{"1", "7", "1023", "100003"}
            << QStringList{"default", "scalar", "vec4"};
        QTest::newRow("flow_sde_step") << "flow_sde_step" << QStringList{"1", "7", "1023", "3x1029"}
                                       << QStringList{"default", "scalar", "vec4"};
        QTest::newRow("rms_norm") << "rms_norm" << QStringList{"1", "7", "1023", "5x1001"}
                                  << QStringList{"default", "shared", "subgroup"};
        QTest::newRow("gemm") << "gemm" << QStringList{"1x1x1",    "7x7x7",    "1023x7x9",
                                                       "9x1023x7", "7x9x1023", "67x45x129"}
                              << QStringList{"default", "naive", "tiled"};
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
        const bool subgroups = m_device->info().properties.find("subgroup_arithmetic") &&
                               m_device->info().properties.find("subgroup_arithmetic")->as_bool();
        for (const auto& spec : plan) {
            QCOMPARE(spec.device, std::string("vulkan:0"));
            if (!planned.contains(QString::fromStdString(spec.variant)))
                planned << QString::fromStdString(spec.variant);
            const auto row = profiler.run_row(spec);
            const auto what = spec.op + " " + spec.size + " " + spec.variant + ": " +
                              std::string(to_string(row.status)) + " " + row.reason;
            if (spec.variant == "subgroup" && !subgroups) {
                // A device without subgroup arithmetic says so, and runs nothing.
                QVERIFY2(row.status == RowStatus::Error, what.c_str());
                QVERIFY2(row.reason.find("subgroup arithmetic") != std::string::npos, what.c_str());
                continue;
            }
            QVERIFY2(row.status == RowStatus::Ok, what.c_str());
            QVERIFY2(row.parity.checked && row.parity.pass, what.c_str());
            QCOMPARE(row.timer, m_device->info().has_device_timer ? Timer::Device : Timer::Host);
            QVERIFY2(row.stats.median > 0, what.c_str());
            // A clock on every row, or the reason it has none: lavapipe runs on the host's
            // cores, so the host's clock applies; a GPU has no clock query in Vulkan.
            const auto clock = row.to_json().at("clock");
            if (on_cpu(*m_device)) {
                QVERIFY2(row.clock.measured() && row.clock.median_ghz > 0, what.c_str());
                QVERIFY(!clock.contains("none_reason"));
            } else {
                QVERIFY(!row.clock.measured());
                QVERIFY2(clock.at("none_reason").get<std::string>().find("Vulkan") !=
                             std::string::npos,
                         clock.dump().c_str());
            }
        }
        planned.sort();
        QCOMPARE(planned, variants);
        QCOMPARE(int(plan.size()), int(variants.size() * sizes.size()));
        // `default` names the form it runs on this device type; no other cell says anything.
        const std::map<QString, std::pair<std::string, std::string>> forms = {
            {"flow_match_step", {"generic/vec4", "generic/vec4"}},
            {"flow_sde_step", {"generic/vec4", "generic/vec4"}},
            {"rms_norm", {"generic/shared", "generic/shared"}},
            {"gemm", {"generic/naive", "generic/tiled"}}};
        for (const auto& spec : plan) {
            const auto want = spec.variant != "default" ? std::string()
                              : on_cpu(*m_device)       ? forms.at(op).first
                                                        : forms.at(op).second;
            QCOMPARE(spec.runs_as, want);
        }
    }

    // Guard zones around Vulkan buffers: outputs are views of a buffer with canaries on both
    // sides, read back after the launches. A kernel that writes 2 floats past `out` (the real
    // kernel, then a write through the mapped memory right after the view's end) is a parity
    // FAIL that says so; the real kernel alone passes.
    void guardZonesAroundVulkanBuffers() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
#ifndef SWITCHYARD_TEST_VULKAN
        QSKIP("built without the Vulkan headers for the test");
#else
        const auto real =
            kernels().lookup(kernel_key(kFlowMatchStep, "vulkan", "generic", "default"));
        QVERIFY(real);
        const KernelFn realFn = real->fn;
        KernelCell cell;
        cell.key = kernel_key(kFlowMatchStep, "vulkan", "generic", "overrun");
        cell.fn = [realFn](const KernelArgs& a) {
            realFn(a);
            const auto* out = reinterpret_cast<const vulkan::BufferHandle*>(a.out[0]);
            if (!out->mapped)
                throw std::runtime_error("`out` is not mapped: this device's memory is not "
                                         "host-visible");
            const float junk[2] = {1.0f, 2.0f};
            std::memcpy(out->mapped + out->size, junk, sizeof junk);
        };
        cell.source = CellSource::Registered;
        cell.backend = "test";
        cell.meta = {{"workspace_bytes", 0}};
        kernels().put(std::move(cell));

        auto settings = quick();
        settings.ops = {std::string(kFlowMatchStep)};
        settings.sizes["*"] = {"1024"};
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
            if (row.status == RowStatus::Error &&
                row.reason.find("not mapped") != std::string::npos) {
                kernels().erase(kernel_key(kFlowMatchStep, "vulkan", "generic", "overrun"));
                QSKIP("the device's buffers are not host-visible: the test cannot write past one");
            }
            QVERIFY(!row.parity.pass);
            QCOMPARE(row.parity.first_failure, std::string("wrote 2 elements past `out`"));
        }
        QVERIFY(seenOverrun && seenDefault);
        kernels().erase(kernel_key(kFlowMatchStep, "vulkan", "generic", "overrun"));
#endif
    }

    void deviceTimerTimesLaunches() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto cell =
            kernels().lookup(kernel_key(kFlowMatchStep, "vulkan", "generic", "default"));
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
        QVERIFY(ten > one); // ten dispatches' timestamp differences summed
        QCOMPARE(host[12345], 1.5f);
    }

    void kernelWithoutStreamSaysSo() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto cell = kernels().lookup(kernel_key(kRmsNorm, "vulkan", "generic", "shared"));
        KernelArgs args;
        args.dims = {1, 7, 0};
        try {
            cell->fn(args);
            QFAIL("a kernel without a stream ran");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("stream") != std::string::npos, e.what());
        }
    }

    void noDriverIsExplained() {
        // The loader reads only the manifests VK_DRIVER_FILES names: one that does not exist
        // means no driver, and the rung says where the loader looked.
        QTemporaryDir empty;
        const QString none = empty.filePath("none.json");
        const auto r = test::run_cli({"resolve", "flow_match_step", "--target", "vulkan", "--json"},
                                     "", {.env = {{"VK_DRIVER_FILES", none}}});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto rungs = QJsonDocument::fromJson(r.out).object().value("rungs").toArray();
        QVERIFY(!rungs.isEmpty());
        const auto first = rungs.at(0).toObject();
        QCOMPARE(first.value("device").toString(), QString("vulkan"));
        QVERIFY(first.value("declared").toBool());
        QVERIFY(!first.value("available").toBool());
        const auto why = first.value("why_not").toString();
        QVERIFY2(why.contains("vkCreateInstance: -9 VK_ERROR_INCOMPATIBLE_DRIVER"),
                 qPrintable(why));
        QVERIFY2(why.contains("VK_DRIVER_FILES is " + none), qPrintable(why));
    }

    // The "done when": all four ops on vulkan:0 through the CLI, PASS parity, device
    // timestamps, a ceiling fraction on every row, and the device with its shader ceilings
    // in the report.
    void cliProfilesTheFourOps() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        const auto r = test::run_cli({"profile", "--device", "vulkan:0", "--op",
                                      "flow_match_step,flow_sde_step,rms_norm,gemm", "--sizes",
                                      "flow_match_step:100003,flow_sde_step:8x1029,"
                                      "rms_norm:8x1001,gemm:64x64x64",
                                      "--budget", "0.05", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto doc = QJsonDocument::fromJson(r.out).object();
        QSet<QString> ops;
        for (const auto& v : doc.value("rows").toArray()) {
            const auto row = v.toObject();
            if (row.value("device").toString() != "vulkan:0")
                continue;
            const auto what = QJsonDocument(row).toJson(QJsonDocument::Compact);
            ops << row.value("op").toString();
            QCOMPARE(row.value("backend").toString(), QString("vulkan"));
            QCOMPARE(row.value("status").toString(), QString("ok"));
            QCOMPARE(row.value("timer").toString(),
                     m_device->info().has_device_timer ? QString("device") : QString("host"));
            QCOMPARE(row.value("parity").toObject().value("verdict").toString(), QString("PASS"));
            QVERIFY2(row.value("speedup_vs_reference").toDouble() > 0, what.constData());
            QVERIFY2(!row.value("ceiling_id").toString().isEmpty(), what.constData());
            QVERIFY2(row.value("ceiling_fraction").toDouble() > 0, what.constData());
        }
        QCOMPARE(ops, (QSet<QString>{"flow_match_step", "flow_sde_step", "rms_norm", "gemm"}));
        bool listed = false;
        for (const auto& d : doc.value("context").toObject().value("devices").toArray()) {
            const auto device = d.toObject();
            if (device.value("id").toString() != "vulkan:0")
                continue;
            listed = true;
            QStringList ids;
            for (const auto& c : device.value("ceilings").toArray())
                ids << c.toObject().value("id").toString();
            for (const char* id : {"device.read", "device.copy", "device.triad", "fma.fp32.all"})
                QVERIFY2(ids.contains(id), qPrintable(ids.join(", ")));
        }
        QVERIFY(listed);
    }

    void unregisterWithdrawsTheDevices() {
        if (!m_device)
            QSKIP(qPrintable(m_skip));
        m_device.reset();
        QVERIFY(default_backends().unregister_backend("vulkan"));
        QVERIFY(!default_devices().find("vulkan:0"));
        QVERIFY(default_devices().find("cpu"));
    }
};

QTEST_GUILESS_MAIN(TestVulkan)
#include "tst_vulkan.moc"
