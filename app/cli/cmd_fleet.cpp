// SPDX-License-Identifier: MIT
// fleet submit (one sbatch job array, one task per target), fleet status (squeue, sacct or
// scontrol), fleet collect (the reports in the shared folder, and why any is missing; with
// --tune or --regret-map, the tuning per machine class and the regret map).
#include "cmd_fleet.h"

#include "cmd_profile.h"

#include <switchyard/fleet/collect.h>
#include <switchyard/fleet/fleet.h>
#include <switchyard/fleet/fleettuning.h>
#include <switchyard/fleet/slurm.h>
#include <switchyard/report/report.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <iostream>
#include <memory>
#include <thread>

namespace switchyard::cli {
namespace {

using nlohmann::json;

// `fleet collect` with reports missing, `fleet status --wait` past its timeout.
constexpr int kIncomplete = 3;

std::string self_executable() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        throw std::runtime_error("cannot tell this program's path (/proc/self/exe); give --cli");
    return std::string(buf, std::size_t(n));
}

// The profile settings after `--`, parsed by the profile command's own options and their
// names checked (ops, sizes, device kinds, cells, variant), so a typo is a usage error now,
// not a failed task on every node later.
void check_profile_args(const std::vector<std::string>& args) {
    try {
        checked_profile_settings(args);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("profile settings (after --): " + std::string(e.what()) +
                                    "; nothing was written or submitted");
    }
}

struct SubmitOptions {
    fleet::SubmitRequest request;
    bool dry_run = false, json = false;
};

int run_submit(SubmitOptions o) {
    if (o.request.cli.empty())
        o.request.cli = self_executable();
    check_profile_args(o.request.profile_args);
    const auto plan = fleet::plan(o.request);
    if (o.dry_run) {
        if (o.json) {
            json pins = json::array();
            for (const auto& p : plan.pin_commands("<job>"))
                pins.push_back(p);
            json targets = json::array();
            for (const auto& t : plan.targets)
                targets.push_back(t.to_json());
            std::cout << json_text(json{{"format", "switchyard.fleet-plan"},
                                        {"format_version", 1},
                                        {"folder", plan.request.folder},
                                        {"script", plan.script},
                                        {"targets", targets},
                                        {"pin_commands", pins}},
                                   1)
                      << "\n";
            return Ok;
        }
        std::cout << plan.script;
        const auto pins = plan.pin_commands("<job>");
        if (!pins.empty()) {
            std::cout << "\n# fleet submit runs: sbatch --parsable --hold " << plan.script_path()
                      << "\n";
            for (const auto& p : pins) {
                std::cout << "#";
                for (const auto& a : p)
                    std::cout << " " << a;
                std::cout << "\n";
            }
            std::cout << "# scontrol release <job>\n";
        } else {
            std::cout << "\n# fleet submit runs: sbatch --parsable " << plan.script_path() << "\n";
        }
        return Ok;
    }
    fleet::SubprocessRunner runner;
    const auto m = fleet::submit(plan, runner);
    if (o.json) {
        std::cout << json_text(m.to_json(), 1) << "\n";
        return Ok;
    }
    std::cout << "Submitted job " << m.job_id << ": " << m.tasks() << " task"
              << (m.tasks() == 1 ? "" : "s") << " (" << m.folder << "/fleet.sbatch)\n";
    for (const auto& t : m.targets)
        std::cout << "  task " << t.index << ": " << t.label() << "\n";
    std::cout << "Reports: " << m.folder << "/report-<host>-" << m.job_id
              << "_<task>.json; logs in " << m.folder << "/logs/\n"
              << "Next: switchyard-cli fleet status --folder " << m.folder
              << " --wait, then fleet collect --folder " << m.folder << "\n";
    return Ok;
}

std::string state_text(const fleet::TaskState& s) {
    return s.known() ? s.state : "gone";
}

std::string detail_text(const fleet::TaskState& s) {
    if (!s.known())
        return "no longer known to Slurm";
    std::string d = s.reason;
    if (!s.exit_code.empty())
        d += (d.empty() ? "exit " : ", exit ") + s.exit_code;
    return d.empty() ? "-" : d;
}

void print_status(const fleet::Manifest& m, const fleet::FleetStatus& st) {
    std::cout << "Fleet job " << m.job_id << " (" << untrusted(m.job_name) << "), " << m.tasks()
              << (m.tasks() == 1 ? " task" : " tasks") << ", folder " << untrusted(m.folder)
              << ", submitted " << m.submitted << "\n";
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < st.tasks.size(); ++i) {
        const auto& s = st.tasks[i];
        rows.push_back({std::to_string(s.index), m.targets[i].label(), state_text(s),
                        detail_text(s), s.node.empty() ? "-" : s.node, s.known() ? s.source : "-"});
    }
    std::cout << format_table({"task", "target", "state", "reason/exit", "node", "from"}, rows);
    for (const auto& n : st.notes)
        std::cout << "note: " << untrusted(n) << "\n";
    std::cout << st.summary() << (st.finished() ? ": finished\n" : ": not finished\n");
}

