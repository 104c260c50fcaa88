// SPDX-License-Identifier: MIT
#include <switchyard/hardware/devicekind.h>
#include <switchyard/profiling/stats.h>
#include <switchyard/report/compare.h>

#include "util/textutil.h"
#include "verdicttext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace switchyard {

namespace {
using verdicttext::format;
using verdicttext::format_number;
using verdicttext::pad;
} // namespace

namespace {

struct CeilingValue {
    double value = 0;
    bool bandwidth = false;
};

// device id -> (ceiling id -> value), from the report context's devices (RunContext: a
// device entry its reader refuses is left out, so a warning never makes compare fail).
std::map<std::string, std::map<std::string, CeilingValue>> ceilings_of(const RunContext& context) {
    std::map<std::string, std::map<std::string, CeilingValue>> out;
    for (const auto& d : context.devices)
        for (const auto& c : d.ceilings)
            out[d.id][c.id] = {c.value, c.kind == "bandwidth"};
    return out;
}

// device id -> (ceiling id -> the probe's spread), where the context records it: the CPU's
// probes do (context.cpu_peaks.spread, CpuPeaks::spread), for the device "cpu".
std::map<std::string, std::map<std::string, double>> spreads_of(const RunContext& context) {
    std::map<std::string, std::map<std::string, double>> out;
    if (!context.cpu_peaks)
        return out;
    for (const auto& [id, v] : context.cpu_peaks->spread)
        if (v >= 0)
            out["cpu"][id] = v;
    return out;
}

std::string list_ids(const std::vector<std::string>& ids) {
    std::string s;
    for (std::size_t i = 0; i < ids.size() && i < 6; ++i)
        s += (i ? ", " : "") + ids[i];
    if (ids.size() > 6)
        s += " and " + std::to_string(ids.size() - 6) + " more";
    return s;
}

} // namespace

std::vector<std::string> ceiling_differences(const RunContext& context_a,
                                             const RunContext& context_b, double tolerance,
                                             double bandwidth_tolerance) {
    std::vector<std::string> out;
    const auto a = ceilings_of(context_a), b = ceilings_of(context_b);
    const auto spread_a = spreads_of(context_a), spread_b = spreads_of(context_b);
    if (a.empty() && b.empty())
        return out;
    if (a.empty() != b.empty()) {
        out.push_back(std::string(a.empty() ? "A" : "B") +
                      " has no measured ceilings (a report from before ceilings, or from "
                      "`profile` without device probes): fractions of peak are not comparable");
        return out;
    }
    for (const auto& [device, ca] : a) {
        const auto it = b.find(device);
        if (it == b.end())
            continue;
        const auto& cb = it->second;
        const auto sa = spread_a.find(device), sb = spread_b.find(device);
        // The limit for one ceiling: with both probes' spreads recorded, their sum (two runs
        // of one machine differ by about that much), at least `tolerance`; without them,
        // the tolerance of its kind.
        auto limit = [&](const std::string& id, const CeilingValue& c) {
            if (sa != spread_a.end() && sb != spread_b.end()) {
                const auto ia = sa->second.find(id), ib = sb->second.find(id);
                if (ia != sa->second.end() && ib != sb->second.end())
                    return std::max(tolerance, ia->second + ib->second);
            }
            return c.bandwidth ? bandwidth_tolerance : tolerance;
        };
        std::vector<std::string> only_a, only_b, differ;
        for (const auto& [id, ceiling_a] : ca) {
            const auto jt = cb.find(id);
            if (jt == cb.end()) {
                only_a.push_back(id);
                continue;
            }
            const double va = ceiling_a.value, vb = jt->second.value;
            const double rel = va > 0 ? (vb - va) / va : (vb > 0 ? 1.0 : 0.0);
            if (std::fabs(rel) > limit(id, ceiling_a))
                differ.push_back(id + " " + format_number(va) + " -> " + format_number(vb) + " (" +
                                 (rel >= 0 ? "+" : "") + format_number(rel * 100) + " %)");
        }
        for (const auto& [id, vb] : cb)
            if (!ca.count(id))
                only_b.push_back(id);
        if (!only_a.empty() || !only_b.empty())
            out.push_back(device + ": the reports have different ceilings (only in A: " +
                          (only_a.empty() ? "none" : list_ids(only_a)) +
                          "; only in B: " + (only_b.empty() ? "none" : list_ids(only_b)) +
                          "): they come from different machines or builds");
        if (!differ.empty() && same_machine(context_a, context_b))
            out.push_back(device + ": the same machine measured other ceilings in the two runs, " +
                          "beyond their probes' noise (" + list_ids(differ) +
                          "): its own capacity changed between the runs (a shared host: other "
                          "tenants on its caches and memory), so times bound by those ceilings "
                          "are not like for like; compare ceiling fractions, or run both again "
                          "back to back");
        else if (!differ.empty())
            out.push_back(device + ": ceilings differ by more than their probes' noise (" +
                          list_ids(differ) +
                          "): the reports come from machines with different ceilings, so "
                          "times are not like for like; compare ceiling fractions");
    }
    // The CPU each report held its 1-thread probes and rows on (cpu_peaks.pinned_cpu).
    if (const int pa = context_a.pinned_cpu(), pb = context_b.pinned_cpu();
        pa >= 0 && pb >= 0 && pa != pb)
        out.push_back("cpu: A's 1-thread probes and rows ran on CPU " + std::to_string(pa) +
                      ", B's on CPU " + std::to_string(pb) +
                      ": one CPU is not another (a VM's vCPUs, a hybrid part's P and E cores), "
                      "so 1-thread times may differ for that alone; --pin-cpu <n> "
                      "(SWITCHYARD_PIN_CPU) runs both on one");
    return out;
}

