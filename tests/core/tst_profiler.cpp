// SPDX-License-Identifier: MIT
// The in-process profiling engine: planning, one row end to end, parity verdicts of
// wrong kernels, settings validation. No timing assertions (benchmarks measure speed).
#include <QtTest>

#include "core/fakedevice.h"
#include "kernels/cpukernels.h"
#include "util/sanitizer.h"

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/profiling/ceilingtext.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/report/report.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/registries.h>
#include <switchyard/sdk/version.h>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

using namespace switchyard;

namespace {

ProfileSettings quick() {
    ProfileSettings s;
    s.time_budget_s = 0.02;
    s.warmup_s = 0.001;
    s.min_samples = 3;
    s.reference_budget_s = 0; // the reference only where a test asks for it
    return s;
}

void put_test_kernel(const std::string& variant, KernelFn fn) {
    KernelCell cell;
    cell.key = kernel_key(kFlowMatchStep, "cpu", "generic", variant);
    cell.fn = std::move(fn);
    cell.source = CellSource::Registered;
    cell.backend = "test";
    cell.meta = {{"workspace_bytes", 0}};
    kernels().put(std::move(cell));
}

// A correct flow_match_step cell for (kind, generic, default), run on the host.
void put_device_flow_cell(const std::string& kind) {
    KernelCell cell;
    cell.key = kernel_key(kFlowMatchStep, kind, "generic", "default");
    cell.fn = [](const KernelArgs& a) {
        for (std::int64_t i = 0; i < a.dims[0]; ++i)
            a.out[0][i] = a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
    };
    cell.source = CellSource::Registered;
    cell.backend = "test";
    kernels().put(std::move(cell));
}

RowSpec spec_for(const std::string& variant, std::int64_t n = 1023) {
    RowSpec r;
    r.op = std::string(kFlowMatchStep);
    r.dims = {n, 0, 0};
    r.size = std::to_string(n);
    r.device = "cpu";
    r.device_kind = "cpu";
    r.arch = "generic";
    r.variant = variant;
    r.backend = "test";
    return r;
}

// A set of CPU ceilings as a cache holds it, on the CPU this process measures on.
CpuPeaks cached_peaks() {
    CpuPeaks p;
    p.triad_gbs = 12.5;
    p.triad_bytes = std::int64_t(1) << 26;
    p.fma_gflops = 99;
    p.fma_isa = "baseline";
    Ceiling c;
    c.id = "dram.triad.all";
    c.kind = "bandwidth";
    c.level = "DRAM";
    c.value = 12.5;
    c.method = "test";
    p.ceilings.push_back(c);
    p.pinned_cpu = one_thread_cpu(-1); // the CPU this process measures on (-1: unpinned)
    return p;
}

// The ceilings the runtime's CPU device (so every Profiler here) judges rows by.
void use_peaks(const CpuPeaks& peaks) {
    find_cpu_device(default_devices())->set_peaks(peaks);
}

CpuPeaks peaks_in_use() {
    return find_cpu_device(default_devices())->peaks().value();
}

nlohmann::json read_json_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str());
}

void write_text_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
}

} // namespace

