// SPDX-License-Identifier: MIT
#include <switchyard/fleet/fleettuning.h>

#include <switchyard/fleet/fleet.h>
#include <switchyard/tuning/tune.h>

#include "util/textutil.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace switchyard::fleet {

using nlohmann::json;

namespace {

std::string speedup_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", s);
    return buf;
}

// The rows of an aligned text table, two spaces between columns, no trailing blanks.
std::string aligned_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width;
    for (const auto& r : rows) {
        width.resize(std::max(width.size(), r.size()), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            width[i] = std::max(width[i], r[i].size());
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size())
                line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

// The CPU's brand and the GPUs' names of a fingerprint's machine part ("" when absent).
std::string machine_description(const json& machine) {
    std::string out;
    if (machine.is_object() && machine.contains("cpu") && machine["cpu"].is_object()) {
        const auto& brand = machine["cpu"].value("brand", json());
        if (brand.is_string())
            out = brand.get<std::string>();
    }
    if (machine.is_object() && machine.contains("gpus") && machine["gpus"].is_array())
        for (const auto& g : machine["gpus"])
            if (g.is_object() && g.contains("name") && g["name"].is_string())
                out += (out.empty() ? "" : ", ") + g["name"].get<std::string>();
    return out;
}

const ProfileRow* row_with_index(const Report& report, std::int64_t index) {
    for (const auto& r : report.rows)
        if (r.spec.index == index)
            return &r;
    return nullptr;
}

// (op, device kind): what the tuning's entries and the regret map are keyed by.
using OpDevice = std::pair<std::string, std::string>;

// One measured (op, device kind, size) of a node: the chain's pick's row.
struct Measured {
    std::string op, device, size;
    double work = 0;
    const DispatchFinding* finding = nullptr;
};

std::vector<Measured> measured_of(const Report& report) {
    std::vector<Measured> out;
    for (const auto& f : report.dispatch) {
        const ProfileRow* pick = row_with_index(report, f.resolved_index);
        if (!pick)
            continue;
        out.push_back(
            {f.op, pick->spec.device_kind, pick->spec.size, size_work(pick->spec.dims), &f});
    }
    return out;
}

// One node of a class being tuned.
struct ClassNode {
    const FleetNode* node = nullptr;
};

double median_of(std::vector<double> v) {
    if (v.empty())
        return 1;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The class's entries from what its nodes measured (tuning/tune.h's choose_at() over every
// node's observations of each size), into `out.tuning`; what is dropped, into its notes.
void agree(const std::vector<ClassNode>& nodes, ClassTuning& out) {
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    std::vector<Key> order;
    std::map<Key, TunePoint> points;
    std::map<Key, std::set<std::size_t>> seen_by; // the nodes that measured each point
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Report& report = *nodes[i].node->report;
        for (const auto& m : measured_of(report)) {
            const ProfileRow* pick = row_with_index(report, m.finding->resolved_index);
            if (!pick || pick->status != RowStatus::Ok || !(pick->stats.median > 0))
                continue;
            const Key key{m.op, m.device, pick->spec.variant, m.size};
            auto [it, fresh] = points.try_emplace(key);
            if (fresh) {
                order.push_back(key);
                it->second = {m.op, m.device, pick->spec.variant, m.size, m.work, {}};
            }
            it->second.observations.push_back(
                {nodes[i].node->name, nodes[i].node->path, &report, pick});
            seen_by[key].insert(i);
        }
    }
    std::vector<TunePoint> everywhere;
    for (const auto& key : order) {
        const auto& by = seen_by[key];
        if (by.size() == nodes.size()) {
            everywhere.push_back(points[key]);
            continue;
        }
        std::vector<std::string> with, without;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            (by.count(i) ? with : without).push_back(nodes[i].node->name);
        out.notes.push_back(std::get<0>(key) + " " + std::get<3>(key) + " on " + std::get<1>(key) +
                            ": measured by " + text::join(with) + "; not by " +
                            text::join(without) + ": the class does not tune it");
    }
    auto chosen = tune_points(everywhere);
    out.notes.insert(out.notes.end(), chosen.notes.begin(), chosen.notes.end());
    out.tuning.entries = std::move(chosen.entries);
    std::sort(out.tuning.entries.begin(), out.tuning.entries.end(),
              [](const TuningEntry& a, const TuningEntry& b) {
                  return std::tie(a.op, a.device, a.variant, a.min_work) <
                         std::tie(b.op, b.device, b.variant, b.min_work);
              });
}

// The regret map's lines of one class.
void regrets_of(const std::vector<ClassNode>& nodes, const ClassTuning& cls,
                std::vector<RegretEntry>& out) {
    struct Seen {
        RegretEntry entry;
        std::vector<double> speedups; // one per node, its smallest across devices of the kind
    };
    std::map<std::tuple<std::string, std::string, double, std::string, std::string, std::string>,
             Seen>
        lines;
    for (const auto& n : nodes) {
        // (line) -> this node's smallest speedup there
        std::map<decltype(lines)::key_type, double> mine;
        for (const auto& m : measured_of(*n.node->report)) {
            const DispatchFinding& f = *m.finding;
            if (f.verdict != DispatchVerdict::Regret)
                continue;
            const auto key = std::make_tuple(m.op, m.device, m.work, m.size, f.resolved, f.fastest);
            auto [it, fresh] = mine.emplace(key, f.speedup);
            if (!fresh)
                it->second = std::min(it->second, f.speedup);
            auto& seen = lines[key];
            if (seen.entry.op.empty())
                seen.entry = RegretEntry{cls.machine_id, m.op,       m.size,   m.device,
                                         m.work,         f.resolved, f.fastest};
        }
        for (const auto& [key, speedup] : mine) {
            auto& seen = lines[key];
            seen.entry.nodes.push_back(n.node->name);
            seen.speedups.push_back(speedup);
        }
    }
    for (auto& [key, seen] : lines) {
        RegretEntry e = seen.entry;
        e.min_speedup = *std::min_element(seen.speedups.begin(), seen.speedups.end());
        e.median_speedup = median_of(seen.speedups);
        e.class_nodes = nodes.size();
        for (const auto& t : cls.tuning.entries)
            if (t.op == e.op && t.device == e.device && t.overrides.cell == e.pick &&
                std::find(t.sizes.begin(), t.sizes.end(), e.size) != t.sizes.end())
                e.tuned = t.chosen.cell;
        out.push_back(std::move(e));
    }
}

// A machine id as a file name: letters, digits, '-', '_' and '.', not starting with '.'.
bool usable_as_file_name(const std::string& id) {
    if (id.empty() || id.size() > 128 || id.front() == '.')
        return false;
    return std::all_of(id.begin(), id.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_' || ch == '.';
    });
}

