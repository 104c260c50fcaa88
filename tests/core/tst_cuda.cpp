// SPDX-License-Identifier: MIT
// The cuda and cuda-cublas plugins (core/backends/cuda). Without a GPU (CI, this machine):
// their manifests, the way a missing driver is reported, the CUDA runtime's own reason,
// the what-if chain for an sm_90 device, and every hand-written kernel run on the host by
// cudaemu.h (threads as fibers) against the CPU reference. With a GPU: every op on cuda:0
// against the CPU reference.
#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/runtime/runtime.h>

#include <QtTest>

#include "support/childprocess.h"

#include <dlfcn.h>

#include <set>

// The kernels' device code, compiled for the host (cudaemu.h first: it defines the CUDA
// built-ins the kernels use). Last, so its macros touch nothing else.
#include "../../core/backends/cuda/cudaemu.h"

#include "../../core/backends/cuda/elementwise.cuh"
#include "../../core/backends/cuda/gemm.cuh"
#include "../../core/backends/cuda/probes.cuh"

#include "../../core/backends/cuda/ceilings.h"

using namespace switchyard;
using namespace switchyard::cuda; // the run_* launches of the .cuh files

namespace {

const QString kPluginDir = QStringLiteral(SWITCHYARD_BUILD_DIR "/lib/switchyard/plugins");

using Keys = std::set<std::vector<std::string>>;

Keys declared_keys(const BackendInfo& info) {
    Keys keys;
    for (const auto& c : info.declared_kernels)
        keys.insert(c.key);
    return keys;
}

// A fresh registry that discovers the plugins built into build/lib/switchyard/plugins.
struct Plugins {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};
    Plugins() {
        registry.set_plugin_discovery(
            PluginSearchPath::from_dirs({kPluginDir.toStdString()}).discovery());
    }
};

bool driver_missing(const BackendInfo& info) {
    for (const auto& d : info.dependencies)
        if (d.dependency.name == "libcuda.so.1")
            return !d.found;
    return false;
}

struct CliResult {
    int code = -1;
    QString out;
};

CliResult run_cli(const QStringList& args) {
    const auto r = test::run_cli(args, kPluginDir);
    return {r.code, QString::fromUtf8(r.out + r.err)};
}

// The launcher for the emulation: the whole grid, block after block, on this thread.
struct EmulatedLaunch {
    template <class... Params, class... Args>
    void operator()(dim3 grid, dim3 block, void (*kernel)(Params...), Args... args) const {
        cudaemu::launch(grid, block, [&] { kernel(args...); });
    }
};

using Runner = void (*)(const KernelArgs&);

// Runs `run` on the op's deterministic inputs (host memory stands in for the device's) and
// checks its outputs against the CPU reference with the op's tolerance.
ParityResult emulate(std::string_view op_name, const Dims& dims, Runner run) {
    const OpInfo& op = *find_op(op_name);
    Workload w(op, dims);
    auto out = w.make_outputs();
    run(w.args(out));
    return check_parity(op, dims, out, w.reference());
}

} // namespace

