// SPDX-License-Identifier: MIT
// The fleet's tuning (fleet/fleettuning.h): machine classes, the entries all nodes of a class
// agree on, what is dropped and why, nodes without dispatch findings, the files written and the
// regret map. The reports are built in memory (tests/support/tuningreports.h): every verdict
// follows from their numbers, not from this machine.

#include <switchyard/fleet/fleettuning.h>
#include <switchyard/tuning/tuning.h>

#include <support/tuningreports.h>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

using namespace switchyard;
using namespace switchyard::fleet;
using switchyard::testing::plain_report;
using switchyard::testing::SizeTiming;
using switchyard::testing::tuning_report;

using Strings = std::vector<std::string>;

namespace {

const std::string kMachineA = "0123456789abcdef";
const std::string kMachineB = "fedcba9876543210";

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
    return std::any_of(notes.begin(), notes.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& notes) {
    std::string out;
    for (const auto& n : notes)
        out += n + "\n";
    return out;
}

bool near(double a, double b) {
    return std::abs(a - b) < 1e-3 * std::max(1.0, std::abs(b));
}

} // namespace

class TestFleetTuning : public QObject {
    Q_OBJECT
private slots:
    void nodeNames() {
        QCOMPARE(node_name("/shared/run/report-vm-123_4.json"), std::string("task 4 (vm)"));
        QCOMPARE(node_name("/shared/run/report-a-b-7_0.json"), std::string("task 0 (a-b)"));
        QCOMPARE(node_name("/x/report-mine.json"), std::string("report-mine.json"));
    }

