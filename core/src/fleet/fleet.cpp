// SPDX-License-Identifier: MIT
#include <switchyard/fleet/fleet.h>

#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <stdexcept>

namespace switchyard::fleet {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxTargets = 100000; // Slurm's MaxArraySize is at most 4000001

bool parse_index(std::string_view text, std::int64_t& out) {
    if (text.empty() || text.size() > 18)
        return false;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && p == text.data() + text.size() && out >= 0;
}

// A value the batch script's #SBATCH lines or a shell word cannot carry.
void check_value(std::string_view option, std::string_view value) {
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f)
            throw std::invalid_argument(std::string(option) + ": " +
                                        text::untrusted(text::quoted(value)) +
                                        " holds a control character; a batch script line "
                                        "cannot carry it");
    }
}

// #SBATCH option values: sbatch splits the line at blanks unless they are double-quoted.
std::string sbatch_word(std::string_view text) {
    if (text.find_first_of(" \t") == std::string_view::npos)
        return std::string(text);
    return "\"" + std::string(text) + "\"";
}

} // namespace

std::string_view to_string(Placement p) {
    switch (p) {
    case Placement::None:
        return "none";
    case Placement::Node:
        return "node";
    case Placement::Partition:
        return "partition";
    case Placement::Constraint:
        return "constraint";
    case Placement::Gres:
        return "gres";
    }
    return "none";
}

std::string_view option_of(Placement p) {
    switch (p) {
    case Placement::Node:
        return "--nodelist";
    case Placement::Partition:
        return "--partition";
    case Placement::Constraint:
        return "--constraint";
    case Placement::Gres:
        return "--gres";
    case Placement::None:
        break;
    }
    return "--tasks";
}

std::string_view scontrol_field(Placement p) {
    switch (p) {
    case Placement::Node:
        return "NodeList";
    case Placement::Partition:
        return "Partition";
    case Placement::Constraint:
        return "Features";
    case Placement::Gres:
        return "Gres";
    case Placement::None:
        break;
    }
    return "";
}

std::optional<Placement> placement_from_string(std::string_view text) {
    for (auto p : {Placement::None, Placement::Node, Placement::Partition, Placement::Constraint,
                   Placement::Gres})
        if (to_string(p) == text)
            return p;
    return std::nullopt;
}

std::string Target::label() const {
    if (placement == Placement::None)
        return "copy " + std::to_string(index);
    return std::string(to_string(placement)) + " " + value;
}

json Target::to_json() const {
    return {{"index", index}, {"placement", std::string(to_string(placement))}, {"value", value}};
}

Target Target::from_json(const json& j) {
    Target t;
    t.index = j.at("index").get<std::int64_t>();
    const auto p = j.at("placement").get<std::string>();
    const auto placement = placement_from_string(p);
    if (!placement)
        throw std::runtime_error("placement: unknown value '" + p + "'");
    t.placement = *placement;
    t.value = j.at("value").get<std::string>();
    return t;
}

std::vector<std::string> expand_hostlist(std::string_view text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    auto fail = [&](const std::string& why) {
        throw std::invalid_argument("--nodelist: " + why + " in " +
                                    text::untrusted(text::quoted(text)));
    };
    while (i < text.size()) {
        // One entry: prefix[ranges]suffix, up to a comma outside brackets.
        std::size_t end = i;
        int depth = 0;
        while (end < text.size() && (depth > 0 || text[end] != ',')) {
            if (text[end] == '[')
                ++depth;
            else if (text[end] == ']' && --depth < 0)
                fail("a ']' without its '['");
            ++end;
        }
        if (depth != 0)
            fail("an unclosed '['");
        const auto entry = text.substr(i, end - i);
        i = end + 1;
        if (entry.empty())
            continue;
        const auto open = entry.find('[');
        if (open == std::string_view::npos) {
            out.emplace_back(entry);
        } else {
            const auto close = entry.find(']', open);
            const auto prefix = entry.substr(0, open);
            const auto suffix = entry.substr(close + 1);
            if (suffix.find('[') != std::string_view::npos)
                fail("more than one bracket group in one name (give them one by one)");
            for (const auto& range : text::split(entry.substr(open + 1, close - open - 1), ",")) {
                const auto dash = range.find('-');
                const std::string lo_text = range.substr(0, dash);
                const std::string hi_text =
                    dash == std::string::npos ? lo_text : range.substr(dash + 1);
                std::int64_t lo = 0, hi = 0;
                if (!parse_index(lo_text, lo) || !parse_index(hi_text, hi))
                    fail("'" + range + "' is not a number or a range N-M");
                if (hi < lo)
                    fail("the range '" + range + "' runs backwards");
                if (std::size_t(hi - lo) >= kMaxTargets)
                    fail("more than 100000 hosts");
                // Zero padding follows the lower bound's width ("01-10": 01 ... 10).
                const std::size_t width = lo_text.size();
                for (std::int64_t n = lo; n <= hi; ++n) {
                    auto digits = std::to_string(n);
                    if (digits.size() < width)
                        digits.insert(0, width - digits.size(), '0');
                    out.push_back(std::string(prefix) + digits + std::string(suffix));
                    if (out.size() > kMaxTargets)
                        fail("more than 100000 hosts");
                }
            }
        }
        if (out.size() > kMaxTargets)
            fail("more than 100000 hosts");
    }
    return out;
}