namespace {

// A fingerprint as dotted paths -> values ("machine.cpu.microcode" -> "0xa101144").
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items())
            flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
    } else {
        out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
    }
}

// The fingerprint as it was hashed and written (context.fingerprint); nullopt for a report
// without one (older than format 4).
std::optional<nlohmann::json> fingerprint_of(const RunContext& context) {
    const auto& f = context.fingerprint;
    if (f.machine_id.empty() && f.machine.empty() && f.software.empty())
        return std::nullopt;
    return nlohmann::json{
        {"machine", f.machine}, {"software", f.software}, {"machine_id", f.machine_id}};
}

// The probe spread of `row`'s ceiling in `context` (CpuPeaks::spread): the CPU's probes
// record it; an OpenCL CPU device judged against them has the id prefixed "cpu:".
double probe_spread(const RunContext& context, const ProfileRow& row) {
    if (row.ceiling_id.empty() || !context.cpu_peaks)
        return 0;
    std::string id = row.ceiling_id;
    if (id.rfind("cpu:", 0) == 0)
        id = id.substr(4);
    else if (device_kind(row.spec.device_kind) != DeviceKind::Cpu && row.spec.device != "cpu")
        return 0;
    const auto& spread = context.cpu_peaks->spread;
    const auto v = spread.find(id);
    return v != spread.end() && v->second > 0 ? v->second : 0;
}

RowEvidence evidence(const ProfileRow& row, const RunContext& context,
                     std::vector<double>& medians_storage) {
    medians_storage = row.run_medians();
    return {medians_storage, row.samples, row.stats.median, probe_spread(context, row),
            context.control ? &*context.control : nullptr};
}

nlohmann::json finite_or_null(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

nlohmann::json result_json(const SampleComparison& r) {
    nlohmann::json j = {{"verdict", to_string(r.verdict)},
                        {"ratio", finite_or_null(r.ratio)},
                        {"p_value", r.p_value},
                        {"q_value", r.q_value},
                        {"threshold", r.threshold},
                        {"noise", r.noise},
                        {"probe_floor", r.probe_floor},
                        {"machine_floor", r.machine_floor},
                        {"ci_half_width", r.ci_half_width},
                        {"center_a", r.center_a},
                        {"center_b", r.center_b},
                        {"runs_a", r.runs_a},
                        {"runs_b", r.runs_b},
                        {"identical_code", r.identical_code}};
    if (r.runs_to_settle != 0)
        j["runs_to_settle"] = r.runs_to_settle;
    if (!r.note.empty())
        j["note"] = r.note;
    return j;
}

// What the drift controls say, for the text outputs ("B" is the report judged).
std::string drift_line(const MachineDrift& d, bool same_machine) {
    if (!same_machine)
        return "not weighed: the reports come from different machines (or lack fingerprints), "
               "and a difference between machines is what such a comparison measures";
    return d.known ? d.text()
                   : "unknown (a report without a drift control, from before it): a difference "
                     "cannot be told from the machine's drift";
}

nlohmann::json drift_json(const MachineDrift& d) {
    if (!d.known)
        return nullptr;
    return {{"center", d.center}, {"low", d.low}, {"high", d.high}, {"explains", d.explains()}};
}

std::string esc(std::string_view s) {
    // Every field comes from a report file, which anyone may have written: a newline or a
    // control character in it is escaped, so it cannot forge a row or move the cursor.
    return text::untrusted(s);
}

} // namespace

