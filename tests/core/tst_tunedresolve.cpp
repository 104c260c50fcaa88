// SPDX-License-Identifier: MIT
// The SDK's tuned resolution (sdk/tunedresolve.h) as an application that embeds the registry
// calls it: the process-wide registry with the tuning fixture plugin (a slow preferred cell)
// and the profiling fixture (a wrong kernel), a tuning file written for this machine.
#include <QtTest>

#include <QTemporaryDir>

#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/parity.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/codeidentity.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/tunedresolve.h>
#include <switchyard/tuning/tuning.h>

using namespace switchyard;

namespace {

const std::string kFixtures = SWITCHYARD_FIXTURE_DIR;

TunedCell tuned_cell(const std::string& arch, const std::string& variant) {
    auto& backends = default_backends();
    const auto cell =
        backends.kernel_registry().lookup(kernel_key("flow_match_step", "cpu", arch, variant));
    if (!cell)
        return {};
    return {arch + "/" + variant, code_identity(backends, *cell)};
}

// A tuning of this machine: flow_match_step, variant tunable, any size up to 1M elements:
// `chosen` instead of the chain's x86-64-v2/tunable.
Tuning tuning_choosing(const TunedCell& chosen) {
    Tuning t;
    t.machine = machine_fingerprint()["machine"];
    t.machine_id = fingerprint_id(t.machine);
    TuningEntry e;
    e.op = "flow_match_step";
    e.device = "cpu";
    e.variant = "tunable";
    e.sizes = {"1", "1048576"};
    e.min_work = 1;
    e.max_work = 1 << 20;
    e.chosen = chosen;
    e.overrides = tuned_cell("x86-64-v2", "tunable");
    e.evidence = {{"1048576", 1e-4, 1e-3, 10, 0.001, 0.05, 3}};
    t.entries.push_back(e);
    return t;
}

TunedResolveRequest request(const std::string& file) {
    TunedResolveRequest r;
    r.op = "flow_match_step";
    r.variant = "tunable";
    r.dims = {8192, 0, 0};
    r.tuning_files = {file};
    return r;
}

} // namespace

class TestTunedResolve : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        default_backends().set_plugin_discovery(
            PluginSearchPath::from_dirs({kFixtures + "/tuning", kFixtures + "/profiling"})
                .discovery());
        default_backends().ensure_initialized();
        if (tuned_cell("generic", "tunable").cell.empty())
            QSKIP("the tuning fixture plugin is not built");
        // The fixture's slow cell sits on the x86-64-v2 rung; other ladders never reach it.
        if (host_cpu_arch().rfind("x86-64", 0) != 0)
            QSKIP("the fixture's chain is an x86-64 one");
    }

    // An entry that applies: the chosen cell, loaded and runnable, with the explanation.
    void resolvesWithATuning() {
        const std::string file = m_dir.filePath("good.tuning").toStdString();
        tuning_choosing(tuned_cell("generic", "tunable")).save(file);
        const auto r = resolve_tuned(request(file));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.tuned);
        QCOMPARE(r.cell_name, std::string("generic/tunable"));
        QVERIFY(r.cell && r.cell->is_loaded());
        QVERIFY2(r.explanation.find("tuned -> generic/tunable") == 0, r.explanation.c_str());
        // The cell runs, and is right.
        const Workload w(*find_op("flow_match_step"), {1024, 0, 0});
        auto out = w.make_outputs();
        r.cell->fn(w.args(out));
        QVERIFY(check_parity(*find_op("flow_match_step"), {1024, 0, 0}, out, w.reference()).pass);

        auto chain = request(file);
        chain.use_tuning = false;
        const auto c = resolve_tuned(chain);
        QVERIFY(!c.tuned);
        QCOMPARE(c.cell_name, std::string("x86-64-v2/tunable"));
        // Outside the entry's sizes: the chain, and why.
        auto big = request(file);
        big.dims = {1 << 24, 0, 0};
        const auto b = resolve_tuned(big);
        QCOMPARE(b.cell_name, std::string("x86-64-v2/tunable"));
        QCOMPARE(b.ignored.size(), std::size_t(1));
    }

    // A chosen cell that fails parity when first used is dropped, in this process, with why.
    void wrongChoiceIsDroppedOnFirstUse() {
        const std::string file = m_dir.filePath("wrong.tuning").toStdString();
        const auto wrong = tuned_cell("generic", "wrong"); // fixture-profiling's sign error
        QVERIFY(!wrong.cell.empty());
        tuning_choosing(wrong).save(file);
        for (int use = 0; use < 2; ++use) {
            const auto r = resolve_tuned(request(file));
            QVERIFY(!r.tuned);
            QCOMPARE(r.cell_name, std::string("x86-64-v2/tunable"));
            QCOMPARE(r.ignored.size(), std::size_t(1));
            QVERIFY2(r.ignored[0].find("failed its parity check when first used") !=
                         std::string::npos,
                     r.ignored[0].c_str());
        }
    }

    void refusesWhatItCannotAnswer() {
        auto r = request(m_dir.filePath("none.tuning").toStdString());
        r.version = kTunedResolveVersion + 1;
        QVERIFY(resolve_tuned(r).error.find("revision") != std::string::npos);
        r.version = kTunedResolveVersion;
        r.op = "no_such_op";
        QVERIFY(resolve_tuned(r).error.find("unknown op") != std::string::npos);
        r.op = "flow_match_step";
        r.device = "quantum";
        QVERIFY(!resolve_tuned(r).error.empty());
    }
};

QTEST_GUILESS_MAIN(TestTunedResolve)
#include "tst_tunedresolve.moc"