    // Two nodes of one class that keep the same entry: one entry, its evidence per size the
    // weaker node's, the regret map's lines n of N with the smallest and the median speedup.
    void twoNodesAgree() {
        const auto a = tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.0e-3}});
        const auto b = tuning_report(kMachineA, {{4, 2.7e-3, 1.5e-3}, {8, 2.7e-3, 1.2e-3}});
        const auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &b}});
        QCOMPARE(ft.classes.size(), std::size_t(1));
        const auto& c = ft.classes[0];
        QCOMPARE(c.machine_id, kMachineA);
        QCOMPARE(c.description, std::string("Test CPU ") + kMachineA);
        QCOMPARE(c.nodes, (Strings{"task 0 (a)", "task 1 (b)"}));
        QVERIFY(c.without_findings.empty());
        QCOMPARE(c.tuning.machine_id, kMachineA);
        QCOMPARE(c.tuning.entries.size(), std::size_t(1));
        const auto& e = c.tuning.entries[0];
        QCOMPARE(e.op, std::string("rms_norm"));
        QCOMPARE(e.device, std::string("cpu"));
        QCOMPARE(e.chosen.cell, std::string("x86-64-v3/threaded"));
        QCOMPARE(e.overrides.cell, std::string("x86-64-v4/default"));
        QCOMPARE(e.chosen.code.build_id, std::string("abc123"));
        QCOMPARE(e.sizes, (Strings{"4x1024", "8x1024"}));
        QCOMPARE(e.min_work, 4096.0);
        QCOMPARE(e.max_work, 8192.0);
        QCOMPARE(e.evidence.size(), std::size_t(2));
        QVERIFY2(near(e.evidence[0].speedup, 2.7 / 1.5),
                 std::to_string(e.evidence[0].speedup).c_str());
        QVERIFY(near(e.evidence[1].speedup, 2.7 / 1.2));
        QVERIFY(near(e.speedup(), 1.8));
        QCOMPARE(e.report, std::string("b.json")); // the weaker node's report
        QVERIFY2(c.notes.empty(), joined(c.notes).c_str());

        QCOMPARE(ft.regrets.size(), std::size_t(2));
        const auto& r = ft.regrets[0];
        QCOMPARE(r.machine_id, kMachineA);
        QCOMPARE(r.size, std::string("4x1024"));
        QCOMPARE(r.pick, std::string("x86-64-v4/default"));
        QCOMPARE(r.faster, std::string("x86-64-v3/threaded"));
        QCOMPARE(r.nodes, (Strings{"task 0 (a)", "task 1 (b)"}));
        QCOMPARE(r.class_nodes, std::size_t(2));
        QVERIFY(near(r.min_speedup, 1.8));
        QVERIFY(near(r.median_speedup, (2.7 + 1.8) / 2));
        QCOMPARE(r.tuned, std::string("x86-64-v3/threaded"));
        QCOMPARE(ft.regrets[1].size, std::string("8x1024"));

        // The JSON form and the written file, read back.
        const auto j = ft.to_json();
        QCOMPARE(j["format"].get<std::string>(), std::string("switchyard.fleet-tuning"));
        QCOMPARE(j["classes"][0]["entries"].get<int>(), 1);
        QCOMPARE(j["regret_map"][0]["agree"].get<int>(), 2);
        QCOMPARE(j["regret_map"][0]["class_nodes"].get<int>(), 2);
        QCOMPARE(Tuning::from_json(j["classes"][0]["tuning"]).entries.size(), std::size_t(1));
    }

    // One node disagrees at one size (the chain's pick is its fastest there): that size is
    // dropped with a note naming both nodes, and the range splits around it; another keeps
    // another cell at a size: dropped with what that node keeps.
    void oneNodeDisagrees() {
        const auto a = tuning_report(
            kMachineA,
            {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.0e-3}, {16, 2.7e-3, 1.0e-3}, {32, 2.7e-3, 1.0e-3}});
        const auto b = tuning_report(
            kMachineA,
            {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 2.7e-3}, {16, 2.7e-3, 1.0e-3}, {32, 2.7e-3, 1.0e-3}});
        const auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &b}});
        QCOMPARE(ft.classes.size(), std::size_t(1));
        const auto& c = ft.classes[0];
        const auto& entries = c.tuning.entries;
        QCOMPARE(entries.size(), std::size_t(2));
        QCOMPARE(entries[0].sizes, (Strings{"4x1024"}));
        QCOMPARE(entries[1].sizes, (Strings{"16x1024", "32x1024"}));
        QCOMPARE(entries[1].min_work, 16.0 * 1024);
        QVERIFY2(has_note(c.notes, "rms_norm 8x1024 on cpu: x86-64-v3/threaded beats "
                                   "x86-64-v4/default on task 0 (a) cpu; not on task 1 (b) cpu"),
                 joined(c.notes).c_str());
        // The regret map: 8x1024 regretted on one node of two, not tuned.
        const auto it = std::find_if(ft.regrets.begin(), ft.regrets.end(),
                                     [](const RegretEntry& r) { return r.size == "8x1024"; });
        QVERIFY(it != ft.regrets.end());
        QCOMPARE(it->nodes, (Strings{"task 0 (a)"}));
        QCOMPARE(it->class_nodes, std::size_t(2));
        QCOMPARE(it->tuned, std::string());
        QVERIFY(ft.regret_map_text().find("1 of 2") != std::string::npos);

        // A third node keeps another cell everywhere: nothing is left that all three agree on.
        const auto other = tuning_report(
            kMachineA,
            {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.0e-3}, {16, 2.7e-3, 1.0e-3}, {32, 2.7e-3, 1.0e-3}},
            "generic/openblas");
        const auto three = tune_fleet({{"task 0 (a)", "a.json", &a},
                                       {"task 1 (b)", "b.json", &b},
                                       {"task 2 (c)", "c.json", &other}});
        QVERIFY(three.classes[0].tuning.entries.empty());
        QVERIFY2(has_note(three.classes[0].notes,
                          "rms_norm 4x1024 on cpu: generic/openblas beats x86-64-v4/default on "
                          "task 2 (c) cpu; not measured on task 0 (a) cpu, task 1 (b) cpu"),
                 joined(three.classes[0].notes).c_str());
        QVERIFY(has_note(three.classes[0].notes,
                         "rms_norm 4x1024 on cpu: x86-64-v3/threaded beats x86-64-v4/default on "
                         "task 0 (a) cpu, task 1 (b) cpu; not measured on task 2 (c) cpu"));
        // Two faster cells at one size are two lines of the regret map.
        const auto at4 = std::count_if(three.regrets.begin(), three.regrets.end(),
                                       [](const RegretEntry& r) { return r.size == "4x1024"; });
        QCOMPARE(at4, std::ptrdiff_t(2));
    }

    // The same cells built from other code (another build ID) are not the same entry.
    void otherCodeDisagrees() {
        const auto a = tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}});
        const auto b =
            tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}}, "x86-64-v3/threaded", "def456");
        const auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &b}});
        QVERIFY(ft.classes[0].tuning.entries.empty());
        QVERIFY2(has_note(ft.classes[0].notes, "the pick runs other code on task 1 (b) cpu"),
                 joined(ft.classes[0].notes).c_str());
    }

    // Two cells that do the same work tie on both nodes, each node's faster one another (what
    // noise does): the class gets one entry, the first of the two in the chain's order, and a
    // note naming both; a cell that beats the other on every node is no tie.
    void tiedCellsMakeOneEntry() {
        const auto with_openblas = [](const std::string& id, const std::vector<double>& v3,
                                      const std::vector<double>& blas) {
            auto r =
                tuning_report(id, {{4, 2.7e-3, v3[0]}, {8, 2.7e-3, v3[1]}}, "x86-64-v3/default");
            const std::int64_t rows_of[] = {4, 8};
            for (std::size_t i = 0; i < 2; ++i) {
                auto row = switchyard::testing::timed_row(
                    std::int64_t(r.rows.size()), "generic", "openblas", blas[i], false,
                    std::to_string(rows_of[i]) + "x1024", rows_of[i]);
                row.spec.code = {"cpu", "0.1.0", "abc123"};
                r.rows.push_back(row);
            }
            r.annotate();
            return r;
        };
        const auto a = with_openblas(kMachineA, {1.00e-3, 1.01e-3}, {1.01e-3, 1.00e-3});
        const auto b = with_openblas(kMachineA, {1.01e-3, 1.00e-3}, {1.00e-3, 1.01e-3});
        const auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &b}});
        const auto& c = ft.classes.at(0);
        QCOMPARE(c.tuning.entries.size(), std::size_t(1));
        QCOMPARE(c.tuning.entries[0].chosen.cell, std::string("x86-64-v3/default"));
        QCOMPARE(c.tuning.entries[0].sizes, (Strings{"4x1024", "8x1024"}));
        QVERIFY2(has_note(c.notes, "rms_norm 4x1024 on cpu: x86-64-v3/default and "
                                   "generic/openblas tie (no gap between them held on every "
                                   "node); x86-64-v3/default is kept"),
                 joined(c.notes).c_str());
        // The nodes in the other order: the same class tuning.
        const auto swapped =
            tune_fleet({{"task 1 (b)", "b.json", &b}, {"task 0 (a)", "a.json", &a}});
        QCOMPARE(swapped.classes.at(0).tuning.entries.at(0).chosen.cell,
                 std::string("x86-64-v3/default"));
        // OpenBLAS twice as fast on both nodes: no tie, it is the class's cell.
        const auto fa = with_openblas(kMachineA, {1.00e-3, 1.00e-3}, {0.5e-3, 0.5e-3});
        const auto fb = with_openblas(kMachineA, {1.00e-3, 1.00e-3}, {0.5e-3, 0.5e-3});
        const auto faster =
            tune_fleet({{"task 0 (a)", "a.json", &fa}, {"task 1 (b)", "b.json", &fb}});
        QCOMPARE(faster.classes.at(0).tuning.entries.at(0).chosen.cell,
                 std::string("generic/openblas"));
        QVERIFY(!has_note(faster.classes.at(0).notes, " tie "));
    }

    // Two machine classes: two tunings, each from its own nodes, written to two files.
    void twoClassesTwoTunings() {
        const auto a = tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}});
        const auto b = tuning_report(kMachineB, {{4, 2.7e-3, 2.7e-3}, {8, 2.7e-3, 1.0e-3}},
                                     "generic/openblas");
        const auto c = tuning_report(kMachineB, {{4, 2.7e-3, 2.7e-3}, {8, 2.7e-3, 1.1e-3}},
                                     "generic/openblas");
        auto ft = tune_fleet({{"task 0 (a)", "a.json", &a},
                              {"task 1 (b)", "b.json", &b},
                              {"task 2 (c)", "c.json", &c}});
        QCOMPARE(ft.classes.size(), std::size_t(2));
        QCOMPARE(ft.classes[0].machine_id, kMachineA);
        QCOMPARE(ft.classes[0].nodes, (Strings{"task 0 (a)"}));
        QCOMPARE(ft.classes[1].machine_id, kMachineB);
        QCOMPARE(ft.classes[1].nodes, (Strings{"task 1 (b)", "task 2 (c)"}));
        QCOMPARE(ft.classes[0].tuning.entries.at(0).chosen.cell, std::string("x86-64-v3/threaded"));
        QCOMPARE(ft.classes[1].tuning.entries.at(0).chosen.cell, std::string("generic/openblas"));
        QCOMPARE(ft.classes[1].tuning.entries.at(0).sizes, (Strings{"8x1024"}));

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string out = dir.path().toStdString() + "/tuning";
        write_tunings(ft, out);
        for (const auto& k : ft.classes) {
            QCOMPARE(k.file, out + "/" + k.machine_id + ".tuning");
            const auto back = Tuning::load(k.file);
            QCOMPARE(back.machine_id, k.machine_id);
            QCOMPARE(back.entries.size(), std::size_t(1));
            QCOMPARE(back.entries[0].chosen.cell, k.tuning.entries[0].chosen.cell);
        }
        QVERIFY(ft.summary().find("written to " + out + "/" + kMachineB + ".tuning") !=
                std::string::npos);
        // The regret map in a stable order: by machine, then by work.
        QCOMPARE(ft.regrets.size(), std::size_t(2));
        QCOMPARE(ft.regrets[0].machine_id, kMachineA);
        QCOMPARE(ft.regrets[1].machine_id, kMachineB);
        QCOMPARE(ft.regrets[1].class_nodes, std::size_t(2));
        // A folder that cannot be made is an error naming it.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, write_tunings(ft, "/proc/no/such/folder"));
    }

    // A node without dispatch findings is left out of its class with a note saying what to
    // run; a class with no such node has nothing to write.
    void nodeWithoutFindings() {
        const auto a = tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}});
        const auto plain = plain_report(kMachineA);
        QVERIFY(plain.dispatch.empty());
        auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &plain}});
        QCOMPARE(ft.classes.size(), std::size_t(1));
        const auto& c = ft.classes[0];
        QCOMPARE(c.nodes, (Strings{"task 0 (a)"}));
        QCOMPARE(c.without_findings, (Strings{"task 1 (b)"}));
        QVERIFY2(has_note(c.notes, "task 1 (b): its report has no dispatch findings"),
                 joined(c.notes).c_str());
        QVERIFY(has_note(c.notes, "--all-variants --repeat 3"));
        QCOMPARE(c.tuning.entries.size(), std::size_t(1));
        QCOMPARE(ft.regrets.at(0).class_nodes, std::size_t(1));

        auto none = tune_fleet({{"task 1 (b)", "b.json", &plain}});
        QCOMPARE(none.classes.size(), std::size_t(1));
        QVERIFY(!none.classes[0].tunable());
        QVERIFY(none.regrets.empty());
        QTemporaryDir dir;
        write_tunings(none, dir.path().toStdString());
        QVERIFY(none.classes[0].file.empty());
        QVERIFY(std::filesystem::is_empty(dir.path().toStdString()));
        QVERIFY(none.summary().find("nothing to tune") != std::string::npos);
        QVERIFY(none.regret_map_text().find("no regret") != std::string::npos);
    }

    // A report without a machine id, or with one that is no file name, is in no class.
    void reportsWithoutAClass() {
        auto a = tuning_report("", {{4, 2.7e-3, 1.0e-3}});
        auto b = tuning_report("../../etc/x", {{4, 2.7e-3, 1.0e-3}});
        const auto ft = tune_fleet({{"task 0 (a)", "a.json", &a}, {"task 1 (b)", "b.json", &b}});
        QVERIFY(ft.classes.empty());
        QCOMPARE(ft.notes.size(), std::size_t(2));
        QVERIFY(has_note(ft.notes, "task 0 (a): the report has no machine id"));
        QVERIFY(has_note(ft.notes, "task 1 (b): its machine id '../../etc/x'"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tune_fleet({{"x", "", nullptr}}));
    }

    // The regret map's text: a header, one aligned line per entry, control characters escaped.
    void regretMapText() {
        const auto a = tuning_report(kMachineA, {{4, 2.7e-3, 1.0e-3}, {8, 2.7e-3, 1.35e-3}});
        const auto ft = tune_fleet({{"task 0 (a\x1b[31m)", "a.json", &a}});
        const auto text = ft.regret_map_text();
        QVERIFY2(text.find("MACHINE           OP        DEVICE  SIZE    CHAIN PICKS        "
                           "FASTER              MIN    MEDIAN  NODES   TUNED") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find(kMachineA +
                           "  rms_norm  cpu     8x1024  x86-64-v4/default  x86-64-v3/threaded  "
                           "2.00x  2.00x   1 of 1  x86-64-v3/threaded\n") != std::string::npos,
                 text.c_str());
        QVERIFY(text.find('\x1b') == std::string::npos);
        QVERIFY(ft.summary().find('\x1b') == std::string::npos);
        QCOMPARE(ft.regret_map_text(), text); // stable
    }
};

QTEST_GUILESS_MAIN(TestFleetTuning)
#include "tst_fleettuning.moc"