struct StatusOptions {
    std::string folder;
    bool json = false, wait = false;
    double timeout = 3600, interval = 5;
};

int run_status(const StatusOptions& o) {
    const auto m = fleet::Manifest::load(o.folder);
    fleet::SubprocessRunner runner;
    auto st = fleet::query_status(m, runner);
    if (o.wait) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout);
        std::string last;
        while (!st.finished() && std::chrono::steady_clock::now() < deadline) {
            if (const auto s = st.summary(); s != last) {
                std::cerr << "fleet " << m.job_id << ": " << s << std::endl;
                last = s;
            }
            std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
            // A controller that does not answer for a while (a restart, a failover) is
            // waited for like a task, until the timeout.
            try {
                st = fleet::query_status(m, runner);
            } catch (const fleet::SlurmError& e) {
                std::cerr << "switchyard-cli: warning: " << e.what() << "; asking again\n";
            }
        }
    }
    if (o.json)
        std::cout << json_text(st.to_json(), 1) << "\n";
    else
        print_status(m, st);
    if (o.wait && !st.finished()) {
        std::cerr << "switchyard-cli: fleet " << m.job_id << " is not finished after " << o.timeout
                  << " s (" << st.summary() << ")\n";
        return kIncomplete;
    }
    return Ok;
}

struct CollectOptions {
    std::string folder;
    bool json = false, paths = false;
    bool tune = false, regret_map = false;
    std::string tuning_dir; // -o: where --tune writes (default: <folder>/tuning)
    std::int64_t tail = 10;
};

// --tune, --regret-map: the collected reports tuned per machine class (written with --tune).
// Throws std::runtime_error when no collected report has dispatch findings.
fleet::FleetTuning tune_collection(const fleet::Collection& c, const CollectOptions& o,
                                   std::vector<Report>& reports) {
    const auto paths = c.report_paths();
    reports.reserve(paths.size()); // the nodes point into it
    std::vector<fleet::FleetNode> nodes;
    for (const auto& p : paths) {
        reports.push_back(Report::load(p));
        nodes.push_back({fleet::node_name(p), p, &reports.back()});
    }
    auto ft = fleet::tune_fleet(nodes);
    const bool any = std::any_of(ft.classes.begin(), ft.classes.end(),
                                 [](const fleet::ClassTuning& k) { return k.tunable(); });
    if (!any) {
        for (const auto& k : ft.classes)
            for (const auto& n : k.notes)
                std::cerr << "note: " << untrusted(n) << "\n";
        for (const auto& n : ft.notes)
            std::cerr << "note: " << untrusted(n) << "\n";
        throw std::runtime_error(
            "none of the " + std::to_string(paths.size()) +
            " collected reports has dispatch findings, so there is nothing to tune or map: "
            "submit the fleet again with every variant measured, fleet submit ... -- "
            "--all-variants --repeat 3");
    }
    if (o.tune)
        fleet::write_tunings(ft, o.tuning_dir.empty() ? o.folder + "/tuning" : o.tuning_dir);
    return ft;
}