class TestProfiler : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // Skip the probes: tests do not measure peaks.
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
        default_backends().ensure_initialized();
        put_test_kernel("wrong", [](const KernelArgs& a) {
            for (std::int64_t i = 0; i < a.dims[0]; ++i)
                a.out[0][i] = a.in[0][i] - float(a.scalars[0]) * a.in[1][i]; // sign error
        });
        put_test_kernel("nan", [](const KernelArgs& a) {
            for (std::int64_t i = 0; i < a.dims[0]; ++i)
                a.out[0][i] = i == 3 ? NAN : a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
        });
        put_test_kernel("lazy", [](const KernelArgs& a) {
            for (std::int64_t i = 0; i + 1 < a.dims[0]; ++i) // forgets the last element
                a.out[0][i] = a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
        });
        put_test_kernel("throws",
                        [](const KernelArgs&) { throw std::runtime_error("device lost"); });
    }

    void cleanupTestCase() {
        kernels().erase_if([](const KernelCell& c) { return c.backend == "test"; });
    }

    void cpuDeviceIsListed() {
        auto cpu = default_devices().find("cpu");
        QVERIFY(cpu);
        QCOMPARE(cpu->info().kind, std::string("cpu"));
        QCOMPARE(cpu->info().arch, cpu_info().best_level);
        cpu->prepare();
        QCOMPARE(cpu->info().peak_bandwidth_gbs, 20.0);
        QVERIFY(!cpu->info().peak_bandwidth_source.empty());
    }

    void defaultPlanResolvesOneCellPerRow() {
        Profiler p(quick(), default_backends(), default_devices());
        const auto rows = p.plan();
        std::set<std::string> ops_seen;
        for (const auto& r : rows) {
            ops_seen.insert(r.op);
            QCOMPARE(r.device, std::string("cpu"));
            QCOMPARE(r.variant, std::string("default"));
            QVERIFY(r.resolved);
            // The built-in cells sit on generic, x86-64-v3 and x86-64-v4: the chain picks the
            // most specific of them that detection (capped by SWITCHYARD_MAX_ISA) allows.
            QCOMPARE(r.arch, cpu_supports_x86_64_v4()   ? std::string("x86-64-v4")
                             : cpu_supports_x86_64_v3() ? std::string("x86-64-v3")
                                                        : std::string("generic"));
            QCOMPARE(r.index, std::int64_t(&r - rows.data()));
        }
        QCOMPARE(ops_seen.size(), std::size_t(4));
    }

    // Every (op, size) times the CPU reference first, on its own budget; the resolved cells
    // are marked.
    void referenceLeadsEveryOpAndSize() {
        auto s = quick();
        s.reference_budget_s = 0.01;
        s.ops = {"rms_norm", "gemm"};
        s.sizes["rms_norm"] = {"4x1024", "16x1024"};
        s.sizes["gemm"] = {"32"};
        s.devices = {"cpu"};
        Profiler p(s, default_backends(), default_devices());
        const auto rows = p.plan();
        QCOMPARE(rows.size(), std::size_t(6)); // 3 (op, size) x (reference + resolved)
        for (std::size_t i = 0; i < rows.size(); i += 2) {
            QVERIFY2(rows[i].is_reference(), rows[i].label().c_str());
            QVERIFY(!rows[i].resolved);
            QCOMPARE(rows[i + 1].op, rows[i].op);
            QCOMPARE(rows[i + 1].size, rows[i].size);
            QVERIFY(rows[i + 1].resolved);
            QVERIFY(!rows[i + 1].is_reference());
        }
        // The reference row samples on the reference budget (at least 3 samples): one of 0.5 s,
        // not the planning's 0.01, where the time budget ends the row before its third sample
        // when a busy host preempts it for 10 ms (its 3 samples take ~0.3 ms).
        s.time_budget_s = 5;
        s.reference_budget_s = 0.5;
        Profiler timed(s, default_backends(), default_devices());
        const auto t0 = std::chrono::steady_clock::now();
        const auto ref = timed.run_row(rows[0]);
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(ref.status == RowStatus::Ok);
        QVERIFY(ref.stats.count >= 3);
        QVERIFY2(took < 4, std::to_string(took).c_str()); // not the 5 s row budget
        // Without a reference budget only --all-variants plans the reference.
        s.reference_budget_s = 0;
        Profiler none(s, default_backends(), default_devices());
        for (const auto& r : none.plan())
            QVERIFY(!r.is_reference());
    }

    // A tuning that picked the CPU reference: a plain profile marks the reference row resolved
    // (one row); with resolved_apart (`ab`, which pairs rows by their place in the plan) the
    // resolved row stays a row of its own, so a tuned side plans the rows an untuned one does.
    // (CI under ASan: tune kept generic/reference, and ab refused "A 2 rows, B 1".)
    void tunedToTheReferenceKeepsItsRowApart() {
        auto s = quick();
        s.reference_budget_s = 0.01;
        s.ops = {"rms_norm"};
        s.sizes["rms_norm"] = {"4x1024"};
        s.devices = {"cpu"};
        s.use_tuning = true;
        const auto reference =
            kernels().lookup(kernel_key("rms_norm", "cpu", "generic", "reference"));
        QVERIFY(reference);
        const auto picker = [&](const OpInfo&, const Dims&, const DeviceInfo&, const KernelCell&) {
            return reference;
        };
        Profiler merged(s, default_backends(), default_devices());
        merged.set_tuned_picker(picker);
        auto rows = merged.plan();
        QCOMPARE(rows.size(), std::size_t(1));
        QVERIFY(rows[0].is_reference() && rows[0].resolved && !rows[0].tuned_from.empty());
        s.resolved_apart = true;
        Profiler apart(s, default_backends(), default_devices());
        apart.set_tuned_picker(picker);
        rows = apart.plan();
        QCOMPARE(rows.size(), std::size_t(2));
        QVERIFY(rows[0].is_reference() && !rows[0].resolved && rows[0].tuned_from.empty());
        QVERIFY(rows[1].is_reference() && rows[1].resolved);
        QVERIFY(!rows[1].tuned_from.empty());
        QCOMPARE(rows[1].index, std::int64_t(1));
        QVERIFY(ProfileSettings::from_json(s.to_json()).resolved_apart);
    }

    // A reference that took many reference budgets to compute for the parity checks is timed
    // by that computation alone (before: gemm 4096^3 on the GPU host ran its 30-60 s reference
    // six times, minutes, for one speedup).
    void slowReferenceIsTimedOnce() {
        auto s = quick();
        s.reference_budget_s = 1e-4; // once from 1 ms: gemm 512^3's reference takes ~20 ms
        s.ops = {"gemm"};
        s.sizes["gemm"] = {"512"};
        s.devices = {"cpu"};
        Profiler p(s, default_backends(), default_devices());
        const auto rows = p.plan();
        QVERIFY(rows.front().is_reference());
        const auto ref = p.run_row(rows.front());
        QVERIFY2(ref.status == RowStatus::Ok, ref.reason.c_str());
        QCOMPARE(ref.stats.count, std::int64_t(1));
        QCOMPARE(ref.stop_reason, std::string("reference_once"));
        QVERIFY(ref.parity.checked && ref.parity.pass);
        QVERIFY(ref.gflops > 0 && ref.stats.median > 1e-3);
        QVERIFY(std::any_of(ref.warnings.begin(), ref.warnings.end(), [](const std::string& w) {
            return w.starts_with("timed once: the reference took");
        }));
    }

    void allVariantsMarksTheResolvedCell() {
        auto s = quick();
        s.ops = {"rms_norm"};
        s.sizes["rms_norm"] = {"4x1024"};
        s.devices = {"cpu"};
        s.all_variants = true;
        s.reference_budget_s = 0.01;
        Profiler p(s, default_backends(), default_devices());
        const auto rows = p.plan();
        QVERIFY(rows.front().is_reference());
        int resolved = 0;
        for (const auto& r : rows)
            if (r.resolved) {
                ++resolved;
                QCOMPARE(r.arch, std::string(cpu_supports_x86_64_v4()   ? "x86-64-v4"
                                             : cpu_supports_x86_64_v3() ? "x86-64-v3"
                                                                        : "generic"));
                QCOMPARE(r.variant, std::string("default"));
            }
        QCOMPARE(resolved, 1);
        QCOMPARE(std::count_if(rows.begin(), rows.end(),
                               [](const RowSpec& r) { return r.is_reference(); }),
                 std::ptrdiff_t(1));
        // Every CPU row carries the threads its cell states (dispatch findings compare them);
        // every built-in CPU cell states them, a plugin's may not (0).
        for (const auto& r : rows) {
            if (r.device_kind != "cpu")
                continue;
            const auto cell = kernels().lookup(kernel_key(r.op, "cpu", r.arch, r.variant));
            QVERIFY(cell);
            QCOMPARE(r.threads, cell->meta.integer_or("threads", 0));
            if (r.backend == "cpu")
                QVERIFY2(r.threads >= 1, r.label().c_str());
        }
    }

    // A clock on every row, or the reason it has none. A device without a clock of its own
    // that runs on the host's cores (an OpenCL CPU device: PoCL) is timed against the host's
    // clock (the dependent-add chain around the row); one that does not (an OpenCL GPU) has
    // none, and the row, its JSON and its CSV say why.
    void everyRowHasAClockOrTheReason() {
        const char* kind = "opencl";
        for (const std::string type : {"CPU", "GPU"}) {
            put_device_flow_cell(kind);
            DeviceRegistry devices;
            devices.add_provider(std::make_shared<test::ClocklessProvider>(kind, type));
            RowSpec spec = spec_for("default");
            spec.device = std::string(kind) + ":0";
            spec.device_kind = kind;
            Profiler p(quick(), default_backends(), devices);
            const auto row = p.run_row(spec);
            QVERIFY2(row.status == RowStatus::Ok, row.reason.c_str());
            const auto clock = row.to_json().at("clock");
            if (type == "CPU") {
                QVERIFY2(row.clock.measured() && row.clock.best_ghz > 0, clock.dump().c_str());
                QVERIFY2(row.clock.method.find("opencl:0 runs on the host CPU") !=
                             std::string::npos,
                         row.clock.method.c_str());
            } else {
                QVERIFY(!row.clock.measured());
                QCOMPARE(clock.at("method").get<std::string>(), std::string("none"));
                QVERIFY2(row.clock.none_reason.find("core OpenCL has no query") !=
                             std::string::npos,
                         row.clock.none_reason.c_str());
                QCOMPARE(ProfileRow::from_json(row.to_json()).clock.none_reason,
                         row.clock.none_reason);
                Report report;
                report.rows = {row};
                const auto csv = report.to_csv();
                QVERIFY2(csv.find("clock_none_reason") != std::string::npos &&
                             csv.find("core OpenCL has no query") != std::string::npos,
                         csv.c_str());
            }
            kernels().erase(kernel_key(kFlowMatchStep, kind, "generic", "default"));
        }
        // A row that took no samples (its worker died) says so rather than leaving the clock
        // out.
        ProfileRow skipped;
        skipped.status = RowStatus::Crashed;
        QVERIFY(skipped.to_json().at("clock").contains("none_reason"));
    }

    // A device that reports its clock per sample (SampleClock, as CUDA does): the samples
    // that ran below the throttle threshold of the best clock are dropped and counted.
    void throttledSamplesAreDropped() {
        put_device_flow_cell("fake");
        DeviceRegistry devices;
        devices.add_provider(std::make_shared<test::FakeProvider>(true));
        RowSpec spec = spec_for("default");
        spec.device = "fake:0";
        spec.device_kind = "fake";
        for (const double threshold : {0.75, 0.0}) {
            auto s = quick();
            s.min_samples = 40;
            s.max_samples = 40;
            s.time_budget_s = 60; // the 40 samples, however long a busy host takes for them
            s.throttle_threshold = threshold;
            Profiler p(s, default_backends(), devices);
            const auto row = p.run_row(spec);
            QVERIFY2(row.status == RowStatus::Ok, row.reason.c_str());
            QCOMPARE(row.clock.method, std::string("fake clock"));
            QCOMPARE(row.clock.best_ghz, 3.0);
            QCOMPARE(row.clock.min_ghz, 1.0);
            if (threshold > 0) {
                QCOMPARE(row.clock.samples_discarded, 10); // every fourth of 40
                QVERIFY(row.clock.throttled);
                QCOMPARE(row.stats.count, std::int64_t(30));
                QCOMPARE(row.stats.max, 1e-3); // the 2 ms samples are gone
                QVERIFY(
                    std::any_of(row.warnings.begin(), row.warnings.end(), [](const std::string& w) {
                        return w.find("throttled: 10 samples") == 0;
                    }));
            } else {
                QCOMPARE(row.clock.samples_discarded, 0);
                QCOMPARE(row.stats.count, std::int64_t(40));
                QCOMPARE(row.stats.max, 2e-3);
            }
        }
        kernels().erase(kernel_key(kFlowMatchStep, "fake", "generic", "default"));
    }

    void allVariantsPlan() {
        auto s = quick();
        s.ops = {"gemm"};
        s.sizes["gemm"] = {"64"};
        s.all_variants = true;
        Profiler p(s, default_backends(), default_devices());
        std::set<std::string> variants;
        for (const auto& r : p.plan())
            if (r.backend == "cpu")
                variants.insert(r.arch + "/" + r.variant);
        QVERIFY(variants.count("generic/reference"));
        QVERIFY(variants.count("generic/default"));
        QVERIFY(variants.count("generic/threaded"));
        QCOMPARE(variants.count("x86-64-v3/default"),
                 std::size_t(cpu_supports_x86_64_v3() ? 1 : 0));
        QCOMPARE(variants.count("x86-64-v4/default"),
                 std::size_t(cpu_supports_x86_64_v4() ? 1 : 0));
    }

    void sizesAndOpsAreValidated_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("size");
        QTest::addColumn<QString>("message");
        QTest::newRow("op typo") << "gem"
                                 << ""
                                 << ""
                                 << "did you mean 'gemm'";
        QTest::newRow("device typo") << "gemm"
                                     << "cpuu"
                                     << ""
                                     << "unknown device 'cpuu'";
        QTest::newRow("bad size") << "gemm"
                                  << ""
                                  << "2x3"
                                  << "invalid size '2x3'";
    }
    void sizesAndOpsAreValidated() {
        QFETCH(QString, op);
        QFETCH(QString, device);
        QFETCH(QString, size);
        QFETCH(QString, message);
        auto s = quick();
        s.ops = {op.toStdString()};
        if (!device.isEmpty())
            s.devices = {device.toStdString()};
        if (!size.isEmpty())
            s.sizes["*"] = {size.toStdString()};
        Profiler p(s, default_backends(), default_devices());
        try {
            p.plan();
            QFAIL("plan() accepted bad settings");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(std::string(e.what()).find(message.toStdString()) != std::string::npos,
                     e.what());
        }
    }

    // `--device broken:0` when the broken runtime could not list its devices: the error
    // quotes what the runtime said, not only "unknown device".
    void unknownDeviceSaysWhyItsRuntimeListedNone() {
        DeviceRegistry devices;
        devices.add_provider(std::make_shared<test::BrokenProvider>("cudaErrorInsufficientDriver"));
        auto s = quick();
        s.ops = {"flow_match_step"};
        s.devices = {"broken:0"};
        Profiler p(s, default_backends(), devices);
        try {
            p.plan();
            QFAIL("plan() accepted a device that is not there");
        } catch (const std::invalid_argument& e) {
            const std::string what = e.what();
            QVERIFY2(what.starts_with("unknown device 'broken:0'"), e.what());
            QVERIFY2(what.ends_with("; the broken backend could not list its devices: "
                                    "cudaErrorInsufficientDriver"),
                     e.what());
        }
    }

    void rowEndToEnd_data() {
        QTest::addColumn<bool>("cold");
        QTest::newRow("warm") << false;
        QTest::newRow("cold") << true;
    }
    void rowEndToEnd() {
        QFETCH(bool, cold);
        auto s = quick();
        s.ops = {"flow_match_step"};
        s.sizes["*"] = {"4099"};
        s.cold = cold;
        s.keep_samples = 4;
        Profiler p(s, default_backends(), default_devices());
        const auto plan = p.plan();
        QCOMPARE(plan.size(), std::size_t(1));
        std::vector<std::string> phases;
        const auto row = p.run_row(
            plan[0], [&](const std::string& phase, std::int64_t) { phases.push_back(phase); });
        QVERIFY(row.status == RowStatus::Ok);
        QCOMPARE(std::string(row.parity.verdict()), std::string("PASS"));
        QVERIFY(row.stats.count >= 1);
        QVERIFY(row.samples.size() <= 4);
        QVERIFY(!row.stop_reason.empty());
        QVERIFY(row.stats.min > 0 && row.stats.min <= row.stats.median &&
                row.stats.median <= row.stats.p90);
        QCOMPARE(row.bytes, 12.0 * 4099);
        QVERIFY(row.gbps > 0);
        QCOMPARE(row.peak_bandwidth_gbs, 20.0);
        // The one fraction a row has is of its level's ceiling (never of the headline peak).
        if (row.ceiling_value > 0)
            QVERIFY(
                std::fabs(row.ceiling_fraction - (row.level == "compute" ? row.gflops : row.gbps) /
                                                     row.ceiling_value) < 1e-9);
        // The effective clock of a CPU row: per sample (cycle counter) or around the row
        // (dependent-add chain), always within what a CPU runs at; its JSON round trips.
        QVERIFY(!row.clock.method.empty());
        QVERIFY2(row.clock.median_ghz > 0.3 && row.clock.median_ghz < 7,
                 std::to_string(row.clock.median_ghz).c_str());
        QVERIFY(row.clock.best_ghz >= row.clock.median_ghz);
        QCOMPARE(row.clock.threshold, s.throttle_threshold);
        QCOMPARE(ProfileRow::from_json(row.to_json()).to_json(), row.to_json());
        if (cold)
            QCOMPARE(row.launches_per_sample, std::int64_t(1));
        QVERIFY(std::find(phases.begin(), phases.end(), "parity") != phases.end());
        QVERIFY(std::find(phases.begin(), phases.end(), "warmup") != phases.end());
    }

    void wrongKernelsNeverPass_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("status");
        QTest::newRow("wrong numbers") << "wrong"
                                       << "fail";
        QTest::newRow("nan") << "nan"
                             << "fail";
        QTest::newRow("unwritten element") << "lazy"
                                           << "fail";
        QTest::newRow("throws") << "throws"
                                << "error";
        QTest::newRow("not registered") << "nosuch"
                                        << "error";
    }
    void wrongKernelsNeverPass() {
        QFETCH(QString, variant);
        QFETCH(QString, status);
        Profiler p(quick(), default_backends(), default_devices());
        const auto row = p.run_row(spec_for(variant.toStdString()));
        QCOMPARE(QString::fromStdString(std::string(to_string(row.status))), status);
        QVERIFY(std::string(row.parity.verdict()) != "PASS");
        QVERIFY(!row.reason.empty());
    }

    // set_parity_once (ab's workers): a row run again keeps its first run's parity, a FAIL
    // included, without its checking launch (nor a warm-up where a launch outlasts it); a kernel
    // that writes past its output on a later run is still caught by the guard zones, which every
    // run reads.
    void parityOnceKeepsTheFirstRunsVerdict() {
        static std::atomic<int> calls{0};
        static std::atomic<bool> overrun{false};
        put_test_kernel("counted", [](const KernelArgs& a) {
            ++calls;
            for (std::int64_t i = 0; i < a.dims[0]; ++i)
                a.out[0][i] = a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
            if (overrun)
                a.out[0][a.dims[0] + 1] = 0; // two elements past `out`
        });
        auto s = quick();
        s.warmup_s = 0;
        s.min_samples = 3;
        s.max_samples = 3;
        s.min_sample_s = 0;
        Profiler p(s, default_backends(), default_devices());
        p.set_parity_once(true);
        auto spec = spec_for("counted");
        const auto first = p.run_row(spec);
        QVERIFY2(first.status == RowStatus::Ok, first.reason.c_str());
        QVERIFY(first.parity.checked && first.parity.pass);
        const int first_calls = calls.exchange(0);
        const auto again = p.run_row(spec);
        QVERIFY2(again.status == RowStatus::Ok, again.reason.c_str());
        QVERIFY(again.parity.checked && again.parity.pass);
        // No checking launch, and no warm-up: its one launch outlasted the 0 s warm-up budget.
        QCOMPARE(calls.exchange(0), first_calls - 2);
        overrun = true;
        const auto wild = p.run_row(spec);
        overrun = false;
        QCOMPARE(wild.status, RowStatus::Fail);
        QVERIFY2(wild.parity.first_failure.find("past `out`") != std::string::npos,
                 wild.parity.first_failure.c_str());
        // A FAIL is kept too; another profiler checks afresh.
        Profiler wrong(s, default_backends(), default_devices());
        wrong.set_parity_once(true);
        QCOMPARE(wrong.run_row(spec_for("wrong")).status, RowStatus::Fail);
        QCOMPARE(wrong.run_row(spec_for("wrong")).status, RowStatus::Fail);
        kernels().erase(kernel_key(kFlowMatchStep, "cpu", "generic", "counted"));
    }

    // Ceilings measured once per machine: a cold run measures and keeps its set, a warm one
    // uses it and says so; --fresh-ceilings, an age limit of 0 and an old set measure.
    void ceilingCacheKeepsASet() {
        QTemporaryDir dir;
        const CeilingCache cache(dir.filePath("cache").toStdString());
        const std::int64_t now = 1'800'000'000;
        const CeilingCachePolicy policy; // the default age limit
        auto cold = cache.choose(policy, now);
        QVERIFY(!cold.peaks);
        QVERIFY(cold.store);
        QCOMPARE(cold.set.value("source", ""), "measured");
        QCOMPARE(cold.set.value("why", ""), "no cached set for this machine");
        const auto peaks = cached_peaks();
        cache.record(cold, peaks, now);
        const std::string file = cache.file_for(CeilingSetOrigin::here());
        QCOMPARE(cold.set.value("stored", ""), file);
        QVERIFY(!cold.store);
        QCOMPARE(cold.set.value("measured_unix", std::int64_t(0)), now);
        QVERIFY(ceiling_set_note(cold.set).find("ceilings measured in this run (no cached set "
                                                "for this machine); kept for the next runs in " +
                                                file) == 0);
        const auto stored = read_json_file(file);
        QCOMPARE(stored.value("format", ""), "switchyard.ceilings");
        QCOMPARE(stored.at("cpu_peaks"), peaks.to_json());
        QCOMPARE(stored.at("origin").value("machine_id", ""), CeilingSetOrigin::here().machine_id);

        const auto warm = cache.choose(policy, now + 3600);
        QVERIFY2(warm.peaks, warm.set.dump().c_str());
        QVERIFY(!warm.store);
        QCOMPARE(warm.peaks->to_json(), peaks.to_json());
        QCOMPARE(warm.set.value("source", ""), "cache");
        QCOMPARE(warm.set.value("file", ""), file);
        QCOMPARE(warm.set.value("id", ""), cold.set.value("id", "?"));
        QCOMPARE(warm.set.value("measured", ""), stored.value("measured", "?"));
        const auto note = ceiling_set_note(warm.set);
        QVERIFY2(note.rfind("ceilings from 20", 0) == 0 &&
                     note.find(", this machine; --fresh-ceilings re-measures") != std::string::npos,
                 note.c_str());

        auto fresh = policy;
        fresh.fresh = true;
        QCOMPARE(cache.choose(fresh, now).set.value("why", ""), "--fresh-ceilings");
        QVERIFY(cache.choose(fresh, now).store);
        auto never = policy;
        never.max_age_days = 0;
        QVERIFY(!cache.choose(never, now).peaks);
        const auto old = cache.choose(policy, now + 8 * 86400);
        QVERIFY(!old.peaks);
        QVERIFY2(old.set.value("why", "").find("8.0 days old, older than the 7.0 days limit") !=
                     std::string::npos,
                 old.set.dump().c_str());
        const auto future = cache.choose(policy, now - 86400);
        QVERIFY(!future.peaks);
        QVERIFY(future.set.value("why", "").find("later than now") != std::string::npos);
    }

    // A device other than the CPU keeps what its prepare() measured (PreparedState) in the
    // same cache, by its identity: the first run measures and keeps it, the next adopts it
    // and probes nothing; another driver, --fresh-ceilings or no cache measure again; a
    // profile run's context names each device's set.
    void deviceCeilingsAreMeasuredOnce() {
        QTemporaryDir dir;
        const CeilingCache cache(dir.filePath("cache").toStdString());
        const CeilingCachePolicy policy;
        switchyard::test::ProbingDevice cold("driver 1.0");
        const auto measured = prepare_device(cold, &cache, policy);
        QCOMPARE(cold.probes(), 1);
        QCOMPARE(measured.value("source", ""), "measured");
        QCOMPARE(measured.value("why", ""), "no cached set for this device");
        const std::string file = measured.value("stored", "");
        QCOMPARE(file, cache.file_for_device(CeilingSetOrigin::here(), "probing | driver 1.0"));
        QVERIFY(QFile::exists(QString::fromStdString(file)));

        switchyard::test::ProbingDevice warm("driver 1.0");
        const auto kept = prepare_device(warm, &cache, policy);
        QCOMPARE(warm.probes(), 0);
        QCOMPARE(kept.value("source", ""), "cache");
        QCOMPARE(kept.value("file", ""), file);
        QCOMPARE(warm.info().peak_bandwidth_gbs, cold.info().peak_bandwidth_gbs);
        QCOMPARE(warm.info().ceilings.size(), cold.info().ceilings.size());
        QCOMPARE(warm.info().ceilings.at(0).value, cold.info().ceilings.at(0).value);
        QVERIFY(ceiling_set_note(kept).rfind("ceilings from 20", 0) == 0);

        switchyard::test::ProbingDevice updated("driver 2.0");
        QCOMPARE(prepare_device(updated, &cache, policy).value("source", ""), "measured");
        QCOMPARE(updated.probes(), 1);
        auto fresh = policy;
        fresh.fresh = true;
        switchyard::test::ProbingDevice again("driver 1.0");
        QCOMPARE(prepare_device(again, &cache, fresh).value("why", ""), "--fresh-ceilings");
        QCOMPARE(again.probes(), 1);
        switchyard::test::ProbingDevice uncached("driver 1.0");
        QCOMPARE(prepare_device(uncached, nullptr, policy).value("why", ""),
                 "no cache of ceilings in use");
        QCOMPARE(uncached.probes(), 1);
        // A device that keeps nothing just prepares, and no set is said for it.
        switchyard::test::FakeDevice plain(0);
        QVERIFY(prepare_device(plain, &cache, policy).is_null());
        // A kept file that is not a set is measured again (never a crash).
        {
            QFile f(QString::fromStdString(file));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write("{\"format\": \"switchyard.device-ceilings\", \"format_version\": 1}");
        }
        switchyard::test::ProbingDevice broken("driver 1.0");
        const auto reread = prepare_device(broken, &cache, policy);
        QVERIFY2(reread.value("why", "").find("could not be read") != std::string::npos,
                 reread.dump().c_str());
        QCOMPARE(broken.probes(), 1);

        // Through a profiler: the run's context names the device's set beside the CPU's.
        DeviceRegistry devices;
        devices.add_provider(std::make_shared<switchyard::test::SingleDeviceProvider>(
            std::make_shared<switchyard::test::ProbingDevice>("driver 1.0")));
        auto settings = quick();
        Profiler profiler(settings, default_backends(), devices);
        profiler.set_ceiling_cache(cache, policy);
        const auto context = run_context(profiler);
        QCOMPARE(context.device_ceiling_sets.size(), std::size_t(1));
        const auto& set = context.device_ceiling_sets.at("probing:0");
        QCOMPARE(set.value("source", ""), "cache");
        const auto j = context.to_json();
        QCOMPARE(j.at("ceiling_set").at("devices").at("probing:0").value("source", ""), "cache");
        QCOMPARE(RunContext::from_json(j).device_ceiling_sets.at("probing:0"), set);
    }

    // A kept set that does not hold is measured again, and the run says why: another
    // machine, core or kernel, or a file that is not a set at all (never a crash).
    void ceilingCacheRefusesWhatDoesNotHold_data() {
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QString>("says");
        QTest::newRow("another machine")
            << "machine"
            << "the cached set was measured on another machine (cpu.microcode (0xdead";
        QTest::newRow("another core")
            << "software"
            << "the cached set was measured by another build of the core (old";
        QTest::newRow("another kernel")
            << "kernel"
            << "the cached set was measured under another kernel (Linux 0.1";
        QTest::newRow("another host") << "host"
                                      << "measured on another host (other-node";
        QTest::newRow("corrupt") << "corrupt"
                                 << "could not be read (line 1, column 3: syntax error";
        QTest::newRow("another format") << "format"
                                        << "could not be read (format: expected";
        QTest::newRow("bad ceilings")
            << "peaks"
            << "could not be read (cpu_peaks.triad_gbs: expected a number";
        QTest::newRow("a folder") << "folder"
                                  << "could not be read (";
    }
    void ceilingCacheRefusesWhatDoesNotHold() {
        QFETCH(QString, edit);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const CeilingCache cache(dir.filePath("cache").toStdString());
        const std::int64_t now = 1'800'000'000;
        auto cold = cache.choose({}, now);
        cache.record(cold, cached_peaks(), now);
        const std::string file = cache.file_for(CeilingSetOrigin::here());
        auto j = read_json_file(file);
        if (edit == "machine") {
            j["origin"]["machine"]["cpu"]["microcode"] = "0xdead";
            j["origin"]["machine_id"] = "0000000000000000";
        } else if (edit == "software") {
            j["origin"]["software"] = "old";
        } else if (edit == "kernel") {
            j["origin"]["kernel"] = "Linux 0.1";
        } else if (edit == "host") {
            j["origin"]["host"] = "other-node";
        } else if (edit == "format") {
            j["format"] = "switchyard.report";
        } else if (edit == "peaks") {
            j["cpu_peaks"]["triad_gbs"] = "fast";
        }
        if (edit == "corrupt") {
            write_text_file(file, "{not json");
        } else if (edit == "folder") {
            QVERIFY(QFile::remove(QString::fromStdString(file)));
            QVERIFY(QDir().mkpath(QString::fromStdString(file)));
        } else {
            write_text_file(file, j.dump());
        }
        const auto again = cache.choose({}, now + 60);
        QVERIFY(!again.peaks);
        QVERIFY(again.store);
        QCOMPARE(again.set.value("source", ""), "measured");
        const auto why = again.set.value("why", "");
        QVERIFY2(why.find(says.toStdString()) != std::string::npos, why.c_str());
        if (edit != "folder") {
            // What the run then measures replaces the set that did not hold.
            auto measured = again;
            cache.record(measured, cached_peaks(), now + 60);
            QCOMPARE(measured.set.value("stored", ""), file);
            QVERIFY(cache.choose({}, now + 120).peaks);
        }
    }

    // A set whose 1-thread ceilings were measured on another CPU than this run asks for.
    void ceilingCacheFollowsTheMeasurementCpu() {
        QTemporaryDir dir;
        const CeilingCache cache(dir.filePath("cache").toStdString());
        auto cold = cache.choose({}, 1000);
        auto peaks = cached_peaks();
        peaks.pinned_cpu = 1 << 19; // no process runs there
        cache.record(cold, peaks, 1000);
        const auto again = cache.choose({}, 1060);
        QVERIFY(!again.peaks);
        QVERIFY2(again.set.value("why", "").find("does not fit this run's CPU") !=
                     std::string::npos,
                 again.set.value("why", "").c_str());
    }

    // The cache's folder as the composition root finds it: SWITCHYARD_CEILINGS_CACHE, "off",
    // else the user's data folder.
    void defaultCeilingCacheFollowsTheEnvironment() {
        const QByteArray saved = qgetenv("SWITCHYARD_CEILINGS_CACHE");
        const QByteArray savedAge = qgetenv("SWITCHYARD_CEILINGS_MAX_AGE");
        qputenv("SWITCHYARD_CEILINGS_CACHE", "off");
        QVERIFY(!default_ceiling_cache());
        qputenv("SWITCHYARD_CEILINGS_CACHE", "/tmp/somewhere/cache");
        QCOMPARE(default_ceiling_cache()->folder(), "/tmp/somewhere/cache");
        qunsetenv("SWITCHYARD_CEILINGS_CACHE");
        const QByteArray xdg = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", "/tmp/xdg-test");
        QCOMPARE(default_ceiling_cache()->folder(), "/tmp/xdg-test/switchyard/ceilings");
        qputenv("XDG_DATA_HOME", xdg);
        qputenv("SWITCHYARD_CEILINGS_CACHE", saved);
        qputenv("SWITCHYARD_CEILINGS_MAX_AGE", "2.5");
        QCOMPARE(default_ceilings_max_age_days(), 2.5);
        qputenv("SWITCHYARD_CEILINGS_MAX_AGE", "soon");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, default_ceilings_max_age_days());
        qunsetenv("SWITCHYARD_CEILINGS_MAX_AGE");
        QCOMPARE(default_ceilings_max_age_days(), kDefaultCeilingsMaxAgeDays);
        if (!savedAge.isEmpty())
            qputenv("SWITCHYARD_CEILINGS_MAX_AGE", savedAge);
    }

    // A paired A/B's slice: its share of the budget and of min_samples (at least one), no
    // early stop, and after the first slice a short warm-up.
    void pairedSliceSettings() {
        ProfileSettings s;
        s.time_budget_s = 0.2;
        s.min_samples = 10;
        s.warmup_s = 0.05;
        const auto first = s.paired_slice_settings(20, true);
        QVERIFY(std::fabs(first.time_budget_s - 0.01) < 1e-12);
        QCOMPARE(first.min_samples, std::int64_t(1));
        QCOMPARE(first.max_noise, 0.0);
        QCOMPARE(first.warmup_s, 0.05);
        const auto later = s.paired_slice_settings(20, false);
        QCOMPARE(later.warmup_s, ProfileSettings::kPairedSliceWarmupS);
        s.min_samples = 100;
        QCOMPARE(s.paired_slice_settings(20, false).min_samples, std::int64_t(5));
    }

    void settingsJsonRoundTrip() {
        auto s = quick();
        s.ops = {"gemm", "rms_norm"};
        s.sizes["gemm"] = {"64", "2x3x4"};
        s.cold = true;
        s.seed = 77;
        const auto t = ProfileSettings::from_json(s.to_json());
        QCOMPARE(t.to_json(), s.to_json());
        auto bad = s.to_json();
        bad["min_samples"] = "ten";
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, ProfileSettings::from_json(bad));
        bad = s.to_json();
        bad["sizes"] = {{"gemm", {1, 2}}};
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, ProfileSettings::from_json(bad));
    }

    void contextDescribesTheMachine() {
        Profiler p(quick(), default_backends(), default_devices());
        const auto typed = run_context(p);
        QCOMPARE(typed.switchyard.version, std::string(core_version()));
        QCOMPARE(typed.host.hostname, host_info().hostname);
        QCOMPARE(typed.cpu.brand, cpu_info().brand);
        QVERIFY(!typed.date.empty());
        QVERIFY(!typed.fingerprint.machine_id.empty());
        QVERIFY(typed.cpu_peaks);
        QCOMPARE(typed.settings.to_json(), quick().to_json());
        // The JSON form has every part docs/json.md lists.
        const auto c = typed.to_json();
        for (const char* key : {"switchyard", "date", "host", "cpu", "cpu_peaks", "clock",
                                "openblas", "devices", "fingerprint", "settings", "warnings"})
            QVERIFY2(c.contains(key), key);
        QVERIFY(c["switchyard"].contains("git_hash"));
        QVERIFY(c["devices"].size() >= 1);
        QCOMPARE(c["devices"][0]["id"].get<std::string>(), std::string("cpu"));
        QVERIFY(c["openblas"].contains("corename"));
        QVERIFY(c["openblas"].contains("threads"));
        // And reads back to the same context.
        QCOMPARE(RunContext::from_json(c).to_json(), c);
    }

    // The level a working set fits in, the thread count of the variant, and the ridge
    // point that makes an op compute-bound.
    void choosesTheRightCeiling() {
        DeviceInfo d;
        auto bw = [&](std::string id, std::string level, double value, int threads,
                      double capacity) {
            Ceiling c;
            c.id = std::move(id);
            c.kind = "bandwidth";
            c.level = std::move(level);
            c.value = value;
            c.threads = threads;
            c.capacity_bytes = capacity;
            d.ceilings.push_back(c);
        };
        bw("dram.triad.1t", "DRAM", 10, 1, 0);
        bw("l1.read.1t", "L1", 400, 1, 32 << 10);
        bw("l1.triad.1t", "L1", 200, 1, 32 << 10);
        bw("l2.triad.1t", "L2", 100, 1, 512 << 10);
        bw("l2.triad.all", "L2", 180, 0, 1 << 20);
        bw("dram.triad.all", "DRAM", 20, 0, 0);
        Ceiling fma;
        fma.id = "fma.fp32.1t";
        fma.kind = "compute";
        fma.value = 50;
        fma.threads = 1;
        d.ceilings.push_back(fma);

        auto c = choose_ceiling(d, 16 << 10, 0, false);
        QVERIFY(c.ceiling);
        QCOMPARE(c.ceiling->id, std::string("l1.read.1t")); // the level's best
        QCOMPARE(c.level, std::string("L1"));
        c = choose_ceiling(d, 300 << 10, 0, false);
        QCOMPARE(c.ceiling->id, std::string("l2.triad.1t"));
        c = choose_ceiling(d, (512 << 10) + 64, 0, false); // just past L2: still L2
        QCOMPARE(c.ceiling->id, std::string("l2.triad.1t"));
        c = choose_ceiling(d, 2 << 20, 0, false); // well past L2 (no L3 here): DRAM
        QCOMPARE(c.ceiling->id, std::string("dram.triad.1t"));
        c = choose_ceiling(d, 900 << 10, 0, true); // 2 cores' L2 hold it
        QCOMPARE(c.ceiling->id, std::string("l2.triad.all"));
        c = choose_ceiling(d, 64 << 20, 0, false);
        QCOMPARE(c.ceiling->id, std::string("dram.triad.1t"));
        QCOMPARE(c.level, std::string("DRAM"));
        // 2 flops per byte, under memory's ridge 50/10 = 5 flop/byte: memory-bound, in
        // L1 too (an in-cache elementwise op is judged on bandwidth) ...
        c = choose_ceiling(d, 64 << 20, 2.0 * (64 << 20), false);
        QCOMPARE(c.ceiling->id, std::string("dram.triad.1t"));
        QCOMPARE(c.intensity, 2.0);
        c = choose_ceiling(d, 16 << 10, 2.0 * (16 << 10), false);
        QCOMPARE(c.ceiling->id, std::string("l1.read.1t"));
        // ... and 100 flops per byte is compute-bound.
        c = choose_ceiling(d, 64 << 20, 100.0 * (64 << 20), false);
        QCOMPARE(c.ceiling->id, std::string("fma.fp32.1t"));
        QCOMPARE(c.level, std::string("compute"));
        // A TF32 cell (cuBLAS on tensor cores) is never judged against FP32 lanes: with no
        // TF32 ceiling it is compute-bound and not judged (before: 551 % of fma.fp32.all on
        // the H200) ...
        c = choose_ceiling(d, 64 << 20, 100.0 * (64 << 20), false, 0, "tf32");
        QVERIFY(!c.ceiling);
        QCOMPARE(c.level, std::string("compute"));
        // ... and with one, that bounds it, and only it.
        Ceiling tensor = fma;
        tensor.id = "theoretical.tensor.tf32";
        tensor.value = 400;
        d.ceilings.push_back(tensor);
        c = choose_ceiling(d, 64 << 20, 100.0 * (64 << 20), false, 0, "tf32");
        QCOMPARE(c.ceiling->id, std::string("theoretical.tensor.tf32"));
        c = choose_ceiling(d, 64 << 20, 100.0 * (64 << 20), false);
        QCOMPARE(c.ceiling->id, std::string("fma.fp32.1t"));
        d.ceilings.pop_back();
        // No all-thread compute ceiling: an all-thread row stays on bandwidth.
        c = choose_ceiling(d, 64 << 20, 100.0 * (64 << 20), true);
        QCOMPARE(c.ceiling->id, std::string("dram.triad.all"));
        // A device without ceilings judges nothing.
        QVERIFY(!choose_ceiling(DeviceInfo{}, 1024, 0, true).ceiling);

        // An OpenCL-like device: a memory copy ceiling and a stated 32 MiB cache without a
        // ceiling of its own. Rows in that cache are not judged against memory ...
        DeviceInfo ocl;
        ocl.properties = {{"global_memory_cache_bytes", 32 << 20}};
        Ceiling copy;
        copy.id = "device.copy";
        copy.kind = "bandwidth";
        copy.level = "device";
        copy.value = 10;
        copy.threads = 0;
        ocl.ceilings.push_back(copy);
        c = choose_ceiling(ocl, 512 << 10, 0, true);
        QVERIFY(!c.ceiling);
        QCOMPARE(c.level, std::string("cache"));
        c = choose_ceiling(ocl, 40 << 20, 0, true); // within kLevelSlack of the cache
        QVERIFY(!c.ceiling);
        // ... rows past it are.
        c = choose_ceiling(ocl, 128 << 20, 0, true);
        QVERIFY(c.ceiling);
        QCOMPARE(c.ceiling->id, std::string("device.copy"));
        // Without a stated cache every row is judged against memory, as before.
        ocl.properties = Value::object();
        QVERIFY(choose_ceiling(ocl, 512 << 10, 0, true).ceiling);
    }

    // Each row is bounded by the ceilings of the access patterns its reads' share reaches:
    // a copy-like row (rms_norm, half its bytes read) by the level's copy, below the triad
    // that bounds a triad-like row (flow_match_step) and the read that bounds a row that
    // mostly reads; a level without such a pattern keeps its best; measured before
    // theoretical whatever the pattern.
    void choosesTheCeilingOfTheRowsAccessPattern() {
        DeviceInfo d;
        auto add = [&](std::string id, std::string level, double value, double capacity,
                       bool measured = true) {
            Ceiling c;
            c.id = std::move(id);
            c.kind = "bandwidth";
            c.level = std::move(level);
            c.value = value;
            c.threads = 1;
            c.capacity_bytes = capacity;
            c.measured = measured;
            d.ceilings.push_back(c);
        };
        add("l1.read.1t", "L1", 300, 32 << 10);
        add("l1.triad.1t", "L1", 400, 32 << 10);
        add("dram.read.1t", "DRAM", 44, 0);
        add("dram.triad.1t", "DRAM", 54, 0);
        add("dram.copy.1t", "DRAM", 46, 0);
        auto id = [&](double ws, double share) {
            const auto c = choose_ceiling(d, ws, 0, false, 0, "fp32", share);
            return c.ceiling ? c.ceiling->id : std::string("none");
        };
        const double dram = 256 << 20, l1 = 16 << 10;
        const auto& rms = *find_op(kRmsNorm);
        const auto& fm = *find_op(kFlowMatchStep);
        const auto& sde = *find_op(kFlowSdeStep);
        QCOMPARE(read_share(rms, {4096, 4096, 0}),
                 (4096.0 * 4096 + 4096) / (2 * 4096.0 * 4096 + 4096));
        QCOMPARE(read_share(fm, {1000, 0, 0}), 2.0 / 3.0);
        QCOMPARE(read_share(sde, {10, 100, 0}), 3000.0 / (3000.0 + 1000 + 10));
        QCOMPARE(read_share(*find_op(kGemm), {2, 3, 4}), (8.0 + 12 + 6) / (8.0 + 12 + 6 + 6));
        QCOMPARE(id(dram, read_share(rms, {4096, 4096, 0})), std::string("dram.copy.1t"));
        QCOMPARE(id(dram, read_share(fm, {1 << 26, 0, 0})), std::string("dram.triad.1t"));
        QCOMPARE(id(dram, read_share(sde, {4096, 4096, 0})), std::string("dram.triad.1t"));
        QCOMPARE(id(dram, 1.0), std::string("dram.triad.1t")); // the best of all three
        QCOMPARE(id(dram, 0), std::string("dram.triad.1t"));   // share unknown: the best
        // The copy is the higher one here: a triad-like row is bounded by it too.
        d.ceilings.back().value = 60;
        QCOMPARE(id(dram, 2.0 / 3.0), std::string("dram.copy.1t"));
        QCOMPARE(id(dram, 0.5), std::string("dram.copy.1t"));
        // L1 has no copy: a copy-like row gets the level's best.
        QCOMPARE(id(l1, 0.5), std::string("l1.triad.1t"));
        QCOMPARE(id(l1, 2.0 / 3.0), std::string("l1.triad.1t"));
        // A device's own memory with a measured triad and a theoretical figure: the measured
        // one, though the row reaches only the theoretical's (unstated) pattern.
        d.ceilings.clear();
        add("hbm.triad", "HBM", 4300, 0);
        add("theoretical.hbm", "HBM", 4800, 0, false);
        QCOMPARE(id(dram, 0.5), std::string("hbm.triad"));
        add("hbm.copy", "HBM", 4100, 0);
        QCOMPARE(id(dram, 0.5), std::string("hbm.copy"));
        QCOMPARE(id(dram, 2.0 / 3.0), std::string("hbm.triad"));
    }

    // A row faster than its ceiling is flagged: with a ceiling 1000x too low every row
    // reads far above 100 % and says so.
    void rowAboveItsCeilingIsWarned() {
        CpuPeaks low{0.001, 64 << 20, 0.001};
        for (const auto& lv : cpu_probe_levels()) {
            Ceiling c;
            c.id = "fake." + lv.level;
            c.kind = "bandwidth";
            c.level = lv.level;
            c.value = 0.001;
            c.threads = 1;
            c.capacity_bytes = double(lv.capacity);
            c.method = "a ceiling set far too low by the test";
            low.ceilings.push_back(c);
        }
        use_peaks(low);
        auto s = quick();
        s.ops = {"flow_match_step"};
        s.sizes["*"] = {"4099"};
        Profiler p(s, default_backends(), default_devices());
        const auto row = p.run_row(p.plan().at(0));
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
        QVERIFY(row.status == RowStatus::Ok);
        QVERIFY(row.ceiling_id.rfind("fake.", 0) == 0);
        QVERIFY(row.ceiling_fraction > kCeilingTolerance);
        bool warned = false;
        for (const auto& w : row.warnings)
            warned = warned || w.find("above the 110 % tolerance") != std::string::npos;
        QVERIFY2(warned, "no warning on a row above its ceiling");
    }

    // Ceilings understated by a disturbed probe (here: a tenth of the measured ones) are
    // measured again when a CPU row reads above them; the row is judged against the higher
    // values and says what happened. The probes take seconds (tens on a loaded machine), so
    // they beat as the row's progress: a worker's controller kills a row that goes 10 s
    // without one (under ctest -j2 one was killed so, in "warmup", its last phase).
    void understatedCeilingsAreMeasuredAgain() {
        CpuPeaks low = measure_cpu_peaks();
        for (auto& c : low.ceilings)
            c.value *= 0.1;
        use_peaks(low);
        auto s = quick();
        s.ops = {"flow_match_step"};
        s.sizes["*"] = {"4099"};
        Profiler p(s, default_backends(), default_devices());
        std::vector<std::string> phases;
        const auto row = p.run_row(p.plan().at(0), [&](const std::string& phase, std::int64_t) {
            phases.push_back(phase);
        });
        QVERIFY(row.status == RowStatus::Ok);
        // A beat per probe step, each naming it ("... CPU ceilings, DRAM triad, 1 thread"):
        // at least the cache levels' read and triad and the compute peak, whatever the core
        // count, the memory (DRAM may be skipped) or a sanitizer (one round).
        const auto beats = std::count_if(phases.begin(), phases.end(), [](const std::string& ph) {
            return ph.rfind("re-measuring the CPU ceilings: ", 0) == 0;
        });
        QVERIFY2(beats >= 4, std::to_string(beats).c_str());
        const auto* first = low.find(row.ceiling_id);
        QVERIFY2(first, row.ceiling_id.c_str());
        // A fresh probe is far above a tenth of the first one, even on a busy machine.
        QVERIFY2(
            row.ceiling_value > 3 * first->value,
            (std::to_string(row.ceiling_value) + " vs " + std::to_string(first->value)).c_str());
        bool said = false;
        for (const auto& w : row.warnings)
            said = said || w.find("measured again") != std::string::npos;
        QVERIFY2(said, "the row does not say its ceilings were measured again");
        const auto in_use = peaks_in_use();
        const auto* now = in_use.find(row.ceiling_id);
        QVERIFY(now && now->value == row.ceiling_value);
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
    }

    // Each measured ceiling records its probe's spread ((best - median) / best of its
    // timings, what compare's threshold goes by), and the spread survives the JSON.
    void probesRecordTheirSpread() {
        const auto peaks = measure_cpu_peaks();
        int measured = 0;
        for (const auto& c : peaks.ceilings) {
            if (!(c.value > 0))
                continue;
            ++measured;
            const auto it = peaks.spread.find(c.id);
            QVERIFY2(it != peaks.spread.end(), c.id.c_str());
            QVERIFY2(it->second >= 0 && it->second < 1, c.id.c_str());
        }
        QVERIFY(measured >= 2);
        const auto back = CpuPeaks::from_json(peaks.to_json());
        QVERIFY(back.spread == peaks.spread);
        auto bad = peaks.to_json();
        bad["spread"]["l1.read.1t"] = "wide";
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, CpuPeaks::from_json(bad));
    }

    // The issue-9 check: every CPU variant at small sizes (L1, L2 and a few MiB), judged
    // against the ceilings measured now, stays within kCeilingTolerance of its ceiling.
    // A row judged against a measured CPU DRAM ceiling has that ceiling's probe timed beside
    // it, before and after its samples; a row in a cache has none. Synthetic ceilings (an
    // L1 of 64 KiB, DRAM probes over 8 MiB), so the levels do not depend on this CPU.
    void dramRowsTimeTheirCeilingsProbeBeside() {
        CpuPeaks peaks{20.0, 8 << 20, 100.0};
        auto add = [&](const std::string& id, const std::string& level, double value,
                       bool measured = true) {
            Ceiling c;
            c.id = id;
            c.kind = "bandwidth";
            c.level = level;
            c.threads = id.size() > 3 && id.substr(id.size() - 3) == ".1t" ? 1 : 0;
            c.measured = measured;
            c.value = value;
            c.working_set_bytes = level == "DRAM" ? double(8 << 20) : double(48 << 10);
            c.capacity_bytes = level == "DRAM" ? 0.0 : double(64 << 10);
            c.method = "test";
            peaks.ceilings.push_back(c);
        };
        for (const std::string t : {"1t", "all"}) {
            add("l1.read." + t, "L1", 400);
            add("l1.triad." + t, "L1", 300);
            add("dram.read." + t, "DRAM", 40);
            add("dram.triad." + t, "DRAM", 30);
            add("dram.copy." + t, "DRAM", 25);
        }
        use_peaks(peaks);

        // The probe on its own: timings of each DRAM ceiling's pattern; nothing for the ids
        // of other levels, of no pattern, or of a ceiling that was not measured.
        for (const char* id : {"dram.copy.1t", "dram.triad.all", "dram.read.1t"}) {
            const auto t = CpuMemoryProbe(id, peaks).time(3);
            QVERIFY2(t.size() == 3, id);
            for (double g : t)
                QVERIFY2(g > 0 && std::isfinite(g), id);
        }
        for (const char* id : {"l1.read.1t", "dram.copy", "dram.fma.1t", "dram.copy.2t", ""})
            QVERIFY2(CpuMemoryProbe(id, peaks).time(3).empty(), id);
        QVERIFY(CpuMemoryProbe("dram.copy.1t", peaks).time(0).empty());

        auto s = quick();
        s.ops = {"rms_norm"};
        s.devices = {"cpu"};
        s.sizes["*"] = {"2x1024", "64x4096"}; // 16 KiB: L1; 2 MiB: DRAM here
        Profiler p(s, default_backends(), default_devices());
        int dram_rows = 0;
        for (const auto& spec : p.plan()) {
            std::vector<std::string> phases;
            const auto row = p.run_row(
                spec, [&](const std::string& phase, std::int64_t) { phases.push_back(phase); });
            QVERIFY2(row.status == RowStatus::Ok, (spec.label() + ": " + row.reason).c_str());
            const bool memory_phase =
                std::find(phases.begin(), phases.end(), "memory") != phases.end();
            if (row.level != "DRAM") {
                QCOMPARE(row.level, std::string("L1"));
                QVERIFY(!row.memory.measured() && !memory_phase);
                QVERIFY(!row.to_json().contains("memory"));
                QCOMPARE(memory_share(row), 0.0);
                QVERIFY(memory_text(row).empty());
                continue;
            }
            ++dram_rows;
            // rms_norm reads one float for each it writes: the copy is its pattern.
            QVERIFY2(row.ceiling_id.rfind("dram.copy.", 0) == 0, row.ceiling_id.c_str());
            QCOMPARE(row.memory.probe, row.ceiling_id);
            // Before and after the samples: 4 windows each (1 under a sanitizer), less any
            // window a preemption disturbed when 3 or more of a side's were not (run_probe
            // keeps a form's undisturbed timings then; a busy CI host dropped one of 8).
            if (kSanitized)
                QCOMPARE(row.memory.windows, std::int64_t(2));
            else
                QVERIFY2(row.memory.windows >= 6 && row.memory.windows <= 8,
                         std::to_string(row.memory.windows).c_str());
            QVERIFY(row.memory.median_gbs > 0 && memory_phase);
            QCOMPARE(memory_share(row), row.memory.median_gbs / row.ceiling_value);
            QCOMPARE(memory_busy(row), memory_share(row) < kMemoryBusyShare);
            const auto text = memory_text(row);
            QVERIFY2(text.find("the " + row.ceiling_id + " probe moved") != std::string::npos,
                     text.c_str());
            QCOMPARE(text.find("busy") != std::string::npos, memory_busy(row));
            const auto back = ProfileRow::from_json(row.to_json());
            QCOMPARE(back.memory.probe, row.memory.probe);
            QCOMPARE(back.memory.median_gbs, row.memory.median_gbs);
            QCOMPARE(back.memory.windows, row.memory.windows);
        }
        QCOMPARE(dram_rows, 1);
        // Ceilings that were not measured (too little memory for a DRAM set) time nothing.
        for (auto& c : peaks.ceilings)
            if (c.level == "DRAM")
                c.value = 0;
        QVERIFY(CpuMemoryProbe("dram.copy.1t", peaks).time(3).empty());
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
    }

    // A 1-thread CPU row runs on the CPU its 1-thread ceilings were measured on
    // (CpuPeaks::pinned_cpu, one_thread_cpu()) from its first launch to its last, and the
    // thread gets its own mask back after; a threaded row is not narrowed to one CPU. The
    // ceilings here say the last CPU this process may run on, whichever the process would
    // pick itself, and the rows follow them (on a 1-CPU machine it is the one CPU).
    void oneThreadRowsRunOnTheirCeilingsCpu() {
        const auto mask_now = [] {
            cpu_set_t set;
            CPU_ZERO(&set);
            pthread_getaffinity_np(pthread_self(), sizeof set, &set);
            return set;
        };
        const cpu_set_t before = mask_now();
        std::vector<int> allowed;
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &before))
                allowed.push_back(c);
        QVERIFY(!allowed.empty());
        if (std::getenv("SWITCHYARD_PIN_CPU"))
            QSKIP("SWITCHYARD_PIN_CPU is set: the CPU chosen is the environment's");
        if (pthread_setaffinity_np(pthread_self(), sizeof before, &before) != 0)
            QSKIP("this process may not set its threads' CPUs (sched_setaffinity refused, "
                  "a seccomp policy): nothing can be pinned here");

        // What the launches saw: the CPU each ran on and the CPUs its thread might run on.
        static std::mutex seen_mutex;
        static std::set<int> seen_cpus;
        static std::set<int> seen_mask_sizes;
        auto spy = [](const KernelArgs& a) {
            cpu_set_t set;
            CPU_ZERO(&set);
            pthread_getaffinity_np(pthread_self(), sizeof set, &set);
            {
                std::lock_guard lock(seen_mutex);
                seen_cpus.insert(sched_getcpu());
                seen_mask_sizes.insert(CPU_COUNT(&set));
            }
            for (std::int64_t i = 0; i < a.dims[0]; ++i)
                a.out[0][i] = a.in[0][i] + float(a.scalars[0]) * a.in[1][i];
        };
        put_test_kernel("cpuspy", spy);
        put_test_kernel("threaded_cpuspy", spy);

        CpuPeaks peaks{20.0, 64 << 20, 100.0};
        peaks.pinned_cpu = allowed.back();
        use_peaks(peaks);
        QCOMPARE(one_thread_cpu(peaks.pinned_cpu), allowed.back());

        Profiler p(quick(), default_backends(), default_devices());
        const auto row = p.run_row(spec_for("cpuspy"));
        QVERIFY2(row.status == RowStatus::Ok, row.reason.c_str());
        QCOMPARE(row.pinned_cpu, allowed.back());
        QVERIFY(seen_cpus == std::set<int>{allowed.back()});
        QVERIFY(seen_mask_sizes == std::set<int>{1});
        const cpu_set_t after = mask_now();
        QVERIFY(CPU_EQUAL(&before, &after)); // the thread's own mask back
        QCOMPARE(ProfileRow::from_json(row.to_json()).pinned_cpu, allowed.back());

        seen_cpus.clear();
        seen_mask_sizes.clear();
        const auto threaded = p.run_row(spec_for("threaded_cpuspy"));
        QVERIFY2(threaded.status == RowStatus::Ok, threaded.reason.c_str());
        QCOMPARE(threaded.pinned_cpu, -1);
        QVERIFY(!threaded.to_json().contains("pinned_cpu"));
        QVERIFY(seen_mask_sizes == std::set<int>{int(allowed.size())});

        // Ceilings without a CPU (older reports) or with one this process may not run on:
        // the process's own choice, one it may run on, the same on every ask.
        const int own = one_thread_cpu(-1);
        QVERIFY(std::find(allowed.begin(), allowed.end(), own) != allowed.end());
        QCOMPARE(one_thread_cpu(allowed.back() + 4096), own);

        // The figures carry the CPU through JSON; a bad one is refused by name.
        peaks.pinned_cpu = allowed.back();
        QCOMPARE(CpuPeaks::from_json(peaks.to_json()).pinned_cpu, allowed.back());
        peaks.pinned_cpu = -1;
        QVERIFY(!peaks.to_json().contains("pinned_cpu"));
        for (const auto& bad : {nlohmann::json(-1), nlohmann::json(1.5), nlohmann::json("0")}) {
            auto j = peaks.to_json();
            j["pinned_cpu"] = bad;
            try {
                (void)CpuPeaks::from_json(j);
                QFAIL(("pinned_cpu " + bad.dump() + " was accepted").c_str());
            } catch (const std::runtime_error& e) {
                QVERIFY2(std::string(e.what()).find("peaks.pinned_cpu") != std::string::npos,
                         e.what());
            }
        }
        kernels().erase(kernel_key(kFlowMatchStep, "cpu", "generic", "cpuspy"));
        kernels().erase(kernel_key(kFlowMatchStep, "cpu", "generic", "threaded_cpuspy"));
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
    }

    void noCpuRowAboveItsCeiling() {
        const auto measured = measure_cpu_peaks();
        // The 1-thread probes ran on one CPU this process may run on (unless
        // SWITCHYARD_PIN_CPU=off), the one rows go to, and the 1-thread ceilings' methods say
        // which.
        int pinned = -1;
        cpu_set_t set;
        CPU_ZERO(&set);
        // Where the process may not set its threads' CPUs (a seccomp policy that refuses
        // sched_setaffinity) nothing is pinned: the ceilings are still checked below.
        const bool may_pin = pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 &&
                             pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
        if (!may_pin)
            qInfo("this process may not set its threads' CPUs: the pinning is not checked");
        if (!std::getenv("SWITCHYARD_PIN_CPU") && may_pin) {
            sched_getaffinity(0, sizeof set, &set);
            pinned = measured.pinned_cpu;
            QVERIFY2(pinned >= 0 && pinned < CPU_SETSIZE && CPU_ISSET(pinned, &set),
                     std::to_string(pinned).c_str());
            QCOMPARE(one_thread_cpu(-1), pinned); // the process's own choice
            int one_thread = 0;
            for (const auto& c : measured.ceilings)
                if (c.id.size() > 3 && c.id.substr(c.id.size() - 3) == ".1t") {
                    ++one_thread;
                    QVERIFY2(c.method.find("1 thread on CPU " + std::to_string(pinned)) !=
                                 std::string::npos,
                             (c.id + ": " + c.method).c_str());
                }
            QVERIFY(one_thread >= 2); // at least a cache level's and the FMA peak
        }
        use_peaks(measured);
        auto s = quick();
        s.all_variants = true;
        s.devices = {"cpu"};
        s.time_budget_s = 0.05;
        s.sizes["flow_match_step"] = {"2K", "32K", "512K"};
        s.sizes["flow_sde_step"] = {"2x1024", "16x2048", "64x8192"};
        s.sizes["rms_norm"] = {"2x1024", "16x4096", "64x16384"};
        s.sizes["gemm"] = {"32", "96", "192"};
        Profiler p(s, default_backends(), default_devices());
        int judged = 0;
        for (const auto& spec : p.plan()) {
            if (spec.variant == "reference" || spec.backend == "test")
                continue; // the reference is far below every ceiling; test cells are wrong
            auto row = p.run_row(spec);
            // The probes and the row are timed moments apart on a machine that may be shared
            // (CI runs suites in parallel): a probe slowed by a neighbour understates its
            // ceiling. An exceedance is confirmed with fresh probes and a fresh row (twice)
            // before it counts; a tool that is wrong stays above on every try.
            // Under a sanitizer every load of the probes and of the kernels is instrumented
            // (the probes run short there, util/sanitizer.h): their ratio says nothing about
            // the tool, so the rows are checked for a ceiling but not against it.
            for (int retry = 0; !kSanitized && retry < 2 && row.measured() &&
                                row.ceiling_fraction > kCeilingTolerance;
                 ++retry) {
                // The higher of each ceiling's values is kept, as the profiler's own
                // re-probe keeps them: a fresh probe a neighbour slowed must not lower one.
                auto raised = peaks_in_use();
                const auto fresh = measure_cpu_peaks(raised.pinned_cpu);
                for (auto& c : raised.ceilings)
                    if (const auto* f = fresh.find(c.id); f && f->value > c.value)
                        c.value = f->value;
                use_peaks(raised);
                Profiler again(s, default_backends(), default_devices());
                row = again.run_row(spec);
            }
            QVERIFY2(row.measured(), (spec.label() + ": " + row.reason).c_str());
            // A 1-thread row ran on the ceilings' CPU, a threaded one on none in particular.
            if (pinned >= 0)
                QCOMPARE(row.pinned_cpu,
                         row.ceiling_id.find(".1t") != std::string::npos ? pinned : -1);
            // OpenBLAS picks its kernels itself: under a SWITCHYARD_MAX_ISA cap below them
            // (CI's capped suites: its Haswell or SkylakeX core under x86-64-v2) the capped
            // ceilings do not bound it, and its rows say so instead of reading 130-150 %.
            const bool blas_above_cap =
                spec.variant == "openblas" && !cpu_isa_cap().level.empty() &&
                !openblas_core_level(openblas_info().corename).empty() &&
                !cpu_supports(openblas_core_level(openblas_info().corename));
            const bool unjudged =
                std::any_of(row.warnings.begin(), row.warnings.end(), [](const std::string& w) {
                    return w.rfind("not judged: this cell runs", 0) == 0;
                });
            QCOMPARE(unjudged, blas_above_cap);
            if (blas_above_cap) {
                QVERIFY2(row.ceiling_id.empty() && row.ceiling_fraction == 0, spec.label().c_str());
                continue;
            }
            QVERIFY2(!row.ceiling_id.empty(), spec.label().c_str());
            QVERIFY(!row.level.empty() && row.ceiling_value > 0 && row.intensity > 0);
            const std::string what = spec.label() + " [" + spec.backend +
                                     "]: " + std::to_string(row.ceiling_fraction) + " of " +
                                     row.ceiling_id + " (" + row.level + ")";
            QVERIFY2(kSanitized || row.ceiling_fraction <= kCeilingTolerance, what.c_str());
            ++judged;
        }
        use_peaks(CpuPeaks{20.0, 64 << 20, 100.0});
        // Every op has generic default and threaded cells, and both again per SIMD level the
        // (capped) detection allows.
        const int cells =
            2 + (cpu_supports_x86_64_v3() ? 2 : 0) + (cpu_supports_x86_64_v4() ? 2 : 0);
        QVERIFY2(judged >= 4 * 3 * cells, std::to_string(judged).c_str());
    }
};

QTEST_GUILESS_MAIN(TestProfiler)
#include "tst_profiler.moc"
