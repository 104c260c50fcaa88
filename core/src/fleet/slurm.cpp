// SPDX-License-Identifier: MIT
#include <switchyard/fleet/slurm.h>

#include "util/safefile.h"
#include "util/textutil.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

extern char** environ;

namespace switchyard::fleet {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxCommandOutput = std::size_t(64) << 20;

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> out;
    for (auto& l : text::split(text, "\n")) {
        if (!l.empty() && l.back() == '\r')
            l.pop_back();
        if (!l.empty())
            out.push_back(std::move(l));
    }
    return out;
}

bool parse_number(std::string_view text, std::int64_t& out) {
    if (text.empty() || text.size() > 18)
        return false;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && p == text.data() + text.size() && out >= 0;
}

std::string first_word(std::string_view text) {
    const auto blank = text.find(' ');
    return std::string(text.substr(0, blank));
}

std::string command_text(const std::vector<std::string>& argv) {
    return text::join(argv, " ");
}

// The message of a failed command: its stderr's first lines, else its stdout's.
std::string failure_text(const CommandResult& r) {
    if (!r.started)
        return r.error;
    auto lines = lines_of(r.err.empty() ? r.out : r.err);
    if (lines.size() > 3)
        lines.resize(3);
    std::string msg = lines.empty() ? "no output" : text::join(lines, "; ");
    return "exit code " + std::to_string(r.exit_code) + ": " + text::untrusted(msg);
}

bool job_gone(const CommandResult& r) {
    return r.started && r.exit_code != 0 &&
           (r.err.find("Invalid job id") != std::string::npos ||
            r.out.find("Invalid job id") != std::string::npos);
}

} // namespace