class TestCuda : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kPluginDir + "/libswitchyard-cuda.so"))
            QSKIP("the cuda plugin was not built (SWITCHYARD_ENABLE_CUDA=OFF or no nvcc)");
        // The process-wide registry (profiler, device registry) sees the same plugins.
        qputenv("SWITCHYARD_PLUGIN_PATH", kPluginDir.toLocal8Bit());
    }

    void manifestsDeclareTheCells() {
        Plugins p;
        const auto cuda = p.registry.info("cuda");
        QCOMPARE(cuda.source, BackendSource::Plugin);
        QVERIFY2(cuda.state != BackendState::Invalid, cuda.error.c_str());
        const Keys expected = {{"flow_match_step", "cuda", "generic", "default"},
                               {"flow_match_step", "cuda", "sm_80", "default"},
                               {"flow_sde_step", "cuda", "generic", "default"},
                               {"flow_sde_step", "cuda", "sm_80", "default"},
                               {"gemm", "cuda", "generic", "default"},
                               {"gemm", "cuda", "sm_80", "default"},
                               {"gemm", "cuda", "sm_90", "default"},
                               {"rms_norm", "cuda", "generic", "default"},
                               {"rms_norm", "cuda", "sm_80", "default"}};
        QVERIFY(declared_keys(cuda) == expected);
        QCOMPARE(cuda.capabilities.optional_deps.size(), std::size_t(1));
        QCOMPARE(cuda.capabilities.optional_deps[0].name, std::string("libcuda.so.1"));
        QVERIFY(cuda.capabilities.optional_deps[0].hint.find("nvidia-driver") != std::string::npos);

        const auto cublas = p.registry.info("cuda-cublas");
        QVERIFY2(cublas.state != BackendState::Invalid, cublas.error.c_str());
        const Keys blas = {{"gemm", "cuda", "generic", "cublas"},
                           {"gemm", "cuda", "sm_80", "cublas_tf32"}};
        QVERIFY(declared_keys(cublas) == blas);

        // Every declared cell is in the matrix, loaded or not.
        int cuda_cells = 0;
        for (const auto& m : p.kernels.manifest())
            cuda_cells += m.cell->key[1] == "cuda";
        QCOMPARE(cuda_cells, 11);
    }

    void missingDriverIsExplained() {
        Plugins p;
        const auto info = p.registry.info("cuda");
        if (!driver_missing(info))
            QSKIP("libcuda.so.1 is installed here: the missing-driver path cannot be observed");
        QCOMPARE(info.state, BackendState::Unavailable);
        QVERIFY2(info.error.find("libcuda.so.1") != std::string::npos, info.error.c_str());
        QVERIFY2(info.error.find("Install the NVIDIA driver") != std::string::npos,
                 info.error.c_str());
        // Hidden by default, listed when asked, and never loaded.
        const auto shown = p.registry.list();
        QVERIFY(std::find(shown.begin(), shown.end(), "cuda") == shown.end());
        ListOptions all;
        all.include_unavailable = true;
        const auto listed = p.registry.list(all);
        QVERIFY(std::find(listed.begin(), listed.end(), "cuda") != listed.end());
        QVERIFY(std::find(listed.begin(), listed.end(), "cuda-cublas") != listed.end());
        QVERIFY_THROWS_EXCEPTION(MissingDependency, p.registry.lookup("cuda"));
        QVERIFY(!p.registry.is_loaded("cuda"));

        const auto show = run_cli({"show", "cuda"});
        QVERIFY2(show.out.contains("libcuda.so.1") &&
                     show.out.contains("Install the NVIDIA driver"),
                 qPrintable(show.out));
        const auto doctor = run_cli({"doctor"});
        QVERIFY2(doctor.out.contains("libcuda.so.1") && doctor.out.contains("nvidia-driver"),
                 qPrintable(doctor.out));
    }

    void missingCublasIsALibraryDependency() {
        // A machine with the driver but without the CUDA toolkit's libraries: simulated with
        // a copy of cuda-cublas whose DT_NEEDED names libcublas.so.99 (same length, so the
        // ELF stays valid) and whose manifest declares no driver dependency.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile lib(kPluginDir + "/libswitchyard-cuda-cublas.so");
        QVERIFY(lib.open(QIODevice::ReadOnly));
        QByteArray elf = lib.readAll();
        const QByteArray needed("libcublas.so.13\0", 16), fake("libcublas.so.99\0", 16);
        QVERIFY(elf.contains(needed));
        elf.replace(needed, fake);
        QFile copy(dir.path() + "/libswitchyard-cuda-cublas.so");
        QVERIFY(copy.open(QIODevice::WriteOnly));
        copy.write(elf);
        copy.close();
        QFile manifest(kPluginDir + "/cuda-cublas.plugin.json");
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        auto j = nlohmann::json::parse(manifest.readAll().toStdString());
        j["capabilities"]["optional_deps"] = nlohmann::json::array();
        QFile out(dir.path() + "/cuda-cublas.plugin.json");
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(j.dump()));
        out.close();

        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components, builtin_backends};
        registry.set_plugin_discovery(
            PluginSearchPath::from_dirs({dir.path().toStdString()}).discovery());
        try {
            registry.load("cuda-cublas");
            QFAIL("loading a plugin whose libcublas is missing succeeded");
        } catch (const BackendLoadError& e) {
            QCOMPARE(e.cause(), BackendLoadError::Cause::LibraryDependencyMissing);
            QVERIFY2(std::string(e.what()).find("libcublas.so.99") != std::string::npos, e.what());
        }
        QCOMPARE(registry.info("cuda-cublas").state, BackendState::Failed);

        const auto shown =
            test::run_cli({"show", "cuda-cublas"}, dir.path(), {.timeout_ms = 60000});
        const QString show = QString::fromUtf8(shown.out + shown.err);
        QVERIFY2(show.contains("a library it needs is missing: libcublas.so.99"), qPrintable(show));
        const QString doctor =
            QString::fromUtf8(test::run_cli({"doctor"}, dir.path(), {.timeout_ms = 60000}).out);
        QVERIFY2(doctor.contains("a library it needs is missing: libcublas.so.99"),
                 qPrintable(doctor));
    }

    void runtimeGivesItsOwnReason() {
        // The library opened directly, past the manifest's dependency check: what the
        // static CUDA runtime itself says on this machine.
        const auto path = (kPluginDir + "/libswitchyard-cuda.so").toStdString();
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        QVERIFY2(handle, ::dlerror());
        auto status =
            reinterpret_cast<const char* (*)()>(::dlsym(handle, "switchyard_cuda_runtime_status"));
        QVERIFY(status);
        const QString text = QString::fromUtf8(status());
        qInfo("CUDA runtime: %s", qPrintable(text));
        if (text.contains("device(s)"))
            QSKIP("a CUDA device is present: no runtime error to check");
        QVERIFY2(text.startsWith("cudaErrorInsufficientDriver: ") ||
                     text.startsWith("cudaErrorNoDevice: "),
                 qPrintable(text));
        QVERIFY(text.size() > 30); // the name and cudaGetErrorString's sentence
    }

    void whatIfChainForSm90() {
        Plugins p;
        const auto r = resolve_kernel(p.registry, "gemm", Target{"cuda", "sm_90"});
        std::vector<std::string> arches;
        for (const auto& rung : r.rungs)
            arches.push_back(rung.key[1] + ":" + rung.key[2] + ":" + rung.key[3]);
        const std::vector<std::string> expected = {"cuda:sm_90:default",   "cuda:sm_89:default",
                                                   "cuda:sm_86:default",   "cuda:sm_80:default",
                                                   "cuda:sm_75:default",   "cuda:generic:default",
                                                   "cpu:generic:reference"};
        QCOMPARE(arches, expected);
        const std::vector<bool> declared = {true, false, false, true, false, true, true};
        for (std::size_t i = 0; i < r.rungs.size(); ++i) {
            QVERIFY2(r.rungs[i].declared == declared[i], arches[i].c_str());
            if (declared[i] && i + 1 < r.rungs.size())
                QCOMPARE(r.rungs[i].backend, std::string("cuda"));
        }
        QVERIFY(r.first_declared && *r.first_declared == 0);
        QVERIFY(r.winner);
        if (!default_devices().find("cuda:0") && driver_missing(p.registry.info("cuda"))) {
            QCOMPARE(*r.winner, r.rungs.size() - 1); // the CPU reference
            QVERIFY2(r.rungs[0].why_not.find("libcuda.so.1") != std::string::npos,
                     r.rungs[0].why_not.c_str());
        }
        const auto cli = run_cli({"resolve", "gemm", "--target", "cuda:sm_90"});
        QVERIFY2(cli.code == 0 && cli.out.contains("sm_90") && cli.out.contains("reference"),
                 qPrintable(cli.out));
    }

    void emulatedKernels_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("size");
        QTest::addColumn<void*>("runner");
        struct Variant {
            const char* op;
            const char* name;
            Runner run;
            std::vector<const char*> sizes;
        };
        // Odd sizes: scalar tails, rows that are not a multiple of 4, partial tiles in
        // every dimension, B rows that are (n % 4 == 0) and are not 16-byte loadable.
        const std::vector<const char*> vec = {"1", "7", "1023", "4100"};
        const std::vector<const char*> rows = {"1x1", "3x7", "2x1023", "5x1024", "2x2052"};
        const std::vector<const char*> gemm = {"1x1x1",      "7x9x13",    "33x20x17",
                                               "129x260x37", "130x257x9", "64x128x16"};
        static const std::vector<Variant> variants = {
            {"flow_match_step", "generic",
             [](const KernelArgs& a) { run_flow_match_step(a, false, EmulatedLaunch{}); }, vec},
            {"flow_match_step", "sm_80",
             [](const KernelArgs& a) { run_flow_match_step(a, true, EmulatedLaunch{}); }, vec},
            {"flow_sde_step", "generic",
             [](const KernelArgs& a) { run_flow_sde_step(a, false, EmulatedLaunch{}); }, rows},
            {"flow_sde_step", "sm_80",
             [](const KernelArgs& a) { run_flow_sde_step(a, true, EmulatedLaunch{}); }, rows},
            {"rms_norm", "generic",
             [](const KernelArgs& a) { run_rms_norm(a, false, EmulatedLaunch{}); }, rows},
            {"rms_norm", "sm_80",
             [](const KernelArgs& a) { run_rms_norm(a, true, EmulatedLaunch{}); }, rows},
            {"gemm", "generic", [](const KernelArgs& a) { run_gemm_generic(a, EmulatedLaunch{}); },
             gemm},
            {"gemm", "sm_80", [](const KernelArgs& a) { run_gemm_sm80(a, EmulatedLaunch{}); },
             gemm},
            {"gemm", "sm_90", [](const KernelArgs& a) { run_gemm_sm90(a, EmulatedLaunch{}); },
             gemm},
        };
        for (const auto& v : variants)
            for (const char* size : v.sizes)
                QTest::addRow("%s %s %s", v.op, v.name, size)
                    << QString(v.op) << QString(size) << reinterpret_cast<void*>(v.run);
    }

    void emulatedKernels() {
        QFETCH(QString, op);
        QFETCH(QString, size);
        QFETCH(void*, runner);
        const auto* info = find_op(op.toStdString());
        QVERIFY(info);
        std::string error;
        const auto dims = parse_dims(*info, size.toStdString(), &error);
        QVERIFY2(dims, error.c_str());
        const auto r = emulate(info->name, *dims, reinterpret_cast<Runner>(runner));
        QVERIFY2(r.pass, r.first_failure.c_str());
        QCOMPARE(r.non_finite, 0);
    }

    void profileEveryOpOnTheGpu() {
        Profiler probe{ProfileSettings{}, default_backends(), default_devices()};
        (void)probe.plan(); // loads the device backends that can load here
        if (!default_devices().find("cuda:0")) {
            const auto info = default_backends().info("cuda");
            const std::string why =
                info.is_available() ? "the CUDA runtime reports no device" : info.error;
            QSKIP(("no CUDA device: " + why).c_str());
        }
        ProfileSettings s;
        s.devices = {"cuda:0"};
        s.all_variants = true;
        s.sizes = {{"flow_match_step", {"1", "7", "1023", "1000003"}},
                   {"flow_sde_step", {"1x7", "3x1023", "64x4096"}},
                   {"rms_norm", {"1x7", "3x1023", "64x4096"}},
                   {"gemm", {"1x1x1", "7x9x13", "129x257x65", "256x256x256"}}};
        s.time_budget_s = 0.05;
        s.warmup_s = 0.005;
        s.min_samples = 3;
        Profiler profiler(s, default_backends(), default_devices());
        std::set<std::string> variants;
        for (const auto& row : profiler.run()) {
            const auto what =
                row.spec.op + " " + row.spec.size + " " + row.spec.arch + "/" + row.spec.variant;
            QVERIFY2(row.status == RowStatus::Ok,
                     (what + ": " + std::string(to_string(row.status)) + " " + row.reason).c_str());
            QVERIFY(row.timer == Timer::Device);
            variants.insert(row.spec.op + ":" + row.spec.arch + ":" + row.spec.variant);
        }
        QVERIFY(variants.count("gemm:generic:default"));
        QVERIFY(variants.count("flow_match_step:generic:default"));
    }

    // The theoretical ceilings from attributes: an H100 SXM (HBM3, 5120-bit bus, 2619 MHz
    // memory clock; 132 SMs at 1980 MHz, 128 FP32 lanes) and a GDDR card.
    void theoreticalCeilingsFromAttributes() {
        CudaAttributes h100;
        h100.multiprocessors = 132;
        h100.clock_khz = 1'980'000;
        h100.memory_clock_khz = 2'619'000;
        h100.memory_bus_bits = 5120;
        h100.fp32_lanes_per_sm = 128;
        h100.l2_bytes = 50 << 20;
        const auto c = theoretical_ceilings(h100);
        QCOMPARE(c.size(), std::size_t(2));
        QCOMPARE(c[0].id, std::string("theoretical.hbm"));
        QCOMPARE(c[0].level, std::string("HBM"));
        QVERIFY(!c[0].measured);
        // 2 x 2619e6 x 5120 / 8 = 3352.3 GB/s
        QVERIFY(std::fabs(c[0].value - 3352.32) < 0.01);
        QCOMPARE(c[1].id, std::string("theoretical.fma.fp32"));
        QCOMPARE(c[1].kind, std::string("compute"));
        // 132 x 1.98e9 x 128 x 2 = 66908.16 GFLOP/s
        QVERIFY(std::fabs(c[1].value - 66908.16) < 0.01);
        QVERIFY(c[1].method.find("132 SMs x 1980 MHz x 128 FP32 lanes x 2") != std::string::npos);

        // With its compute capability known, the tensor cores' TF32 peak too (Hopper: 2048
        // dense flops per SM and clock; 132 x 1.98e9 x 2048 = 535265.28 GFLOP/s); none for a
        // capability the table does not hold.
        h100.compute_capability = 90;
        const auto t = theoretical_ceilings(h100);
        QCOMPARE(t.size(), std::size_t(3));
        QCOMPARE(t[2].id, std::string("theoretical.tensor.tf32"));
        QCOMPARE(t[2].kind, std::string("compute"));
        QVERIFY(std::fabs(t[2].value - 535265.28) < 0.01);
        h100.compute_capability = 75;
        QCOMPARE(theoretical_ceilings(h100).size(), std::size_t(2));
        h100.compute_capability = 0;

        CudaAttributes gddr = h100;
        gddr.memory_bus_bits = 384;
        QCOMPARE(memory_level(gddr), std::string("DRAM"));
        QCOMPARE(theoretical_ceilings(gddr)[0].id, std::string("theoretical.dram"));
        CudaAttributes none;
        QVERIFY(theoretical_ceilings(none).empty()); // unreported attributes: no ceiling
    }

    // The probe kernels, emulated: the copy copies every float4, the FMA kernel runs the
    // flops fma_probe_flops counts (its result matches the same chains run on the host).
    void probeKernelsEmulated() {
        std::vector<float> src(1024 + 64), dst(src.size(), 0.0f);
        for (std::size_t i = 0; i < src.size(); ++i)
            src[i] = float(i) * 0.5f;
        // The vectors' storage is 16-byte aligned on glibc (operator new's alignment).
        run_copy_probe(src.data(), dst.data(), std::int64_t(1024 * sizeof(float)), 2,
                       EmulatedLaunch{});
        for (std::size_t i = 0; i < 1024; ++i)
            QCOMPARE(dst[i], src[i]);
        QCOMPARE(dst[1024], 0.0f); // nothing past the byte count
        // The triad: a = b + s c over the first 1000 floats (250 float4s, a partial block).
        std::vector<float> a(src.size(), -1.0f);
        run_triad_probe(src.data(), dst.data(), 0.5f, a.data(), std::int64_t(1000 * sizeof(float)),
                        EmulatedLaunch{});
        for (std::size_t i = 0; i < 1000; ++i)
            QCOMPARE(a[i], src[i] + 0.5f * dst[i]);
        QCOMPARE(a[1000], -1.0f);
        std::vector<float> out(2 * kProbeThreads, -1.0f);
        run_fma_probe(out.data(), 2, 3, EmulatedLaunch{});
        float expect = 0;
        for (int c = 0; c < kFmaChains; ++c) {
            float acc = float(5 + c); // thread 5
            for (int it = 0; it < 3; ++it)
                acc = std::fma(acc, 0.999999f, 1e-7f);
            expect += acc;
        }
        QCOMPARE(out[5], expect);
        QCOMPARE(out[kProbeThreads + 5], expect);
        QCOMPARE(fma_probe_flops(2, 3), 2.0 * kProbeThreads * 3 * kFmaChains * 2);
    }

    // The sweep kernel, emulated: `trials` in-place updates of every float4 of the set, and
    // nothing past it.
    void sweepKernelEmulated() {
        std::vector<float> x(2 * kProbeThreads * 4 * 3 + 64, 1.0f);
        const std::int64_t bytes = std::int64_t((x.size() - 64) * sizeof(float));
        run_sweep_probe(x.data(), bytes, 2, 3, EmulatedLaunch{});
        float expect = 1.0f;
        for (int t = 0; t < 3; ++t)
            expect = std::fma(0.999f, expect, 0.001f);
        for (std::size_t i = 0; i + 64 < x.size(); ++i)
            QCOMPARE(x[i], expect);
        QCOMPARE(x[x.size() - 64], 1.0f);
    }

    // The sweep's plan for an H100/H200-sized device: every thread has a float4 at the first
    // set, steps of 2^(1/4) to 1 GiB, about 1 GiB moved each way per launch.
    void sweepPlanCoversTheLevels() {
        const auto plan = sweep_plan(132, std::int64_t(141) << 30, kProbeThreads);
        QCOMPARE(plan.blocks, 132u * 4);
        QVERIFY(plan.working_sets.size() >= 30);
        QCOMPARE(plan.working_sets.size(), plan.trials.size());
        QVERIFY(plan.working_sets.front() >= std::int64_t(plan.blocks) * kProbeThreads * 16);
        QVERIFY(plan.working_sets.back() <= std::int64_t(1) << 30);
        QVERIFY(plan.working_sets.back() > std::int64_t(768) << 20);
        for (std::size_t i = 0; i < plan.working_sets.size(); ++i) {
            const auto b = plan.working_sets[i];
            QCOMPARE(b % 256, std::int64_t(0));
            if (i > 0) {
                const double step = double(b) / double(plan.working_sets[i - 1]);
                QVERIFY2(step > 1.1 && step < 1.25, qPrintable(QString::number(step)));
            }
            const double moved = double(b) * plan.trials[i];
            QVERIFY(moved <= double(std::int64_t(1) << 30) + double(b));
            QVERIFY(moved >= 0.5 * double(std::int64_t(1) << 30));
        }
        // A small card's memory bounds the sweep.
        QVERIFY(sweep_plan(20, std::int64_t(1) << 30, kProbeThreads).working_sets.back() <=
                std::int64_t(128) << 20);
    }

    // A sweep shaped like an H100's (L1s 33 MiB together, L2 50 MiB, HBM): its plateaus come
    // out labelled L1, L2, HBM; L1 becomes a ceiling, and the L2 probe's ceiling is kept.
    void sweepPlateausBecomeCeilings() {
        QCOMPARE(l1_bytes_per_sm(9, 0), std::int64_t(256) << 10);
        QCOMPARE(l1_bytes_per_sm(8, 0), std::int64_t(192) << 10);
        QCOMPARE(l1_bytes_per_sm(8, 6), std::int64_t(128) << 10);
        QCOMPARE(l1_bytes_per_sm(7, 5), std::int64_t(96) << 10);
        CudaAttributes h100;
        h100.multiprocessors = 132;
        h100.l2_bytes = 50 << 20;
        const auto caches = sweep_caches(h100, 9, 0);
        QCOMPARE(caches.size(), std::size_t(2));
        QCOMPARE(caches[0].level, std::string("L1"));
        QCOMPARE(caches[0].capacity_bytes, 132.0 * 256 * 1024);
        QCOMPARE(caches[1].level, std::string("L2"));

        const auto plan = sweep_plan(132, std::int64_t(80) << 30, kProbeThreads);
        std::vector<SweepPoint> points;
        for (const auto b : plan.working_sets) {
            const double ws = double(b);
            const double gbs = ws <= caches[0].capacity_bytes   ? 30000
                               : ws <= caches[1].capacity_bytes ? 10000
                                                                : 3000;
            points.push_back({ws, gbs});
        }
        DeviceInfo info;
        info.properties["memory_level"] = "HBM";
        Ceiling probe;
        probe.id = "l2.copy";
        probe.level = "L2";
        probe.value = 9000;
        info.ceilings.push_back(probe);
        add_sweep_results(info, points, caches);
        const nlohmann::json sweep =
            info.properties.find("sweep") ? *info.properties.find("sweep") : Value();
        const auto& plateaus = sweep["plateaus"];
        QCOMPARE(plateaus.size(), std::size_t(3));
        QCOMPARE(plateaus[0]["level"].get<std::string>(), std::string("L1"));
        QCOMPARE(plateaus[0]["gbs"].get<double>(), 30000.0);
        QCOMPARE(plateaus[1]["level"].get<std::string>(), std::string("L2"));
        QCOMPARE(plateaus[1]["gbs"].get<double>(), 10000.0);
        QCOMPARE(plateaus[2]["level"].get<std::string>(), std::string("HBM"));
        QCOMPARE(sweep["points"].size(), points.size());
        QCOMPARE(info.ceilings.size(), std::size_t(2));
        QCOMPARE(info.ceilings[0].value, 9000.0); // the directed L2 probe stays
        QCOMPARE(info.ceilings[1].id, std::string("l1.copy"));
        QCOMPARE(info.ceilings[1].level, std::string("L1"));
        QCOMPARE(info.ceilings[1].value, 30000.0);
        QCOMPARE(info.ceilings[1].capacity_bytes, caches[0].capacity_bytes);
        QVERIFY(info.ceilings[1].method.find("working-set sweep") != std::string::npos);
        // With the CPU's reach (2x) the L2's plateau would have been called the L1s'.
        bool l2 = false;
        for (const auto& p : detect_plateaus(points, caches, "HBM"))
            l2 = l2 || p.level == "L2";
        QVERIFY(!l2);
    }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "tst_cuda.moc"