std::string newest_date(const std::vector<ClassNode>& nodes) {
    std::string newest;
    for (const auto& n : nodes)
        newest = std::max(newest, n.node->report->context.date);
    return newest;
}

} // namespace

std::string node_name(const std::string& path) {
    const std::string file = std::filesystem::path(path).filename().string();
    if (const auto n = parse_report_file_name(file))
        return "task " + std::to_string(n->task) + " (" + n->host + ")";
    return file;
}

json ClassTuning::to_json() const {
    return {{"machine_id", machine_id},
            {"description", description},
            {"nodes", nodes},
            {"without_findings", without_findings},
            {"entries", tuning.entries.size()},
            {"file", file},
            {"tuning", tunable() ? tuning.to_json() : json()},
            {"notes", notes}};
}

json RegretEntry::to_json() const {
    return {{"machine_id", machine_id},
            {"op", op},
            {"size", size},
            {"device", device},
            {"pick", pick},
            {"faster", faster},
            {"min_speedup", min_speedup},
            {"median_speedup", median_speedup},
            {"nodes", nodes},
            {"agree", nodes.size()},
            {"class_nodes", class_nodes},
            {"tuned", tuned}};
}

json FleetTuning::to_json() const {
    json c = json::array();
    for (const auto& x : classes)
        c.push_back(x.to_json());
    json r = json::array();
    for (const auto& x : regrets)
        r.push_back(x.to_json());
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"classes", c},
            {"regret_map", r},
            {"notes", notes}};
}

std::string FleetTuning::regret_map_text() const {
    if (regrets.empty())
        return "Regret map: no regret; on every node the chain's pick was the fastest cell, or "
               "none was faster beyond the noise (or no node ran --all-variants)\n";
    std::vector<std::vector<std::string>> rows{{"MACHINE", "OP", "DEVICE", "SIZE", "CHAIN PICKS",
                                                "FASTER", "MIN", "MEDIAN", "NODES", "TUNED"}};
    for (const auto& e : regrets)
        rows.push_back({text::untrusted(e.machine_id), text::untrusted(e.op),
                        text::untrusted(e.device), text::untrusted(e.size), text::untrusted(e.pick),
                        text::untrusted(e.faster), speedup_text(e.min_speedup),
                        speedup_text(e.median_speedup),
                        std::to_string(e.nodes.size()) + " of " + std::to_string(e.class_nodes),
                        e.tuned.empty() ? "-" : text::untrusted(e.tuned)});
    return "Regret map: where the chain's pick was slower than another cell (speedup of the "
           "faster cell, smallest and median across the nodes that agree)\n" +
           aligned_table(rows);
}