std::vector<std::string> fingerprint_differences(const RunContext& context_a,
                                                 const RunContext& context_b) {
    const auto fa = fingerprint_of(context_a);
    const auto fb = fingerprint_of(context_b);
    if (!fa || !fb)
        return {std::string(!fa && !fb ? "neither report has"
                            : !fa      ? "A has"
                                       : "B has") +
                " no hardware fingerprint (a report older than format 4): the machines cannot "
                "be told apart"};
    std::map<std::string, std::string> a, b;
    flatten(*fa, "", a);
    flatten(*fb, "", b);
    std::vector<std::string> out;
    for (const auto& [k, va] : a) {
        if (k == "machine_id")
            continue;
        const auto it = b.find(k);
        const std::string vb = it == b.end() ? "(none)" : it->second;
        if (va != vb)
            out.push_back(k + ": " + (va.empty() ? "\"\"" : va) + " -> " +
                          (vb.empty() ? "\"\"" : vb));
    }
    for (const auto& [k, vb] : b)
        if (k != "machine_id" && !a.count(k))
            out.push_back(k + ": (none) -> " + vb);
    return out;
}

bool same_machine(const RunContext& context_a, const RunContext& context_b) {
    const auto& a = context_a.fingerprint.machine;
    const auto& b = context_b.fingerprint.machine;
    return fingerprint_of(context_a) && fingerprint_of(context_b) && !a.empty() && !b.empty() &&
           a == b;
}