std::string shell_quote(std::string_view text) {
    std::string out = "'";
    for (const char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string Plan::script_path() const {
    return request.folder + "/fleet.sbatch";
}

std::vector<std::vector<std::string>> Plan::pin_commands(const std::string& job_id) const {
    std::vector<std::vector<std::string>> out;
    if (placement == Placement::None)
        return out;
    for (const auto& t : targets)
        out.push_back({"scontrol", "update", "JobId=" + job_id + "_" + std::to_string(t.index),
                       std::string(scontrol_field(placement)) + "=" + t.value});
    return out;
}

Plan plan(SubmitRequest r) {
    Plan p;
    if (r.folder.empty())
        throw std::invalid_argument("--folder: give the shared folder every node can write");
    check_value("--folder", r.folder);
    if (r.folder.find_first_of(" \t'\"\\%$`") != std::string::npos)
        throw std::invalid_argument(
            "--folder: " + text::untrusted(text::quoted(r.folder)) +
            " holds a blank, a quote, '\\', '%', '$' or '`', which sbatch's --output pattern "
            "and the batch script cannot carry; choose a plainer path");
    r.folder = std::filesystem::absolute(r.folder).lexically_normal().string();
    while (r.folder.size() > 1 && r.folder.back() == '/')
        r.folder.pop_back();
    if (r.cli.empty() || r.cli.front() != '/')
        throw std::invalid_argument("--cli: give the absolute path of switchyard-cli on the "
                                    "nodes, got " +
                                    text::untrusted(text::quoted(r.cli)));
    check_value("--cli", r.cli);
    if (r.job_name.empty())
        throw std::invalid_argument("--job-name: must not be empty");
    for (const auto& [option, value] :
         {std::pair<const char*, const std::string*>{"--job-name", &r.job_name},
          {"--nodelist", &r.nodelist},
          {"--partition", &r.partition},
          {"--constraint", &r.constraint},
          {"--gres", &r.gres},
          {"--account", &r.account},
          {"--time", &r.time}})
        check_value(option, *value);
    for (const auto& a : r.sbatch_args) {
        check_value("--sbatch-arg", a);
        if (a.rfind("--", 0) != 0 && a.rfind("-", 0) != 0)
            throw std::invalid_argument("--sbatch-arg: " + text::quoted(a) +
                                        " is not an sbatch option; give it as "
                                        "--sbatch-arg=--mem=4G (one option per --sbatch-arg)");
        for (const char* own : {"--array", "-a", "--output", "-o", "--job-name", "-J", "--hold",
                                "-H", "--parsable", "--wrap"})
            if (a == own || a.rfind(std::string(own) + "=", 0) == 0 ||
                (own[1] != '-' && a.size() > 2 && a.rfind(own, 0) == 0))
                throw std::invalid_argument("--sbatch-arg: " + text::quoted(a) +
                                            " is set by fleet submit itself (" + std::string(own) +
                                            "); use its own option");
    }
    for (const auto& a : r.profile_args) {
        check_value("profile settings", a);
        if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0 ||
            (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-'))
            throw std::invalid_argument(
                "profile settings: " + text::quoted(a) +
                " is set by fleet submit (each task writes <folder>/report-<host>-<job>_<task>"
                ".json); leave it out");
    }
    if (r.throttle < 0)
        throw std::invalid_argument("--throttle: must be at least 1");

    // The one option with several values gives the targets.
    struct Listed {
        Placement placement;
        std::vector<std::string> values;
    };
    std::vector<Listed> lists;
    const std::pair<Placement, const std::string*> options[] = {
        {Placement::Node, &r.nodelist},
        {Placement::Partition, &r.partition},
        {Placement::Constraint, &r.constraint},
        {Placement::Gres, &r.gres}};
    for (const auto& [placement, value] : options) {
        if (value->empty())
            continue;
        auto values =
            placement == Placement::Node ? expand_hostlist(*value) : text::split(*value, ",");
        if (values.empty())
            throw std::invalid_argument(std::string(option_of(placement)) + ": " +
                                        text::quoted(*value) + " names nothing");
        if (values.size() > 1)
            lists.push_back({placement, std::move(values)});
    }
    if (lists.size() > 1)
        throw std::invalid_argument(
            std::string(option_of(lists[0].placement)) + " and " +
            std::string(option_of(lists[1].placement)) +
            " both list several values; one option gives one task per value, the others take "
            "one value for every task (submit one fleet per combination)");
    if (!lists.empty()) {
        p.placement = lists[0].placement;
        const auto n = std::int64_t(lists[0].values.size());
        if (n > std::int64_t(kMaxTargets))
            throw std::invalid_argument(std::string(option_of(p.placement)) +
                                        ": more than 100000 targets");
        if (r.tasks != 0 && r.tasks != n)
            throw std::invalid_argument("--tasks " + std::to_string(r.tasks) +
                                        " does not match the " + std::to_string(n) + " values of " +
                                        std::string(option_of(p.placement)) +
                                        " (one task per value); leave --tasks out");
        for (std::int64_t i = 0; i < n; ++i)
            p.targets.push_back({i, p.placement, lists[0].values[std::size_t(i)]});
    } else {
        const std::int64_t n = r.tasks == 0 ? 1 : r.tasks;
        if (n < 1 || n > std::int64_t(kMaxTargets))
            throw std::invalid_argument("--tasks: must be from 1 to 100000, got " +
                                        std::to_string(n));
        for (std::int64_t i = 0; i < n; ++i)
            p.targets.push_back({i, Placement::None, ""});
    }

    // The batch script.
    const auto n = p.targets.size();
    std::vector<std::string> sbatch;
    sbatch.push_back("--job-name=" + sbatch_word(r.job_name));
    sbatch.push_back("--array=0-" + std::to_string(n - 1) +
                     (r.throttle > 0 ? "%" + std::to_string(r.throttle) : ""));
    sbatch.push_back("--output=" + r.folder + "/logs/%A_%a.log");
    sbatch.push_back("--nodes=1");
    sbatch.push_back("--ntasks=1");
    for (const auto& [placement, value] : options)
        if (!value->empty() && placement != p.placement)
            sbatch.push_back(std::string(option_of(placement)) + "=" + sbatch_word(*value));
    if (!r.account.empty())
        sbatch.push_back("--account=" + sbatch_word(r.account));
    if (!r.time.empty())
        sbatch.push_back("--time=" + sbatch_word(r.time));
    if (r.exclusive)
        sbatch.push_back("--exclusive");
    for (const auto& a : r.sbatch_args)
        sbatch.push_back(sbatch_word(a));

    std::string s = "#!/bin/bash\n";
    for (const auto& o : sbatch)
        s += "#SBATCH " + o + "\n";
    s += "# Written by switchyard-cli fleet submit: one array task per target";
    if (p.placement != Placement::None)
        s += " (each pinned after submission with scontrol update " +
             std::string(scontrol_field(p.placement)) + "=...)";
    s += ".\n";
    s += "set -u\n";
    s += "folder=" + shell_quote(r.folder) + "\n";
    s += "report=\"$folder/report-$(hostname "
         "-s)-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}.json\"\n";
    s += "echo \"switchyard fleet: task ${SLURM_ARRAY_TASK_ID} of job ${SLURM_ARRAY_JOB_ID} on "
         "$(hostname -s), writing $report\"\n";
    s += "exec " + shell_quote(r.cli) + " profile";
    for (const auto& a : r.profile_args)
        s += " " + shell_quote(a);
    s += " -o \"$report\"\n";
    p.script = std::move(s);
    p.sbatch_options = std::move(sbatch);
    p.request = std::move(r);
    return p;
}

std::string report_file_name(std::string_view host, std::string_view job_id, std::int64_t task) {
    return "report-" + std::string(host) + "-" + std::string(job_id) + "_" + std::to_string(task) +
           ".json";
}

std::optional<ReportName> parse_report_file_name(std::string_view name) {
    constexpr std::string_view prefix = "report-", suffix = ".json";
    if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
        name.substr(name.size() - suffix.size()) != suffix)
        return std::nullopt;
    const auto middle = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    const auto dash = middle.rfind('-');
    if (dash == std::string_view::npos || dash == 0)
        return std::nullopt;
    const auto id = middle.substr(dash + 1);
    const auto underscore = id.find('_');
    if (underscore == std::string_view::npos || underscore == 0)
        return std::nullopt;
    ReportName r;
    r.host = std::string(middle.substr(0, dash));
    r.job_id = std::string(id.substr(0, underscore));
    std::int64_t job = 0;
    if (!parse_index(r.job_id, job) || !parse_index(id.substr(underscore + 1), r.task))
        return std::nullopt;
    return r;
}

std::string log_path(const std::string& folder, std::string_view job_id, std::int64_t task) {
    return folder + "/logs/" + std::string(job_id) + "_" + std::to_string(task) + ".log";
}

json Manifest::to_json() const {
    json targets_json = json::array();
    for (const auto& t : targets)
        targets_json.push_back(t.to_json());
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"job_id", job_id},
            {"job_name", job_name},
            {"folder", folder},
            {"cli", cli},
            {"submitted", submitted},
            {"throttle", throttle},
            {"tasks", tasks()},
            {"targets", targets_json},
            {"profile_args", profile_args},
            {"sbatch_options", sbatch_options}};
}

