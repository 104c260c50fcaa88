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

// What makes two nodes' entries the same entry: all but the sizes and the evidence.
std::vector<std::string> entry_key(const TuningEntry& e) {
    return {e.op,
            e.device,
            e.variant,
            e.chosen.cell,
            e.chosen.code.backend,
            e.chosen.code.version,
            e.chosen.code.build_id,
            e.overrides.cell,
            e.overrides.code.backend,
            e.overrides.code.version,
            e.overrides.code.build_id};
}

// A size's evidence in an entry (evidence is one per size, in the sizes' order).
const TuningEvidence* evidence_at(const TuningEntry& e, const std::string& size) {
    for (const auto& ev : e.evidence)
        if (ev.size == size)
            return &ev;
    for (std::size_t i = 0; i < e.sizes.size() && i < e.evidence.size(); ++i)
        if (e.sizes[i] == size)
            return &e.evidence[i];
    return nullptr;
}

// One node of a class being tuned.
struct ClassNode {
    const FleetNode* node = nullptr;
    TuneResult tuned;
    std::map<OpDevice, std::set<std::string>> measured; // sizes it measured
    // What it keeps at (op, device, variant, size): its entry there.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, const TuningEntry*>
        keeps;
};

// Why `n` does not keep `e` at `size`.
std::string why_not(const ClassNode& n, const TuningEntry& e, const std::string& size) {
    const auto it = n.keeps.find({e.op, e.device, e.variant, size});
    if (it != n.keeps.end()) {
        const TuningEntry& other = *it->second;
        if (other.chosen.cell == e.chosen.cell && other.overrides.cell == e.overrides.cell)
            return "the same cells, other code: " + other.chosen.code.text() + " instead of " +
                   other.overrides.code.text();
        if (other.overrides.cell != e.overrides.cell)
            return "its chain picks " + other.overrides.cell;
        return "keeps " + other.chosen.cell;
    }
    const auto m = n.measured.find({e.op, e.device});
    if (m != n.measured.end() && m->second.count(size))
        return "keeps the chain's pick";
    return "did not measure it";
}