MultiComparison MultiComparison::of(std::span<const Report> reports, std::vector<std::string> names,
                                    const CompareOptions& options, std::size_t baseline) {
    if (reports.size() < 2)
        throw std::invalid_argument("compare needs at least two reports, got " +
                                    std::to_string(reports.size()));
    if (names.size() != reports.size())
        throw std::invalid_argument("compare: " + std::to_string(names.size()) + " names for " +
                                    std::to_string(reports.size()) + " reports");
    if (baseline >= reports.size())
        throw std::invalid_argument("compare: baseline " + std::to_string(baseline + 1) +
                                    " is not one of the " + std::to_string(reports.size()) +
                                    " reports");
    MultiComparison out;
    out.m_baseline = baseline;
    out.m_options = options;
    const auto& base = reports[baseline];
    for (std::size_t r = 0; r < reports.size(); ++r) {
        Source src;
        src.name = std::move(names[r]);
        src.machine_id = reports[r].context.fingerprint.machine_id;
        if (r == baseline) {
            src.same_machine = fingerprint_of(base.context).has_value();
        } else {
            src.fingerprint_differences = fingerprint_differences(base.context, reports[r].context);
            src.ceiling_differences =
                ceiling_differences(base.context, reports[r].context, options.ceiling_tolerance,
                                    options.bandwidth_ceiling_tolerance);
            src.same_machine = switchyard::same_machine(base.context, reports[r].context);
            // Drift is one machine's movement between its runs; between two machines the
            // controls differ by the machines, which is what such a comparison measures.
            if (src.same_machine && base.context.control && reports[r].context.control)
                src.drift =
                    MachineDrift::between(*base.context.control, *reports[r].context.control);
        }
        out.m_sources.push_back(std::move(src));
    }
    // Lines in the order the baseline lists its rows, then what the others add. A key seen
    // twice in one report (a hand-edited file) gets a line of its own ("key#2").
    std::map<std::string, std::size_t> line_of;
    auto add = [&](std::size_t r) {
        std::map<std::string, int> seen;
        for (const auto& row : reports[r].rows) {
            auto key = row.key();
            if (const int n = ++seen[key]; n > 1)
                key += "#" + std::to_string(n);
            auto [it, fresh] = line_of.emplace(key, out.m_lines.size());
            if (fresh) {
                Line line;
                line.key = key;
                line.first = &row;
                line.cells.resize(reports.size());
                out.m_lines.push_back(std::move(line));
            }
            out.m_lines[it->second].cells[r].row = &row;
        }
    };
    add(baseline);
    for (std::size_t r = 0; r < reports.size(); ++r)
        if (r != baseline)
            add(r);
    // Every (line, report) test at once, so the false-discovery control spans them all.
    std::vector<RowEvidence> ea, eb;
    std::vector<std::vector<double>> storage;
    std::vector<std::pair<std::size_t, std::size_t>> where;
    storage.reserve(2 * out.m_lines.size() * reports.size());
    for (std::size_t l = 0; l < out.m_lines.size(); ++l) {
        auto& line = out.m_lines[l];
        const ProfileRow* brow = line.cells[baseline].row;
        for (std::size_t r = 0; r < reports.size(); ++r) {
            auto& cell = line.cells[r];
            if (r == baseline || !cell.row || !brow)
                continue;
            if (!brow->measured() || !cell.row->measured()) {
                cell.result.note =
                    "not measured in " +
                    std::string(!brow->measured() ? out.m_sources[baseline].name
                                                  : out.m_sources[r].name) +
                    " (" +
                    std::string(to_string(!brow->measured() ? brow->status : cell.row->status)) +
                    ")";
                if (brow->stats.median > 0)
                    cell.result.ratio = cell.row->stats.median / brow->stats.median;
                continue;
            }
            storage.emplace_back();
            ea.push_back(evidence(*brow, base.context, storage.back()));
            storage.emplace_back();
            eb.push_back(evidence(*cell.row, reports[r].context, storage.back()));
            if (!out.m_sources[r].same_machine)
                ea.back().control = eb.back().control = nullptr;
            where.emplace_back(l, r);
        }
    }
    const auto results = judge_rows(ea, eb, options);
    for (std::size_t k = 0; k < where.size(); ++k) {
        auto& cell = out.m_lines[where[k].first].cells[where[k].second];
        cell.result = results[k];
        cell.judged = true;
        const auto& ca = out.m_lines[where[k].first].cells[baseline].row->spec.code;
        const auto& cb = cell.row->spec.code;
        cell.result.identical_code = !ca.build_id.empty() && ca == cb;
        judge_identical_code(cell.result, options);
    }
    // Outliers: with three or more measured cells, a median far from the line's.
    for (auto& line : out.m_lines) {
        std::vector<double> logs;
        for (const auto& c : line.cells)
            if (c.row && c.row->measured() && c.row->stats.median > 0)
                logs.push_back(std::log(c.row->stats.median));
        if (logs.size() < 3)
            continue;
        auto sorted = logs;
        std::sort(sorted.begin(), sorted.end());
        const double center = quantile_sorted(sorted, 0.5);
        std::vector<double> dev;
        for (const double x : logs)
            dev.push_back(std::fabs(x - center));
        std::sort(dev.begin(), dev.end());
        const double mad = 1.4826 * quantile_sorted(dev, 0.5);
        const double limit = std::max(std::log1p(0.10), 3 * mad);
        for (auto& c : line.cells)
            if (c.row && c.row->measured() && c.row->stats.median > 0)
                c.outlier = std::fabs(std::log(c.row->stats.median) - center) > limit;
    }
    return out;
}

std::size_t MultiComparison::count(Verdict v) const {
    std::size_t n = 0;
    for (const auto& line : m_lines)
        for (const auto& c : line.cells)
            n += c.judged && c.result.verdict == v;
    return n;
}

bool MultiComparison::same_machine() const {
    return std::all_of(m_sources.begin(), m_sources.end(),
                       [](const Source& s) { return s.same_machine; });
}

namespace {
std::size_t identical_code_count(const MultiComparison& m) {
    std::size_t n = 0;
    for (const auto& line : m.lines())
        for (const auto& c : line.cells)
            n += c.judged && c.result.identical_code;
    return n;
}
} // namespace

