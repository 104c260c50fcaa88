// SPDX-License-Identifier: MIT
// Tests for the core's fleet module: per-task targets, the batch script, report
// names, the manifest, the squeue/sacct/scontrol parsers, status (with and without
// accounting storage), submit's command sequence and collect. The squeue and scontrol
// outputs and sacct's failure were recorded on Slurm 22.05 without accounting storage; the
// sacct records follow its --parsable2 format (no slurmdbd was at hand to record them).

#include <switchyard/fleet/collect.h>
#include <switchyard/fleet/fleet.h>
#include <switchyard/fleet/slurm.h>
#include <switchyard/report/report.h>

#include <QTemporaryDir>
#include <QTest>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace switchyard;
using namespace switchyard::fleet;

using Strings = std::vector<std::string>;
using Indices = std::vector<std::int64_t>;
Q_DECLARE_METATYPE(Strings)
Q_DECLARE_METATYPE(Indices)

namespace {

// Answers each command with the first scripted result whose argv starts with its key;
// records every command it was given.
class FakeRunner : public CommandRunner {
public:
    struct Answer {
        Strings prefix;
        CommandResult result;
    };
    std::deque<Answer> answers;
    std::vector<Strings> calls;

    void add(Strings prefix, int code, std::string out, std::string err = {}) {
        CommandResult r;
        r.started = true;
        r.exit_code = code;
        r.out = std::move(out);
        r.err = std::move(err);
        answers.push_back({std::move(prefix), r});
    }
    CommandResult run(const Strings& argv) override {
        calls.push_back(argv);
        for (auto it = answers.begin(); it != answers.end(); ++it) {
            if (argv.size() >= it->prefix.size() &&
                std::equal(it->prefix.begin(), it->prefix.end(), argv.begin())) {
                auto r = it->result;
                answers.erase(it);
                return r;
            }
        }
        CommandResult r;
        r.error = argv[0] + ": cannot run: No such file or directory";
        return r;
    }
};

// Recorded on Debian 12's slurm-wlm 22.05.8 (job 10: --array=0-3%1, task 0 running).
const char* kSqueueArray = "10_1|PENDING|JobArrayTaskLimit|\n10_2|PENDING|JobArrayTaskLimit|\n"
                           "10_3|PENDING|JobArrayTaskLimit|\n10_0|RUNNING|None|vm\n";
const char* kSqueueCompact = "10_[1-3%1]|PENDING|JobArrayTaskLimit|\n10_0|RUNNING|None|vm\n";
const char* kScontrol =
    "JobId=10 ArrayJobId=10 ArrayTaskId=1-3%1 ArrayTaskThrottle=1 JobName=sy UserId=root(0) "
    "JobState=PENDING Reason=JobArrayTaskLimit Dependency=(null) ExitCode=0:0 NodeList=(null) \n"
    "JobId=11 ArrayJobId=10 ArrayTaskId=0 ArrayTaskThrottle=1 JobName=sy JobState=FAILED "
    "Reason=NonZeroExitCode ExitCode=3:0 RunTime=00:00:03 NodeList=vm BatchHost=vm\n";
// sacct --allocations --parsable2 --noheader --format=JobID,State,ExitCode,NodeList.
const char* kSacct = "10_0|COMPLETED|0:0|vm\n10_1|FAILED|1:0|vm\n10_2|CANCELLED by 0|0:15|vm\n"
                     "10_[3]|PENDING|0:0|None assigned\n";

Manifest manifest_of(const std::string& folder, std::int64_t tasks, const std::string& job = "10") {
    Manifest m;
    m.job_id = job;
    m.job_name = "switchyard-fleet";
    m.folder = folder;
    m.cli = "/usr/bin/switchyard-cli";
    m.submitted = "2026-01-01T00:00:00Z";
    for (std::int64_t i = 0; i < tasks; ++i)
        m.targets.push_back({i, Placement::None, ""});
    return m;
}

std::string minimal_report() {
    Report r;
    r.context = nlohmann::json::object();
    return r.to_json().dump();
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

} // namespace

class TstFleet : public QObject {
    Q_OBJECT
private slots:
    void hostlist_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<Strings>("expected");
        QTest::newRow("plain") << "a,b" << Strings{"a", "b"};
        QTest::newRow("repeat") << "vm,vm" << Strings{"vm", "vm"};
        QTest::newRow("range") << "n[1-3]" << Strings{"n1", "n2", "n3"};
        QTest::newRow("padded") << "gpu[08-10]" << Strings{"gpu08", "gpu09", "gpu10"};
        QTest::newRow("mixed") << "n[1,4-5]x,login" << Strings{"n1x", "n4x", "n5x", "login"};
    }
    void hostlist() {
        QFETCH(QString, text);
        QFETCH(Strings, expected);
        QCOMPARE(expand_hostlist(text.toStdString()), expected);
    }
    void hostlist_bad_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("unclosed") << "n[1-3"
                                  << "unclosed";
        QTest::newRow("backwards") << "n[3-1]"
                                   << "backwards";
        QTest::newRow("letters") << "n[a-b]"
                                 << "not a number";
        QTest::newRow("stray") << "n1]"
                               << "without its";
        QTest::newRow("huge") << "n[0-999999]"
                              << "100000";
    }
    void hostlist_bad() {
        QFETCH(QString, text);
        QFETCH(QString, message);
        try {
            expand_hostlist(text.toStdString());
            QFAIL("no error");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }

    void plan_targets_data() {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("field");
        QTest::addColumn<Strings>("values");
        QTest::newRow("nodes") << "nodelist"
                               << "n[1-2]"
                               << "NodeList" << Strings{"n1", "n2"};
        QTest::newRow("partitions") << "partition"
                                    << "a,b,c"
                                    << "Partition" << Strings{"a", "b", "c"};
        QTest::newRow("constraint") << "constraint"
                                    << "skylake,zen4"
                                    << "Features" << Strings{"skylake", "zen4"};
        QTest::newRow("gres") << "gres"
                              << "gpu:h100:1,gpu:a100:1"
                              << "Gres" << Strings{"gpu:h100:1", "gpu:a100:1"};
    }
    void plan_targets() {
        QFETCH(QString, option);
        QFETCH(QString, value);
        QFETCH(QString, field);
        QFETCH(Strings, values);
        SubmitRequest r;
        r.folder = "/shared/fleet";
        r.cli = "/opt/sy/bin/switchyard-cli";
        (option == "nodelist"     ? r.nodelist
         : option == "partition"  ? r.partition
         : option == "constraint" ? r.constraint
                                  : r.gres) = value.toStdString();
        r.profile_args = {"--op", "rms_norm"};
        const auto p = plan(r);
        QCOMPARE(p.targets.size(), values.size());
        const auto pins = p.pin_commands("77");
        QCOMPARE(pins.size(), values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            QCOMPARE(p.targets[i].value, values[i]);
            QCOMPARE(pins[i], (Strings{"scontrol", "update", "JobId=77_" + std::to_string(i),
                                       field.toStdString() + "=" + values[i]}));
        }
        const std::string array = "#SBATCH --array=0-" + std::to_string(values.size() - 1) + "\n";
        QVERIFY2(p.script.find(array) != std::string::npos, p.script.c_str());
        // The listed option is per task: not in the script's #SBATCH lines.
        QVERIFY(p.script.find("#SBATCH --" + option.toStdString()) == std::string::npos);
    }

    void plan_script() {
        SubmitRequest r;
        r.folder = "/shared/fleet/";
        r.cli = "/opt/sy/bin/switchyard-cli";
        r.tasks = 3;
        r.partition = "gpu";
        r.account = "proj1";
        r.time = "00:10:00";
        r.throttle = 2;
        r.exclusive = true;
        r.sbatch_args = {"--mem=4G", "--comment=two words"};
        r.profile_args = {"--op", "rms_norm", "--sizes", "it's"};
        const auto p = plan(r);
        QCOMPARE(p.placement, Placement::None);
        QVERIFY(p.pin_commands("1").empty());
        for (const char* line :
             {"#!/bin/bash\n", "#SBATCH --array=0-2%2\n",
              "#SBATCH --output=/shared/fleet/logs/%A_%a.log\n",
              "#SBATCH --job-name=switchyard-fleet\n", "#SBATCH --partition=gpu\n",
              "#SBATCH --account=proj1\n", "#SBATCH --time=00:10:00\n", "#SBATCH --exclusive\n",
              "#SBATCH --mem=4G\n", "#SBATCH \"--comment=two words\"\n", "folder='/shared/fleet'\n",
              "report=\"$folder/report-$(hostname "
              "-s)-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}.json\"\n",
              "exec '/opt/sy/bin/switchyard-cli' profile '--op' 'rms_norm' '--sizes' 'it'\\''s' -o "
              "\"$report\"\n"})
            QVERIFY2(p.script.find(line) != std::string::npos,
                     (std::string(line) + p.script).c_str());
        QCOMPARE(p.targets.size(), std::size_t(3));
        QCOMPARE(p.targets[2].label(), std::string("copy 2"));
    }

    void plan_bad_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("message");
        QTest::newRow("two lists") << "two lists"
                                   << "both list several values";
        QTest::newRow("tasks mismatch") << "tasks mismatch"
                                        << "does not match";
        QTest::newRow("no folder") << "no folder"
                                   << "--folder";
        QTest::newRow("folder with blank") << "folder with blank"
                                           << "blank";
        QTest::newRow("relative cli") << "relative cli"
                                      << "--cli";
        QTest::newRow("output in settings") << "output in settings"
                                            << "leave it out";
        QTest::newRow("own sbatch option") << "own sbatch option"
                                           << "set by fleet submit";
        QTest::newRow("not an option") << "not an option"
                                       << "not an sbatch option";
        QTest::newRow("newline") << "newline"
                                 << "control character";
    }
    void plan_bad() {
        QFETCH(QString, what);
        QFETCH(QString, message);
        SubmitRequest r;
        r.folder = "/shared/f";
        r.cli = "/usr/bin/switchyard-cli";
        if (what == "two lists") {
            r.nodelist = "a,b";
            r.gres = "gpu:1,gpu:2";
        } else if (what == "tasks mismatch") {
            r.nodelist = "a,b";
            r.tasks = 3;
        } else if (what == "no folder") {
            r.folder.clear();
        } else if (what == "folder with blank") {
            r.folder = "/shared/my fleet";
        } else if (what == "relative cli") {
            r.cli = "bin/switchyard-cli";
        } else if (what == "output in settings") {
            r.profile_args = {"--op", "rms_norm", "-o", "x.json"};
        } else if (what == "own sbatch option") {
            r.sbatch_args = {"--array=0-9"};
        } else if (what == "not an option") {
            r.sbatch_args = {"mem=4G"};
        } else if (what == "newline") {
            r.account = "a\nb";
        }
        try {
            plan(r);
            QFAIL("no error");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }

    void report_names_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("job");
        QTest::addColumn<int>("task");
        QTest::newRow("plain") << "report-vm-12_3.json" << true << "vm"
                               << "12" << 3;
        QTest::newRow("dashed host") << "report-gpu-node-7-99_0.json" << true << "gpu-node-7"
                                     << "99" << 0;
        QTest::newRow("no task") << "report-vm-12.json" << false << ""
                                 << "" << 0;
        QTest::newRow("other file") << "fleet.json" << false << ""
                                    << "" << 0;
        QTest::newRow("bad job") << "report-vm-x_1.json" << false << ""
                                 << "" << 0;
        QTest::newRow("no host") << "report--12_1.json" << false << ""
                                 << "" << 0;
    }
    void report_names() {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        const auto r = parse_report_file_name(name.toStdString());
        QCOMPARE(r.has_value(), valid);
        if (!valid)
            return;
        QFETCH(QString, host);
        QFETCH(QString, job);
        QFETCH(int, task);
        QCOMPARE(QString::fromStdString(r->host), host);
        QCOMPARE(QString::fromStdString(r->job_id), job);
        QCOMPARE(r->task, std::int64_t(task));
        QCOMPARE(report_file_name(r->host, r->job_id, r->task), name.toStdString());
    }

    void array_ids_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<Indices>("expected");
        QTest::newRow("task") << "1234_4" << Indices{4};
        QTest::newRow("throttled range") << "1234_[2-3%1]" << Indices{2, 3};
        QTest::newRow("list") << "1234_[0,4-5]" << Indices{0, 4, 5};
        QTest::newRow("single bracket") << "1234_[7]" << Indices{7};
        QTest::newRow("step") << "1234_4.batch" << Indices{};
        QTest::newRow("other job") << "12345_4" << Indices{};
        QTest::newRow("bare job") << "1234" << Indices{};
    }
    void array_ids() {
        QFETCH(QString, field);
        QFETCH(Indices, expected);
        QCOMPARE(array_indices(field.toStdString(), "1234"), expected);
    }
    void array_ids_bad() {
        for (const char* bad : {"1234_", "1234_x", "1234_[3-1]", "1234_[1-2", "1234_[]"})
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, array_indices(bad, "1234"));
    }

    void parsers() {
        for (const char* out : {kSqueueArray, kSqueueCompact}) {
            const auto q = parse_squeue(out, "10");
            QCOMPARE(q.size(), std::size_t(4));
            QCOMPARE(q.at(0).state, std::string("RUNNING"));
            QCOMPARE(q.at(0).node, std::string("vm"));
            QCOMPARE(q.at(0).reason, std::string());
            QCOMPARE(q.at(3).state, std::string("PENDING"));
            QCOMPARE(q.at(3).reason, std::string("JobArrayTaskLimit"));
            QVERIFY(!q.at(3).terminal());
        }
        const auto s = parse_scontrol(kScontrol, "10");
        QCOMPARE(s.size(), std::size_t(4));
        QCOMPARE(s.at(0).state, std::string("FAILED"));
        QCOMPARE(s.at(0).exit_code, std::string("3:0"));
        QVERIFY(s.at(0).terminal());
        QCOMPARE(s.at(2).state, std::string("PENDING"));
        QCOMPARE(s.at(2).node, std::string());
        const auto a = parse_sacct(kSacct, "10");
        QCOMPARE(a.size(), std::size_t(4));
        QCOMPARE(a.at(2).state, std::string("CANCELLED"));
        QCOMPARE(a.at(1).exit_code, std::string("1:0"));
        QCOMPARE(a.at(3).node, std::string());
        QVERIFY(!a.at(3).terminal());
        QVERIFY_THROWS_EXCEPTION(SlurmError, parse_squeue("10_0 RUNNING\n", "10"));
        QVERIFY_THROWS_EXCEPTION(SlurmError, parse_sacct("10_[1-|PENDING|0:0|\n", "10"));
        QCOMPARE(parse_sbatch_job_id("123\n"), std::string("123"));
        QCOMPARE(parse_sbatch_job_id("123;cluster\n"), std::string("123"));
        QVERIFY_THROWS_EXCEPTION(SlurmError, parse_sbatch_job_id("Submitted batch job 1\n"));
    }

    // Without accounting storage: sacct fails, scontrol answers for finished tasks, a throttled
    // pending range keeps the fleet unfinished.
    void status_without_accounting() {
        FakeRunner runner;
        runner.add({"squeue"}, 0, kSqueueCompact);
        runner.add({"sacct"}, 1, "", "Slurm accounting storage is disabled\n");
        runner.add({"scontrol"}, 0, kScontrol);
        // Task 4 is in neither squeue's nor scontrol's answer: sacct is asked, and fails.
        const auto st = query_status(manifest_of("/tmp/x", 5), runner);
        QVERIFY(!st.accounting);
        QVERIFY(!st.finished());
        QVERIFY(!st.tasks[4].known());
        QCOMPARE(st.tasks[0].source, std::string("squeue"));
        QCOMPARE(st.tasks[3].reason, std::string("JobArrayTaskLimit"));
        QCOMPARE(st.notes.size(), std::size_t(1));
        QVERIFY(st.notes[0].find("accounting storage is disabled") != std::string::npos);
        QCOMPARE(runner.calls[0],
                 (Strings{"squeue", "--array", "--noheader", "--jobs=10", "--format=%i|%T|%r|%N"}));
    }
    void status_finished_without_accounting() {
        FakeRunner runner;
        runner.add({"squeue"}, 0, "");
        runner.add({"sacct"}, 1, "", "Slurm accounting storage is disabled\n");
        runner.add({"scontrol"}, 0,
                   "JobId=11 ArrayJobId=10 ArrayTaskId=0 JobState=COMPLETED Reason=None "
                   "ExitCode=0:0 NodeList=vm\n");
        const auto st = query_status(manifest_of("/tmp/x", 2), runner);
        QVERIFY(st.finished());
        QCOMPARE(st.tasks[0].state, std::string("COMPLETED"));
        QVERIFY(!st.tasks[1].known()); // purged: no longer known to Slurm
        QCOMPARE(st.summary(), std::string("1 COMPLETED, 1 no longer known to Slurm"));
    }
    void status_gone_everywhere() {
        FakeRunner runner;
        runner.add({"squeue"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n");
        runner.add({"sacct"}, 1, "", "Slurm accounting storage is disabled\n");
        runner.add({"scontrol"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n");
        const auto st = query_status(manifest_of("/tmp/x", 2), runner);
        QVERIFY(st.finished());
        QVERIFY(!st.tasks[0].known() && !st.tasks[1].known());
    }
    void status_with_accounting() {
        FakeRunner runner;
        runner.add({"squeue"}, 0, "");
        runner.add({"sacct"}, 0, kSacct);
        const auto st = query_status(manifest_of("/tmp/x", 4), runner);
        QVERIFY(st.accounting);
        QVERIFY(!st.finished()); // 10_[3] is still pending in sacct's view
        QCOMPARE(st.tasks[1].state, std::string("FAILED"));
        QCOMPARE(runner.calls.size(), std::size_t(2)); // no scontrol
    }
    void status_no_controller() {
        FakeRunner runner;
        runner.add({"squeue"}, 1, "",
                   "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
        try {
            query_status(manifest_of("/tmp/x", 1), runner);
            QFAIL("no error");
        } catch (const SlurmError& e) {
            QVERIFY2(QString(e.what()).contains("Unable to contact"), e.what());
        }
    }

    void submit_pins_then_releases() {
        QTemporaryDir dir;
        SubmitRequest r;
        r.folder = dir.path().toStdString() + "/f";
        r.cli = "/usr/bin/switchyard-cli";
        r.nodelist = "a,b";
        const auto p = plan(r);
        FakeRunner runner;
        runner.add({"sbatch"}, 0, "42\n");
        runner.add({"scontrol", "update"}, 0, "");
        runner.add({"scontrol", "update"}, 0, "");
        runner.add({"scontrol", "release"}, 0, "");
        const auto m = submit(p, runner);
        QCOMPARE(m.job_id, std::string("42"));
        QCOMPARE(runner.calls.size(), std::size_t(4));
        QCOMPARE(runner.calls[0],
                 (Strings{"sbatch", "--parsable", "--hold", r.folder + "/fleet.sbatch"}));
        QCOMPARE(runner.calls[1], (Strings{"scontrol", "update", "JobId=42_0", "NodeList=a"}));
        QCOMPARE(runner.calls[2], (Strings{"scontrol", "update", "JobId=42_1", "NodeList=b"}));
        QCOMPARE(runner.calls[3], (Strings{"scontrol", "release", "42"}));
        const auto loaded = Manifest::load(r.folder);
        QCOMPARE(loaded.job_id, std::string("42"));
        QCOMPARE(loaded.targets.size(), std::size_t(2));
        QCOMPARE(loaded.targets[1].value, std::string("b"));
        QVERIFY(std::filesystem::is_directory(r.folder + "/logs"));
        // A second fleet in the same folder is refused.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, submit(p, runner));
    }
    void submit_failed_pin_cancels() {
        QTemporaryDir dir;
        SubmitRequest r;
        r.folder = dir.path().toStdString();
        r.cli = "/usr/bin/switchyard-cli";
        r.partition = "p1,nosuch";
        const auto p = plan(r);
        FakeRunner runner;
        runner.add({"sbatch"}, 0, "43\n");
        runner.add({"scontrol", "update"}, 0, "");
        runner.add({"scontrol", "update"}, 1, "", "Invalid partition name specified\n");
        runner.add({"scancel"}, 0, "");
        try {
            submit(p, runner);
            QFAIL("no error");
        } catch (const SlurmError& e) {
            QVERIFY2(QString(e.what()).contains("Invalid partition name"), e.what());
            QVERIFY2(QString(e.what()).contains("cancelled before any task ran"), e.what());
        }
        QCOMPARE(runner.calls.back(), (Strings{"scancel", "43"}));
        QVERIFY(!std::filesystem::exists(r.folder + "/fleet.json"));
    }
    void submit_unpinned_no_hold() {
        QTemporaryDir dir;
        SubmitRequest r;
        r.folder = dir.path().toStdString();
        r.cli = "/usr/bin/switchyard-cli";
        r.tasks = 2;
        FakeRunner runner;
        runner.add({"sbatch"}, 1, "", "sbatch: error: invalid partition specified: x\n");
        try {
            submit(plan(r), runner);
            QFAIL("no error");
        } catch (const SlurmError& e) {
            QVERIFY2(QString(e.what()).contains("invalid partition"), e.what());
        }
        QCOMPARE(runner.calls[0], (Strings{"sbatch", "--parsable", r.folder + "/fleet.sbatch"}));
    }

    void manifest_round_trip_and_errors() {
        auto m = manifest_of("/shared/f", 2);
        m.targets[1] = {1, Placement::Gres, "gpu:h100:1"};
        const auto back = Manifest::from_json(m.to_json());
        QCOMPARE(back.targets[1].placement, Placement::Gres);
        QVERIFY(back.to_json() == m.to_json());
        auto j = m.to_json();
        j.erase("job_id");
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, Manifest::from_json(j));
        j = m.to_json();
        j["targets"][1]["placement"] = "rack";
        try {
            Manifest::from_json(j);
            QFAIL("no error");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("targets[1]"), e.what());
        }
        QTemporaryDir dir;
        try {
            Manifest::load(dir.path().toStdString());
            QFAIL("no error");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("fleet submit"), e.what());
        }
    }

    void log_tail() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/t.log";
        std::string text;
        for (int i = 0; i < 30; ++i)
            text += "line " + std::to_string(i) + "\n";
        write(path, text);
        const auto t = tail_lines(path, 3);
        QCOMPARE(t, (Strings{"line 27", "line 28", "line 29"}));
        write(path, "only\x1b[31m");
        QCOMPARE(tail_lines(path, 10), (Strings{"only\x1b[31m"}));
        QVERIFY(tail_lines(dir.path().toStdString() + "/none.log", 3).empty());
        QVERIFY(tail_lines(dir.path().toStdString(), 3).empty()); // a folder is not read
    }

    void collect_reports() {
        QTemporaryDir dir;
        const std::string f = dir.path().toStdString();
        std::filesystem::create_directories(f + "/logs");
        const auto m = manifest_of(f, 4, "7");
        write(f + "/" + report_file_name("n1", "7", 0), minimal_report());
        write(f + "/" + report_file_name("n2", "7", 1), "{ truncated");
        write(f + "/" + report_file_name("n1", "8", 2), minimal_report()); // another job
        write(f + "/logs/7_1.log", "start\nerror: out of memory\n");
        write(f + "/logs/7_2.log", "start\nkilled\n");
        FleetStatus st;
        st.job_id = "7";
        for (std::int64_t i = 0; i < 4; ++i) {
            TaskState s;
            s.index = i;
            s.source = i == 3 ? "" : "scontrol";
            s.state = i == 0 ? "COMPLETED" : i == 1 ? "FAILED" : "TIMEOUT";
            s.exit_code = i == 1 ? "1:0" : "0:0";
            st.tasks.push_back(s);
        }
        const auto c = collect(m, st, 1);
        QCOMPARE(c.missing(), std::size_t(3));
        QVERIFY(c.tasks[0].collected());
        QCOMPARE(c.tasks[0].host, std::string("n1"));
        QVERIFY(c.tasks[1].problem.find("unreadable report") != std::string::npos);
        QCOMPARE(c.tasks[1].log_tail, (Strings{"error: out of memory"}));
        QCOMPARE(c.tasks[1].state.exit_code, std::string("1:0"));
        QCOMPARE(c.tasks[2].problem, std::string("no report file"));
        QCOMPARE(c.tasks[2].log_tail, (Strings{"killed"}));
        QVERIFY(!c.tasks[3].state.known());
        QVERIFY(c.tasks[3].log_tail[0].find("does not exist") != std::string::npos);
        QCOMPARE(c.report_paths(), (Strings{f + "/report-n1-7_0.json"}));
        auto j = c.to_json();
        // A log tail that is not UTF-8 still makes JSON (replacement characters), never a throw.
        auto odd = c;
        odd.tasks[2].log_tail = {std::string("bad \xff\xfe byte")};
        QVERIFY(odd.to_json()
                    .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
                    .find("bad \xef\xbf\xbd") != std::string::npos);
        QCOMPARE(j["missing"].get<int>(), 3);
        QCOMPARE(j["tasks"][3]["slurm"]["state"].get<std::string>(), std::string("UNKNOWN"));
    }
};

QTEST_GUILESS_MAIN(TstFleet)
#include "tst_fleet.moc"