double median_of(std::vector<double> v) {
    if (v.empty())
        return 1;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The entries every node of `nodes` keeps, into `out.tuning`; what is dropped, into its notes.
void agree(std::vector<ClassNode>& nodes, ClassTuning& out) {
    // Every size any node of the class measured, by (op, device kind), ordered by work.
    std::map<OpDevice, std::map<std::string, double>> work;
    for (const auto& n : nodes)
        for (const auto& m : measured_of(*n.node->report))
            work[{m.op, m.device}][m.size] = m.work;
    auto by_work = [&](const OpDevice& od) {
        std::vector<std::pair<double, std::string>> sizes;
        for (const auto& [size, w] : work[od])
            sizes.push_back({w, size});
        std::sort(sizes.begin(), sizes.end());
        return sizes;
    };

    // Each distinct entry (by key) and, per node, the sizes it keeps that entry at.
    struct Candidate {
        const TuningEntry* first = nullptr; // its cells, as the first node that keeps it has them
        std::vector<std::map<std::string, std::pair<const TuningEntry*, const TuningEvidence*>>>
            per_node;
    };
    std::map<std::vector<std::string>, Candidate> candidates;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        for (const auto& e : nodes[i].tuned.tuning.entries) {
            auto& c = candidates[entry_key(e)];
            if (!c.first)
                c.first = &e;
            c.per_node.resize(nodes.size());
            for (const auto& size : e.sizes)
                c.per_node[i][size] = {&e, evidence_at(e, size)};
        }

    for (auto& [key, c] : candidates) {
        const TuningEntry& proto = *c.first;
        const OpDevice od{proto.op, proto.device};
        std::vector<std::string> agreed_sizes;
        // Dropped sizes, grouped by what the nodes said there (in work order).
        std::vector<std::pair<std::string, std::vector<std::string>>> dropped;
        for (const auto& [w, size] : by_work(od)) {
            std::vector<std::string> kept_by, not_by;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (c.per_node[i].count(size))
                    kept_by.push_back(nodes[i].node->name);
                else
                    not_by.push_back(nodes[i].node->name + " (" + why_not(nodes[i], proto, size) +
                                     ")");
            }
            if (kept_by.empty())
                continue;
            if (not_by.empty()) {
                agreed_sizes.push_back(size);
                continue;
            }
            const std::string said =
                "kept by " + text::join(kept_by) + "; not by " + text::join(not_by);
            auto it = std::find_if(dropped.begin(), dropped.end(),
                                   [&](const auto& d) { return d.first == said; });
            if (it == dropped.end())
                dropped.push_back({said, {size}});
            else
                it->second.push_back(size);
        }
        for (const auto& [said, sizes] : dropped)
            out.notes.push_back(proto.op + " on " + proto.device + " at " + text::join(sizes) +
                                ": " + proto.chosen.cell + " instead of " + proto.overrides.cell +
                                " is dropped: " + said);

        // The agreed sizes, in ranges of consecutive sizes the class measured.
        const auto ordered = by_work(od);
        std::vector<std::vector<std::size_t>> ranges;
        bool open = false;
        for (std::size_t k = 0; k < ordered.size(); ++k) {
            const bool in = std::find(agreed_sizes.begin(), agreed_sizes.end(),
                                      ordered[k].second) != agreed_sizes.end();
            if (!in) {
                open = false;
                continue;
            }
            if (!open)
                ranges.emplace_back();
            ranges.back().push_back(k);
            open = true;
        }
        for (const auto& range : ranges) {
            TuningEntry e;
            e.op = proto.op;
            e.device = proto.device;
            e.variant = proto.variant;
            e.chosen = proto.chosen;
            e.overrides = proto.overrides;
            e.min_work = ordered[range.front()].first;
            e.max_work = ordered[range.back()].first;
            // Per size the weakest node's evidence: the entry promises what every node saw.
            std::size_t weakest_node = 0;
            double weakest = 0;
            for (const auto k : range) {
                const std::string& size = ordered[k].second;
                e.sizes.push_back(size);
                const TuningEvidence* least = nullptr;
                std::size_t least_node = 0;
                for (std::size_t i = 0; i < nodes.size(); ++i) {
                    const auto* ev = c.per_node[i].at(size).second;
                    if (ev && (!least || ev->speedup < least->speedup)) {
                        least = ev;
                        least_node = i;
                    }
                }
                if (!least)
                    continue;
                e.evidence.push_back(*least);
                if (weakest == 0 || least->speedup < weakest) {
                    weakest = least->speedup;
                    weakest_node = least_node;
                }
            }
            // The report behind the entry's promise (its smallest speedup).
            const auto* source = c.per_node[weakest_node].at(e.sizes.front()).first;
            e.date = nodes[weakest_node].node->report->context.date;
            e.report = source ? source->report : nodes[weakest_node].node->path;
            out.tuning.entries.push_back(std::move(e));
        }
    }
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
            ClassNode cn;
            cn.node = n;
            cn.tuned = tune_report(*n->report, n->path);
            for (const auto& note : cn.tuned.notes)
                cls.notes.push_back(n->name + ": " + note);
            for (const auto& m : measured_of(*n->report))
                cn.measured[{m.op, m.device}].insert(m.size);
            tuned.push_back(std::move(cn));
            cls.nodes.push_back(n->name);
        }
        // `keeps` points into each node's own entries: filled once the vector stopped moving.
        for (auto& cn : tuned)
            for (const auto& e : cn.tuned.tuning.entries)
                for (const auto& size : e.sizes)
                    cn.keeps[{e.op, e.device, e.variant, size}] = &e;
        if (!tuned.empty()) {
            const Tuning& first = tuned.front().tuned.tuning;
            cls.tuning.machine_id = id;
            cls.tuning.machine = first.machine;
            cls.tuning.core_version = first.core_version;
            cls.tuning.created = newest_date(tuned);
            for (const auto& cn : tuned)
                if (cn.tuned.tuning.core_version != first.core_version)
                    cls.notes.push_back(cn.node->name + " ran Switchyard " +
                                        cn.tuned.tuning.core_version + ", " +
                                        tuned.front().node->name + " " + first.core_version +
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