nlohmann::json MultiComparison::to_json() const {
    auto sources = nlohmann::json::array();
    for (std::size_t r = 0; r < m_sources.size(); ++r) {
        const auto& s = m_sources[r];
        sources.push_back({{"name", s.name},
                           {"baseline", r == m_baseline},
                           {"machine_id", s.machine_id},
                           {"same_machine", s.same_machine},
                           {"fingerprint_differences", s.fingerprint_differences},
                           {"ceiling_differences", s.ceiling_differences},
                           {"drift", drift_json(s.drift)}});
    }
    auto lines = nlohmann::json::array();
    for (const auto& line : m_lines) {
        const auto& spec = line.first->spec;
        auto cells = nlohmann::json::array();
        for (const auto& c : line.cells) {
            if (!c.row) {
                cells.push_back(nullptr);
                continue;
            }
            nlohmann::json j = {{"status", c.row->status},
                                {"median", c.row->stats.median},
                                {"runs", std::max<std::size_t>(1, c.row->runs.size())},
                                {"outlier", c.outlier}};
            if (c.judged)
                j.update(result_json(c.result));
            else if (!c.result.note.empty())
                j["note"] = c.result.note;
            cells.push_back(std::move(j));
        }
        lines.push_back({{"op", spec.op},
                         {"size", spec.size},
                         {"backend", spec.backend},
                         {"device", spec.device},
                         {"arch", spec.arch},
                         {"variant", spec.variant},
                         {"cells", cells}});
    }
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"options", m_options.to_json()},
            {"baseline", m_baseline},
            {"same_machine", same_machine()},
            {"sources", sources},
            {"lines", lines},
            {"summary",
             {{"same", count(Verdict::Same)},
              {"faster", count(Verdict::Faster)},
              {"slower", count(Verdict::Slower)},
              {"ambiguous", count(Verdict::Ambiguous)},
              {"machine", count(Verdict::Machine)},
              {"identical_code", identical_code_count(*this)}}},
            {"advice", advice().to_json()}};
}

std::string MultiComparison::to_text() const {
    std::ostringstream os;
    os << "Verdicts against " << esc(m_sources[m_baseline].name) << ": " << m_options.describe()
       << ".\n";
    for (std::size_t r = 0; r < m_sources.size(); ++r) {
        if (r == m_baseline)
            continue;
        const auto& s = m_sources[r];
        if (!s.same_machine)
            os << "warning: " << esc(s.name) << " is not the same machine as the baseline:\n";
        else if (!s.fingerprint_differences.empty())
            os << "note: " << esc(s.name) << " is the same machine, other software:\n";
        for (const auto& d : s.fingerprint_differences)
            os << "  " << esc(d) << "\n";
        for (const auto& w : s.ceiling_differences)
            os << "warning: " << esc(s.name) << ": " << esc(w) << "\n";
        os << "drift: " << esc(s.name) << ": " << drift_line(s.drift, s.same_machine) << "\n";
    }
    os << "\n";
    // Columns: the row, the baseline's median, then per other report "ratio verdict".
    os << pad("op", 16) << ' ' << pad("size", 14) << ' ' << pad("device", 8) << ' '
       << pad("arch/variant", 22) << ' ' << format("%12s", "baseline");
    for (std::size_t r = 0; r < m_sources.size(); ++r)
        if (r != m_baseline)
            os << "  " << pad("[" + std::to_string(r + 1) + "]", 18);
    os << "\n";
    for (const auto& line : m_lines) {
        const auto& spec = line.first->spec;
        const auto* brow = line.cells[m_baseline].row;
        os << pad(esc(spec.op), 16) << ' ' << pad(esc(spec.size), 14) << ' '
           << pad(esc(spec.device), 8) << ' ' << pad(esc(spec.arch + "/" + spec.variant), 22) << ' '
           << (brow && brow->measured() ? format("%10.3fus", brow->stats.median * 1e6)
                                        : format("%12s", brow ? "-" : "missing"));
        for (std::size_t r = 0; r < line.cells.size(); ++r) {
            if (r == m_baseline)
                continue;
            const auto& c = line.cells[r];
            std::string text;
            if (!c.row)
                text = "missing";
            else if (!c.judged)
                text = std::string(to_string(c.row->status));
            else
                text = (std::isfinite(c.result.ratio) ? format("%.3f", c.result.ratio) : "n/a") +
                       " " + to_string(c.result.verdict);
            os << "  " << pad(text + (c.outlier ? " !" : ""), 18);
        }
        os << "\n";
    }
    os << "\nReports:\n";
    for (std::size_t r = 0; r < m_sources.size(); ++r)
        os << "  [" << r + 1 << "] " << esc(m_sources[r].name)
           << (r == m_baseline ? " (baseline)" : "")
           << (m_sources[r].machine_id.empty() ? "" : "  machine " + esc(m_sources[r].machine_id))
           << "\n";
    os << "\n"
       << count(Verdict::Same) << " same, " << count(Verdict::Faster) << " faster, "
       << count(Verdict::Slower) << " slower, " << count(Verdict::Ambiguous) << " ambiguous"
       << (count(Verdict::Machine) > 0
               ? ", " + std::to_string(count(Verdict::Machine)) + " machine (identical code)"
               : std::string())
       << "; '!' marks a cell far from the other machines (outlier).\n";
    if (const auto n = identical_code_count(*this))
        os << n << " of the judged cells ran identical code (the same build of the same cell).\n";
    if (const auto advice_text = advice().text(); !advice_text.empty())
        os << advice_text << ".\n";
    return os.str();
}