std::string FleetTuning::summary() const {
    std::string out;
    for (const auto& c : classes) {
        out += "machine class " + text::untrusted(c.machine_id);
        if (!c.description.empty())
            out += " (" + text::untrusted(c.description) + ")";
        out += ": ";
        if (!c.nodes.empty())
            out += std::to_string(c.nodes.size()) + (c.nodes.size() == 1 ? " node" : " nodes") +
                   " (" + text::untrusted(text::join(c.nodes)) + ")";
        else
            out += "no node with dispatch findings";
        if (!c.without_findings.empty())
            out += "; left out, without dispatch findings: " +
                   text::untrusted(text::join(c.without_findings));
        if (!c.tunable()) {
            out += "; nothing to tune\n";
        } else {
            const auto n = c.tuning.entries.size();
            out += ", " + std::to_string(n) + (n == 1 ? " entry" : " entries") + " agreed" +
                   (c.file.empty() ? std::string(" (not written)")
                                   : ", written to " + text::untrusted(c.file)) +
                   "\n";
        }
        for (const auto& e : c.tuning.entries)
            out += "  " + text::untrusted(e.label()) + ": " + text::untrusted(e.chosen.cell) +
                   " instead of " + text::untrusted(e.overrides.cell) + " (" +
                   speedup_text(e.speedup()) + " at least, " +
                   text::untrusted(e.chosen.code.text()) + ")\n";
        for (const auto& n : c.notes)
            out += "  note: " + text::untrusted(n) + "\n";
    }
    for (const auto& n : notes)
        out += "note: " + text::untrusted(n) + "\n";
    return out;
}

FleetTuning tune_fleet(const std::vector<FleetNode>& nodes) {
    FleetTuning out;
    std::map<std::string, std::vector<const FleetNode*>> by_class;
    for (const auto& n : nodes) {
        if (!n.report)
            throw std::invalid_argument("tune_fleet: node '" + n.name + "' has no report");
        const auto& id = n.report->context.fingerprint.machine_id;
        if (id.empty()) {
            out.notes.push_back(n.name +
                                ": the report has no machine id (fingerprint.machine_id): it "
                                "belongs to no machine class and is left out");
            continue;
        }
        if (!usable_as_file_name(id)) {
            out.notes.push_back(n.name + ": its machine id '" + id +
                                "' is not one a fingerprint gives (16 hex digits): it belongs to "
                                "no machine class and is left out");
            continue;
        }
        by_class[id].push_back(&n);
    }
    for (const auto& [id, members] : by_class) {
        ClassTuning cls;
        cls.machine_id = id;
        cls.description = machine_description(members.front()->report->context.fingerprint.machine);
        std::vector<ClassNode> tuned;
        for (const FleetNode* n : members) {
            if (n->report->dispatch.empty()) {
                cls.without_findings.push_back(n->name);
                cls.notes.push_back(
                    n->name +
                    ": its report has no dispatch findings, so it is left out of the class's "
                    "tuning; profile with every variant: fleet submit ... -- --all-variants "
                    "--repeat 3");
                continue;
            }
            tuned.push_back(ClassNode{n});
            cls.nodes.push_back(n->name);
        }
        if (!tuned.empty()) {
            const RunContext& first = tuned.front().node->report->context;
            cls.tuning.machine_id = id;
            cls.tuning.machine = first.fingerprint.machine;
            cls.tuning.core_version = first.switchyard.version;
            cls.tuning.created = newest_date(tuned);
            for (const auto& cn : tuned)
                if (cn.node->report->context.switchyard.version != first.switchyard.version)
                    cls.notes.push_back(cn.node->name + " ran Switchyard " +
                                        cn.node->report->context.switchyard.version + ", " +
                                        tuned.front().node->name + " " + first.switchyard.version +
                                        ": their cells' code identities tell whether they agree");
            agree(tuned, cls);
        } else {
            cls.notes.push_back("no node of this class has dispatch findings: no tuning");
        }
        regrets_of(tuned, cls, out.regrets);
        out.classes.push_back(std::move(cls));
    }
    return out;
}

void write_tunings(FleetTuning& ft, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw std::runtime_error(dir + ": cannot create the folder: " + ec.message());
    for (auto& c : ft.classes) {
        if (!c.tunable())
            continue;
        const std::string file = (std::filesystem::path(dir) / (c.machine_id + ".tuning")).string();
        c.tuning.save(file);
        c.file = file;
    }
}

} // namespace switchyard::fleet
