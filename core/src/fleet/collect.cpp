// SPDX-License-Identifier: MIT
#include <switchyard/fleet/collect.h>

#include <switchyard/report/report.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace switchyard::fleet {

using nlohmann::json;

std::vector<std::string> tail_lines(const std::string& path, std::size_t lines) {
    constexpr off_t kTailBytes = 64 * 1024;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return {};
    struct stat st {};
    std::string text;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const off_t start = st.st_size > kTailBytes ? st.st_size - kTailBytes : 0;
        text.resize(std::size_t(st.st_size - start));
        const ssize_t got = pread(fd, text.data(), text.size(), start);
        text.resize(got > 0 ? std::size_t(got) : 0);
        if (start > 0) { // the first line is cut: drop it
            const auto nl = text.find('\n');
            text.erase(0, nl == std::string::npos ? text.size() : nl + 1);
        }
    }
    ::close(fd);
    std::vector<std::string> out;
    std::size_t end = text.size();
    if (end > 0 && text[end - 1] == '\n')
        --end;
    while (out.size() < lines && end > 0) {
        const auto nl = text.rfind('\n', end - 1);
        const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
        out.push_back(text.substr(begin, end - begin));
        if (nl == std::string::npos)
            break;
        end = nl;
    }
    std::reverse(out.begin(), out.end());
    return out;
}

json CollectedTask::to_json() const {
    json j = {{"index", target.index},    {"target", target.to_json()}, {"label", target.label()},
              {"slurm", state.to_json()}, {"collected", collected()},   {"log", log}};
    if (collected()) {
        j["report"] = report;
        j["host"] = host;
    } else {
        j["problem"] = problem;
        j["log_tail"] = log_tail;
    }
    if (!extra_reports.empty())
        j["extra_reports"] = extra_reports;
    return j;
}

std::size_t Collection::missing() const {
    return std::size_t(std::count_if(tasks.begin(), tasks.end(),
                                     [](const CollectedTask& t) { return !t.collected(); }));
}

std::vector<std::string> Collection::report_paths() const {
    std::vector<std::string> out;
    for (const auto& t : tasks)
        if (t.collected())
            out.push_back(t.report);
    return out;
}

json Collection::to_json() const {
    json t = json::array();
    for (const auto& c : tasks)
        t.push_back(c.to_json());
    return {{"format", "switchyard.fleet-collection"},
            {"format_version", 1},
            {"job_id", job_id},
            {"tasks", t},
            {"collected", tasks.size() - missing()},
            {"missing", missing()},
            {"reports", report_paths()},
            {"notes", notes}};
}

Collection collect(const Manifest& m, const FleetStatus& status, std::size_t tail) {
    Collection c;
    c.job_id = m.job_id;
    c.notes = status.notes;
    // Every report of this job in the folder, by task (newest first when a requeued task
    // wrote one on another host too).
    std::map<std::int64_t, std::vector<std::pair<std::filesystem::file_time_type, std::string>>>
        found;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(m.folder, ec), end; !ec && it != end;
         it.increment(ec)) {
        const auto name = it->path().filename().string();
        const auto parsed = parse_report_file_name(name);
        if (!parsed || parsed->job_id != m.job_id)
            continue;
        std::error_code tec;
        const auto when = std::filesystem::last_write_time(it->path(), tec);
        found[parsed->task].push_back({when, it->path().string()});
    }
    if (ec)
        c.notes.push_back(m.folder + ": cannot list: " + ec.message());
    std::map<std::int64_t, TaskState> states;
    for (const auto& s : status.tasks)
        states[s.index] = s;
    for (const auto& target : m.targets) {
        CollectedTask t;
        t.target = target;
        t.state = states.count(target.index) ? states[target.index] : TaskState{};
        t.state.index = target.index;
        t.log = log_path(m.folder, m.job_id, target.index);
        auto& reports = found[target.index];
        std::sort(reports.begin(), reports.end(), std::greater<>());
        std::vector<std::string> problems;
        for (const auto& [when, path] : reports) {
            if (!t.report.empty()) {
                t.extra_reports.push_back(path);
                continue;
            }
            try {
                (void)Report::load(path);
                t.report = path;
                if (auto n =
                        parse_report_file_name(std::filesystem::path(path).filename().string()))
                    t.host = n->host;
            } catch (const std::exception& e) {
                problems.push_back(std::string("unreadable report: ") + e.what());
            }
        }
        if (t.report.empty()) {
            t.problem = problems.empty() ? "no report file" : problems.front();
            t.log_tail = tail_lines(t.log, tail);
            if (t.log_tail.empty() && !std::filesystem::exists(t.log, ec))
                t.log_tail.push_back("(no log: " + t.log + " does not exist)");
        }
        c.tasks.push_back(std::move(t));
    }
    return c;
}

} // namespace switchyard::fleet