SettleAdvice MultiComparison::advice() const {
    std::vector<const SampleComparison*> judged;
    for (const auto& line : m_lines)
        for (const auto& c : line.cells)
            if (c.judged)
                judged.push_back(&c.result);
    return settle_advice(judged);
}

SettleAdvice Comparison::advice() const {
    std::vector<const SampleComparison*> all;
    for (const auto& p : m_pairs)
        all.push_back(&p.result);
    return settle_advice(all);
}

Comparison Comparison::of(const Report& a, const Report& b, const CompareOptions& options) {
    const std::vector<Report> both{a, b};
    return of(MultiComparison::of(both, {"A", "B"}, options, 0), 1);
}

Comparison Comparison::of(const MultiComparison& m, std::size_t other) {
    if (other >= m.sources().size() || other == m.baseline())
        throw std::invalid_argument("compare: report " + std::to_string(other + 1) +
                                    " is not one of the others against the baseline");
    Comparison out;
    out.m_options = m.options();
    const auto& src = m.sources()[other];
    if (!src.same_machine || !src.fingerprint_differences.empty()) {
        std::string w = !src.same_machine
                            ? "A and B are not the same machine (hardware fingerprints)"
                            : "the same machine, other software";
        for (const auto& d : src.fingerprint_differences)
            w += "; " + d;
        out.m_warnings.push_back(std::move(w));
    }
    out.m_warnings.insert(out.m_warnings.end(), src.ceiling_differences.begin(),
                          src.ceiling_differences.end());
    out.m_drift = src.drift;
    out.m_same_machine = src.same_machine;
    for (const auto& line : m.lines()) {
        const auto& ca = line.cells[m.baseline()];
        const auto& cb = line.cells[other];
        if (ca.row && cb.row)
            out.m_pairs.push_back({*ca.row, *cb.row, cb.result}); // unjudged: AMBIGUOUS + why
        else if (ca.row)
            out.m_only_a.push_back(*ca.row);
        else if (cb.row)
            out.m_only_b.push_back(*cb.row);
    }
    return out;
}