int run_collect(const CollectOptions& o) {
    const auto m = fleet::Manifest::load(o.folder);
    fleet::SubprocessRunner runner;
    fleet::FleetStatus st;
    try {
        st = fleet::query_status(m, runner);
    } catch (const fleet::SlurmError& e) {
        // The reports are on disk whatever Slurm says: collect them, and say why the states
        // are missing.
        st.job_id = m.job_id;
        for (const auto& t : m.targets) {
            fleet::TaskState s;
            s.index = t.index;
            st.tasks.push_back(s);
        }
        st.notes.push_back(std::string("Slurm could not be asked: ") + e.what());
    }
    const auto c = fleet::collect(m, st, std::size_t(o.tail));
    const bool tuning = (o.tune || o.regret_map) && !c.report_paths().empty();
    std::vector<Report> reports;
    const auto ft = tuning ? tune_collection(c, o, reports) : fleet::FleetTuning{};
    if (o.json) {
        auto j = c.to_json();
        if (tuning)
            j["fleet_tuning"] = ft.to_json();
        std::cout << json_text(j, 1) << "\n";
    } else if (o.paths) {
        for (const auto& p : c.report_paths())
            std::cout << untrusted(p) << "\n";
    } else {
        std::vector<std::vector<std::string>> rows;
        for (const auto& t : c.tasks)
            rows.push_back({std::to_string(t.target.index), t.target.label(), state_text(t.state),
                            detail_text(t.state),
                            t.collected() ? t.report : "missing: " + t.problem});
        std::cout << format_table({"task", "target", "state", "reason/exit", "report"}, rows);
        for (const auto& t : c.tasks) {
            if (t.collected())
                continue;
            std::cout << "\ntask " << t.target.index << " (" << untrusted(t.target.label())
                      << "): " << untrusted(t.problem) << "; Slurm: " << state_text(t.state) << " ("
                      << detail_text(t.state) << ")\n"
                      << "  last lines of " << untrusted(t.log) << ":\n";
            for (const auto& line : t.log_tail)
                std::cout << "  | " << untrusted(line) << "\n";
        }
        for (const auto& t : c.tasks)
            for (const auto& e : t.extra_reports)
                std::cout << "note: task " << t.target.index << " has another report, "
                          << untrusted(e) << " (not used)\n";
        for (const auto& n : c.notes)
            std::cout << "note: " << untrusted(n) << "\n";
        std::cout << c.tasks.size() - c.missing() << " of " << c.tasks.size()
                  << " reports collected\n";
        if (tuning)
            std::cout << "\nTuning per machine class (the entries all its nodes agree on"
                      << (o.tune ? "" : "; --tune writes them") << "):\n"
                      << ft.summary() << "\n"
                      << ft.regret_map_text();
        else if (o.tune || o.regret_map)
            std::cout << "no report collected: nothing to tune\n";
    }
    if (c.missing() > 0) {
        if (o.json || o.paths)
            std::cerr << "switchyard-cli: " << c.missing() << " of " << c.tasks.size()
                      << " reports missing\n";
        return kIncomplete;
    }
    return Ok;
}

} // namespace