Manifest Manifest::from_json(const json& j) {
    auto at = [&](const char* key) -> const json& {
        if (!j.is_object() || !j.contains(key))
            throw std::runtime_error(std::string("missing key '") + key + "'");
        return j.at(key);
    };
    if (!j.is_object() || j.value("format", std::string()) != kFormat)
        throw std::runtime_error(std::string("not a fleet manifest (format is not '") + kFormat +
                                 "')");
    if (at("format_version").get<int>() > kFormatVersion)
        throw std::runtime_error("format_version " + at("format_version").dump() +
                                 " is newer than this switchyard-cli reads (" +
                                 std::to_string(kFormatVersion) + ")");
    Manifest m;
    try {
        m.job_id = at("job_id").get<std::string>();
        m.job_name = at("job_name").get<std::string>();
        m.folder = at("folder").get<std::string>();
        m.cli = at("cli").get<std::string>();
        m.submitted = at("submitted").get<std::string>();
        m.throttle = at("throttle").get<std::int64_t>();
        std::size_t i = 0;
        for (const auto& t : at("targets")) {
            try {
                m.targets.push_back(Target::from_json(t));
            } catch (const std::exception& e) {
                throw std::runtime_error("targets[" + std::to_string(i) + "]: " + e.what());
            }
            if (m.targets.back().index != std::int64_t(i))
                throw std::runtime_error("targets[" + std::to_string(i) + "]: index " +
                                         std::to_string(m.targets.back().index) + ", expected " +
                                         std::to_string(i));
            ++i;
        }
        m.profile_args = at("profile_args").get<std::vector<std::string>>();
        if (j.contains("sbatch_options"))
            m.sbatch_options = j.at("sbatch_options").get<std::vector<std::string>>();
    } catch (const json::exception& e) {
        throw std::runtime_error(e.what());
    }
    std::int64_t job = 0;
    if (!parse_index(m.job_id, job))
        throw std::runtime_error("job_id: '" + m.job_id + "' is not a Slurm job id");
    if (m.targets.empty())
        throw std::runtime_error("targets: empty");
    return m;
}

Manifest Manifest::load(const std::string& folder) {
    const std::string path = folder + "/" + kFileName;
    std::string text;
    try {
        safefile::InputFile in(path, safefile::InputFile::Accept::RegularFile);
        text = in.read_all(std::size_t(64) << 20, "fleet manifest");
    } catch (const safefile::Error& e) {
        throw std::runtime_error(std::string(e.what()) +
                                 " (is this the --folder given to `fleet submit`?)");
    }
    try {
        return from_json(json::parse(text));
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

void Manifest::save() const {
    safefile::write_file(folder + "/" + kFileName, jsonread::dump(to_json(), 1) + "\n");
}

} // namespace switchyard::fleet