nlohmann::json Comparison::to_json() const {
    auto pairs = nlohmann::json::array();
    for (const auto& p : m_pairs) {
        nlohmann::json j = {{"op", p.a.spec.op},
                            {"size", p.a.spec.size},
                            {"backend", p.a.spec.backend},
                            {"device", p.a.spec.device},
                            {"arch", p.a.spec.arch},
                            {"variant", p.a.spec.variant},
                            {"status_a", p.a.status},
                            {"status_b", p.b.status},
                            {"median_a", p.a.stats.median},
                            {"median_b", p.b.stats.median},
                            {"samples_a", p.a.samples.size()},
                            {"samples_b", p.b.samples.size()},
                            {"parity_a", p.a.parity.verdict()},
                            {"parity_b", p.b.parity.verdict()}};
        j.update(result_json(p.result));
        pairs.push_back(std::move(j));
    }
    auto unmatched = [](const std::vector<ProfileRow>& rows) {
        auto arr = nlohmann::json::array();
        for (const auto& r : rows)
            arr.push_back({{"op", r.spec.op},
                           {"size", r.spec.size},
                           {"backend", r.spec.backend},
                           {"device", r.spec.device},
                           {"arch", r.spec.arch},
                           {"variant", r.spec.variant},
                           {"status", r.status}});
        return arr;
    };
    return {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"options", m_options.to_json()},
            {"pairs", pairs},
            {"only_in_a", unmatched(m_only_a)},
            {"only_in_b", unmatched(m_only_b)},
            {"warnings", m_warnings},
            {"drift", drift_json(m_drift)},
            {"advice", advice().to_json()}};
}

std::string Comparison::to_text() const {
    std::ostringstream os;
    os << "Verdicts: " << m_options.describe() << ".\n";
    for (const auto& w : m_warnings)
        os << "warning: " << esc(w) << "\n";
    os << "Drift: " << drift_line(m_drift, m_same_machine) << ".\n";
    os << "\n";
    // Columns are padded, never cut: a long op name widens its row instead.
    os << pad("op", 16) << ' ' << pad("size", 14) << ' ' << pad("device", 8) << ' '
       << pad("backend", 10) << ' ' << pad("arch/variant", 20) << ' '
       << format("%12s %12s %5s %8s %8s %7s  %s\n", "A median", "B median", "runs", "B/A", "q",
                 "thresh", "verdict");
    for (const auto& p : m_pairs) {
        const auto av = esc(p.a.spec.arch + "/" + p.a.spec.variant);
        const std::string ratio =
            std::isfinite(p.result.ratio) ? format("%8.3f", p.result.ratio) : format("%8s", "n/a");
        const std::string runs = std::to_string(std::max<std::size_t>(1, p.a.runs.size())) + "/" +
                                 std::to_string(std::max<std::size_t>(1, p.b.runs.size()));
        os << pad(esc(p.a.spec.op), 16) << ' ' << pad(esc(p.a.spec.size), 14) << ' '
           << pad(esc(p.a.spec.device), 8) << ' ' << pad(esc(p.a.spec.backend), 10) << ' '
           << pad(av, 20) << ' '
           << format("%10.3fus %10.3fus %5s ",
                     (p.result.center_a > 0 ? p.result.center_a : p.a.stats.median) * 1e6,
                     (p.result.center_b > 0 ? p.result.center_b : p.b.stats.median) * 1e6,
                     runs.c_str())
           << ratio << format(" %8.2g %6.1f%%  ", p.result.q_value, p.result.threshold * 100)
           << to_string(p.result.verdict) << (p.result.identical_code ? " (identical code)" : "")
           << (p.result.note.empty() ? "" : " - ") << esc(p.result.note) << "\n";
    }
    auto list = [&](const char* title, const std::vector<ProfileRow>& rows) {
        if (rows.empty())
            return;
        os << "\n" << title << " (" << rows.size() << "):\n";
        for (const auto& r : rows)
            os << "  " << esc(r.spec.label()) << " [" << esc(r.spec.backend) << "] "
               << to_string(r.status) << "\n";
    };
    list("Only in A", m_only_a);
    list("Only in B", m_only_b);
    std::size_t n[kVerdictCount] = {};
    for (const auto& p : m_pairs)
        ++n[int(p.result.verdict)];
    const auto identical = std::count_if(m_pairs.begin(), m_pairs.end(),
                                         [](const Pair& p) { return p.result.identical_code; });
    os << "\n"
       << n[0] << " same, " << n[1] << " faster, " << n[2] << " slower, " << n[3] << " ambiguous";
    if (n[int(Verdict::Machine)] > 0)
        os << ", " << n[int(Verdict::Machine)] << " machine (identical code)";
    if (identical > 0)
        os << "; " << identical << " of " << m_pairs.size() << " pairs ran identical code";
    os << "\n";
    if (const auto advice_text = advice().text(); !advice_text.empty())
        os << advice_text << ".\n";
    return os.str();
}

} // namespace switchyard