CommandResult SubprocessRunner::run(const std::vector<std::string>& argv) {
    CommandResult result;
    if (argv.empty()) {
        result.error = "no command";
        return result;
    }
    int out_pipe[2], err_pipe[2], exec_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
        result.error = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
        result.error = std::string("pipe: ") + std::strerror(errno);
        ::close(out_pipe[0]);
        ::close(out_pipe[1]);
        return result;
    }
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        result.error = std::string("fork: ") + std::strerror(errno);
        for (int fd :
             {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]})
            ::close(fd);
        return result;
    }
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        setpgid(0, 0);
        execvp(args[0], args.data());
        const int e = errno;
        (void)!::write(exec_pipe[1], &e, sizeof e);
        _exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(exec_pipe[1]);
    int exec_errno = 0;
    if (::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == ssize_t(sizeof exec_errno)) {
        result.error = argv[0] + ": cannot run: " + std::strerror(exec_errno);
    } else {
        result.started = true;
    }
    ::close(exec_pipe[0]);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(m_timeout_s);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    bool timed_out = false;
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        const int n = poll(fds, 2, int(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[8192];
            const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                if (sinks[i]->size() < kMaxCommandOutput)
                    sinks[i]->append(buf, std::size_t(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0)
            ::close(f.fd);
    if (timed_out) {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.exit_code = 128 + WTERMSIG(status);
    if (timed_out) {
        result.started = false;
        result.error =
            argv[0] + ": no answer within " + std::to_string(int(m_timeout_s)) + " s; killed";
    }
    return result;
}

bool TaskState::terminal() const {
    static const std::set<std::string, std::less<>> live = {
        "PENDING",      "RUNNING",     "CONFIGURING",   "COMPLETING",   "REQUEUED",
        "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",      "SUSPENDED",    "STOPPED",
        "SIGNALING",    "STAGE_OUT",   "RESV_DEL_HOLD", "SPECIAL_EXIT", "PREEMPTED"};
    return known() && !state.empty() && live.find(state) == live.end();
}

json TaskState::to_json() const {
    json j = {{"index", index},
              {"state", known() ? state : std::string("UNKNOWN")},
              {"known_to_slurm", known()},
              {"source", source}};
    if (!reason.empty())
        j["reason"] = reason;
    if (!exit_code.empty())
        j["exit_code"] = exit_code;
    if (!node.empty())
        j["node"] = node;
    return j;
}

std::vector<std::int64_t> array_indices(std::string_view field, std::string_view job_id) {
    std::vector<std::int64_t> out;
    const std::string prefix = std::string(job_id) + "_";
    if (field.substr(0, prefix.size()) != prefix)
        return out;
    auto rest = field.substr(prefix.size());
    if (rest.find('.') != std::string_view::npos)
        return out; // a step: 123_4.batch
    auto bad = [&] {
        return std::invalid_argument("'" + text::untrusted(std::string(field)) +
                                     "' is not an array task id (J_N or J_[A-B%K])");
    };
    if (rest.empty())
        throw bad();
    if (rest.front() != '[') {
        std::int64_t n = 0;
        if (!parse_number(rest, n))
            throw bad();
        out.push_back(n);
        return out;
    }
    if (rest.back() != ']')
        throw bad();
    rest = rest.substr(1, rest.size() - 2);
    rest = rest.substr(0, rest.find('%')); // the throttle: 1234_[2-3%1]
    if (rest.empty())
        throw bad();
    for (const auto& part : text::split(rest, ",")) {
        const auto dash = part.find('-');
        std::int64_t lo = 0, hi = 0;
        if (!parse_number(std::string_view(part).substr(0, dash), lo) ||
            !parse_number(dash == std::string::npos ? std::string_view(part)
                                                    : std::string_view(part).substr(dash + 1),
                          hi) ||
            hi < lo || hi - lo > 4000000)
            throw bad();
        for (std::int64_t n = lo; n <= hi; ++n)
            out.push_back(n);
    }
    return out;
}

namespace {

std::vector<std::int64_t> indices_or_throw(std::string_view field, std::string_view job_id,
                                           const std::string& line, const char* what) {
    try {
        return array_indices(field, job_id);
    } catch (const std::invalid_argument& e) {
        throw SlurmError(std::string(what) + ": cannot read the line '" + text::untrusted(line) +
                         "': " + e.what());
    }
}

} // namespace

std::map<std::int64_t, TaskState> parse_squeue(std::string_view out, std::string_view job_id) {
    std::map<std::int64_t, TaskState> tasks;
    for (const auto& line : lines_of(out)) {
        const auto f = text::split(line, "|", true);
        if (f.size() < 4)
            throw SlurmError("squeue: cannot read the line '" + text::untrusted(line) +
                             "' (expected id|state|reason|nodes)");
        for (auto i : indices_or_throw(f[0], job_id, line, "squeue")) {
            TaskState t;
            t.index = i;
            t.state = f[1];
            t.reason = f[2] == "None" ? "" : f[2];
            t.node = f[3];
            t.source = "squeue";
            tasks[i] = t;
        }
    }
    return tasks;
}

std::map<std::int64_t, TaskState> parse_sacct(std::string_view out, std::string_view job_id) {
    std::map<std::int64_t, TaskState> tasks;
    for (const auto& line : lines_of(out)) {
        const auto f = text::split(line, "|", true);
        if (f.size() < 4)
            throw SlurmError("sacct: cannot read the line '" + text::untrusted(line) +
                             "' (expected JobID|State|ExitCode|NodeList)");
        for (auto i : indices_or_throw(f[0], job_id, line, "sacct")) {
            TaskState t;
            t.index = i;
            t.state = first_word(f[1]); // "CANCELLED by 0"
            t.exit_code = f[2];
            t.node = f[3] == "None assigned" ? "" : f[3];
            t.source = "sacct";
            tasks[i] = t; // a requeued task's later record wins
        }
    }
    return tasks;
}

std::map<std::int64_t, TaskState> parse_scontrol(std::string_view out, std::string_view job_id) {
    std::map<std::int64_t, TaskState> tasks;
    for (const auto& line : lines_of(out)) {
        std::map<std::string, std::string> kv;
        for (const auto& token : text::split(line, " ")) {
            const auto eq = token.find('=');
            if (eq != std::string::npos && kv.find(token.substr(0, eq)) == kv.end())
                kv[token.substr(0, eq)] = token.substr(eq + 1);
        }
        if (kv["ArrayJobId"] != job_id || kv["ArrayTaskId"].empty())
            continue;
        for (auto i :
             indices_or_throw(std::string(job_id) + "_" +
                                  (kv["ArrayTaskId"].find_first_of(",-") != std::string::npos
                                       ? "[" + kv["ArrayTaskId"] + "]"
                                       : kv["ArrayTaskId"]),
                              job_id, line, "scontrol")) {
            TaskState t;
            t.index = i;
            t.state = kv["JobState"];
            t.reason = kv["Reason"] == "None" ? "" : kv["Reason"];
            t.exit_code = kv["ExitCode"];
            t.node = kv["NodeList"] == "(null)" ? "" : kv["NodeList"];
            t.source = "scontrol";
            tasks[i] = t;
        }
    }
    return tasks;
}

bool FleetStatus::finished() const {
    return std::all_of(tasks.begin(), tasks.end(),
                       [](const TaskState& t) { return !t.known() || t.terminal(); });
}

std::string FleetStatus::summary() const {
    std::map<std::string, int> counts;
    for (const auto& t : tasks)
        ++counts[t.known() ? t.state : "no longer known to Slurm"];
    std::vector<std::string> parts;
    for (const auto& [state, n] : counts)
        parts.push_back(std::to_string(n) + " " + state);
    return text::join(parts, ", ");
}

json FleetStatus::to_json() const {
    json t = json::array();
    for (const auto& s : tasks)
        t.push_back(s.to_json());
    return {{"format", "switchyard.fleet-status"},
            {"format_version", 1},
            {"job_id", job_id},
            {"finished", finished()},
            {"accounting", accounting},
            {"summary", summary()},
            {"tasks", t},
            {"notes", notes}};
}

FleetStatus query_status(const Manifest& m, CommandRunner& runner) {
    FleetStatus status;
    status.job_id = m.job_id;
    const std::vector<std::string> squeue = {"squeue", "--array", "--noheader",
                                             "--jobs=" + m.job_id, "--format=%i|%T|%r|%N"};
    const auto q = runner.run(squeue);
    std::map<std::int64_t, TaskState> live;
    if (q.started && q.exit_code == 0)
        live = parse_squeue(q.out, m.job_id);
    else if (!job_gone(q))
        throw SlurmError(command_text(squeue) + " failed (" + failure_text(q) +
                         "); is Slurm reachable from here (SLURM_CONF)?");

    std::map<std::int64_t, TaskState> past;
    bool need_past = live.size() < m.targets.size();
    if (need_past) {
        const std::vector<std::string> sacct = {
            "sacct",       "--jobs=" + m.job_id, "--allocations",
            "--parsable2", "--noheader",         "--format=JobID,State,ExitCode,NodeList"};
        const auto a = runner.run(sacct);
        if (a.started && a.exit_code == 0) {
            status.accounting = true;
            past = parse_sacct(a.out, m.job_id);
        } else {
            status.notes.push_back("sacct cannot answer (" + failure_text(a) +
                                   "): finished tasks' states come from scontrol while the "
                                   "controller keeps them (MinJobAge), then from the reports "
                                   "and logs on disk");
            const std::vector<std::string> show = {"scontrol", "--oneliner", "show", "job",
                                                   m.job_id};
            const auto s = runner.run(show);
            if (s.started && s.exit_code == 0)
                past = parse_scontrol(s.out, m.job_id);
            else if (!job_gone(s))
                status.notes.push_back(command_text(show) + " failed (" + failure_text(s) + ")");
        }
    }
    for (const auto& target : m.targets) {
        TaskState t;
        t.index = target.index;
        if (auto it = live.find(target.index); it != live.end())
            t = it->second;
        else if (auto p = past.find(target.index); p != past.end())
            t = p->second;
        status.tasks.push_back(t);
    }
    return status;
}

std::string parse_sbatch_job_id(std::string_view out) {
    const auto lines = lines_of(out);
    const std::string last = lines.empty() ? "" : lines.back();
    const std::string id = last.substr(0, last.find(';'));
    std::int64_t n = 0;
    if (!parse_number(id, n))
        throw SlurmError("sbatch --parsable printed '" + text::untrusted(std::string(out)) +
                         "', not a job id");
    return id;
}

Manifest submit(const Plan& plan, CommandRunner& runner) {
    const auto& r = plan.request;
    std::error_code ec;
    std::filesystem::create_directories(r.folder + "/logs", ec);
    if (ec)
        throw std::runtime_error(r.folder + "/logs: cannot create: " + ec.message());
    if (std::filesystem::exists(r.folder + "/" + Manifest::kFileName))
        throw std::runtime_error(r.folder + "/" + Manifest::kFileName +
                                 " exists: the folder already holds a fleet; give another "
                                 "--folder (or remove fleet.json to reuse it)");
    safefile::write_file(plan.script_path(), plan.script);
    ::chmod(plan.script_path().c_str(), 0755);

    const bool pinned = plan.placement != Placement::None;
    std::vector<std::string> sbatch = {"sbatch", "--parsable"};
    if (pinned)
        sbatch.push_back("--hold");
    sbatch.push_back(plan.script_path());
    const auto s = runner.run(sbatch);
    if (!s.started || s.exit_code != 0)
        throw SlurmError(command_text(sbatch) + " failed (" + failure_text(s) + ")");
    const auto job_id = parse_sbatch_job_id(s.out);

    Manifest m;
    m.job_id = job_id;
    m.job_name = r.job_name;
    m.folder = r.folder;
    m.cli = r.cli;
    m.submitted = text::utc_now_iso8601();
    m.throttle = r.throttle;
    m.targets = plan.targets;
    m.profile_args = r.profile_args;
    m.sbatch_options = plan.sbatch_options;
    try {
        m.save();
    } catch (const std::exception& e) {
        if (!pinned)
            throw std::runtime_error(std::string(e.what()) + "; job " + job_id +
                                     " runs without it: status and collect need it");
        const auto c = runner.run({"scancel", job_id});
        throw std::runtime_error(
            std::string(e.what()) + "; job " + job_id +
            (c.started && c.exit_code == 0 ? " was cancelled" : " is held: scancel " + job_id));
    }

    if (pinned) {
        auto cancel = [&](const std::string& why) {
            std::filesystem::remove(r.folder + "/" + Manifest::kFileName, ec);
            const std::vector<std::string> scancel = {"scancel", job_id};
            const auto c = runner.run(scancel);
            throw SlurmError(why + "; job " + job_id +
                             (c.started && c.exit_code == 0
                                  ? " was cancelled before any task ran"
                                  : " could not be cancelled (" + failure_text(c) +
                                        "): cancel it with scancel " + job_id));
        };
        for (const auto& pin : plan.pin_commands(job_id)) {
            const auto u = runner.run(pin);
            if (!u.started || u.exit_code != 0)
                cancel(command_text(pin) + " failed (" + failure_text(u) + ")");
        }
        const std::vector<std::string> release = {"scontrol", "release", job_id};
        const auto rel = runner.run(release);
        if (!rel.started || rel.exit_code != 0)
            cancel(command_text(release) + " failed (" + failure_text(rel) + ")");
    }
    return m;
}

} // namespace switchyard::fleet