void add_fleet_commands(CLI::App& app, Context& context) {
    auto* fleet_cmd = app.add_subcommand(
        "fleet", "Profile on many Slurm nodes: submit one job array, follow it, collect the "
                 "reports (exit codes: 3 = reports missing, or --wait timed out)");
    fleet_cmd->require_subcommand(1);
    {
        auto o = std::make_shared<SubmitOptions>();
        auto* cmd = fleet_cmd->add_subcommand(
            "submit", "Write and submit one sbatch job array, one task per target, each running "
                      "switchyard-cli profile with the settings after -- into the shared folder");
        auto& r = o->request;
        cmd->add_option("--folder", r.folder,
                        "Shared folder every node can write: reports, logs/, fleet.json")
            ->required();
        cmd->add_option("--tasks", r.tasks, "Copies without placement (default 1)")
            ->check(integer_in(1, 100000));
        cmd->add_option("--nodelist", r.nodelist,
                        "Nodes (a,b or a Slurm hostlist like node[01-04]): one task per node when "
                        "several, else passed through");
        cmd->add_option("--partition", r.partition,
                        "Partitions p1,p2: one task per partition when several, else passed "
                        "through");
        cmd->add_option("--constraint", r.constraint,
                        "Node features f1,f2: one task per feature when several, else passed "
                        "through");
        cmd->add_option("--gres", r.gres,
                        "Generic resources gpu:h100:1,gpu:a100:1: one task per entry when "
                        "several, else passed through");
        cmd->add_option("--account", r.account, "Passed through to sbatch");
        cmd->add_option("--time", r.time, "Time limit per task, passed through to sbatch");
        cmd->add_option("--sbatch-arg", r.sbatch_args,
                        "Any other sbatch option, one per use: --sbatch-arg=--mem=4G")
            ->allow_extra_args(false);
        cmd->add_option("--throttle", r.throttle, "At most this many tasks at once (--array=...%K)")
            ->check(integer_in(1, 100000));
        cmd->add_flag("--exclusive", r.exclusive, "Each task gets its node to itself");
        cmd->add_option("--job-name", r.job_name, "The job's name")->capture_default_str();
        cmd->add_option("--cli", r.cli,
                        "switchyard-cli on the nodes (default: this program's absolute path)");
        cmd->add_flag("--dry-run", o->dry_run, "Print the batch script; submit nothing");
        cmd->add_flag("--json", o->json, "Machine-readable output (the manifest, or the plan)");
        cmd->add_option("profile_settings", r.profile_args,
                        "After --: the settings of switchyard-cli profile every task runs");
        set_action(cmd, context, [o] { return run_submit(*o); });
    }
    {
        auto o = std::make_shared<StatusOptions>();
        auto* cmd = fleet_cmd->add_subcommand(
            "status", "Each task's state (squeue; sacct, or scontrol without accounting)");
        cmd->add_option("--folder", o->folder, "The folder given to fleet submit")->required();
        cmd->add_flag("--json", o->json, "Machine-readable output");
        cmd->add_flag("--wait", o->wait,
                      "Poll until no task is pending or running (exit 3 after --timeout)");
        cmd->add_option("--timeout", o->timeout, "Seconds --wait waits at most")
            ->check(number_in(0, true, 30 * 24 * 3600, "a finite number of seconds"))
            ->capture_default_str();
        cmd->add_option("--interval", o->interval, "Seconds between polls")
            ->check(number_in(0.1, false, 3600, "a finite number of seconds"))
            ->capture_default_str();
        set_action(cmd, context, [o] { return run_status(*o); });
    }
    {
        auto o = std::make_shared<CollectOptions>();
        auto* cmd = fleet_cmd->add_subcommand(
            "collect", "The reports in the shared folder; for each missing one the task's "
                       "state, exit code and log tail (exit 3 when any is missing); with --tune, "
                       "a tuning per machine class and the regret map");
        cmd->add_option("--folder", o->folder, "The folder given to fleet submit")->required();
        auto* j = cmd->add_flag("--json", o->json, "Machine-readable output");
        auto* p = cmd->add_flag("--paths", o->paths,
                                "Only the collected reports' paths, one a line (for compare)");
        j->excludes(p);
        auto* tune = cmd->add_flag(
            "--tune", o->tune,
            "Write one tuning per machine class (the reports' machine_id), of the entries all "
            "its nodes agree on, and show the regret map (needs profile --all-variants)");
        auto* regret = cmd->add_flag(
            "--regret-map", o->regret_map,
            "Show, per machine class, where the chain's pick was slower than another cell and "
            "by how much, on how many nodes (writes nothing)");
        auto* out = cmd->add_option("-o,--output", o->tuning_dir,
                                    "The folder --tune writes MACHINE_ID.tuning files to "
                                    "(default: FOLDER/tuning)");
        out->needs(tune);
        tune->excludes(p);
        regret->excludes(p);
        cmd->add_option("--tail", o->tail, "Log lines shown per missing report")
            ->check(integer_in(0, 1000))
            ->capture_default_str();
        set_action(cmd, context, [o] { return run_collect(*o); });
    }
}

} // namespace switchyard::cli
