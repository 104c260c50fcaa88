// SPDX-License-Identifier: MIT
#include <switchyard/profiling/stats.h>
#include <switchyard/report/compare.h>

#include "util/textutil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace switchyard {

namespace {

// A number with at most one decimal ("12.5", "-33", "1203").
std::string format_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.1f", v);
    return buf;
}

} // namespace

SampleComparison compare_samples(std::span<const double> a, std::span<const double> b,
                                 const CompareOptions& options) {
    SampleComparison c;
    if (a.empty() || b.empty()) {
        c.verdict = "UNCERTAIN";
        c.note = "no samples";
        return c;
    }
    const double ma = SampleStats::from(a).median, mb = SampleStats::from(b).median;
    if (!(ma > 0)) {
        // A zero-time baseline makes any ratio meaningless: never FASTER at 0.000.
        c.ratio = std::numeric_limits<double>::quiet_NaN();
        c.verdict = "UNCERTAIN";
        c.note = "the ratio is undefined: A's median time is 0";
        return c;
    }
    c.ratio = mb / ma;
    if (a.size() < options.min_samples || b.size() < options.min_samples) {
        c.verdict = "UNCERTAIN";
        c.note = "too few samples for the U test (need " + std::to_string(options.min_samples) +
                 " per side)";
        return c;
    }
    c.p_value = mann_whitney_p(a, b);
    if (c.p_value < options.alpha) {
        if (std::fabs(c.ratio - 1.0) < options.min_effect)
            c.verdict = "SAME";
        else
            c.verdict = c.ratio < 1.0 ? "FASTER" : "SLOWER";
    } else if (a.size() < options.optimal_samples || b.size() < options.optimal_samples) {
        c.verdict = "UNCERTAIN";
        c.note = "no significant difference, but fewer than " +
                 std::to_string(options.optimal_samples) + " samples per side cannot show sameness";
    } else {
        c.verdict = "SAME";
    }
    return c;
}

namespace {

struct CeilingValue {
    double value = 0;
    bool bandwidth = false;
};

// device id -> (ceiling id -> value), from a report context's devices[].ceilings. Entries
// that are not what the format says are skipped: the report loader checks the rows, and a
// warning must never make compare fail.
std::map<std::string, std::map<std::string, CeilingValue>>
ceilings_of(const nlohmann::json& context) {
    std::map<std::string, std::map<std::string, CeilingValue>> out;
    if (!context.is_object() || !context.contains("devices") || !context["devices"].is_array())
        return out;
    for (const auto& d : context["devices"]) {
        if (!d.is_object() || !d.contains("id") || !d["id"].is_string() ||
            !d.contains("ceilings") || !d["ceilings"].is_array() || d["ceilings"].empty())
            continue;
        auto& m = out[d["id"].get<std::string>()];
        for (const auto& c : d["ceilings"])
            if (c.is_object() && c.contains("id") && c["id"].is_string() && c.contains("value") &&
                c["value"].is_number())
                m[c["id"].get<std::string>()] = {c["value"].get<double>(),
                                                 c.contains("kind") && c["kind"].is_string() &&
                                                     c["kind"] == "bandwidth"};
    }
    return out;
}

// device id -> (ceiling id -> the probe's spread), where the context records it: the CPU's
// probes do (context.cpu_peaks.spread, CpuPeaks::spread), for the device "cpu".
std::map<std::string, std::map<std::string, double>> spreads_of(const nlohmann::json& context) {
    std::map<std::string, std::map<std::string, double>> out;
    if (!context.is_object() || !context.contains("cpu_peaks"))
        return out;
    const auto& peaks = context["cpu_peaks"];
    if (!peaks.is_object() || !peaks.contains("spread") || !peaks["spread"].is_object())
        return out;
    for (const auto& [id, v] : peaks["spread"].items())
        if (v.is_number() && v.get<double>() >= 0)
            out["cpu"][id] = v.get<double>();
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

std::vector<std::string> ceiling_differences(const nlohmann::json& context_a,
                                             const nlohmann::json& context_b, double tolerance,
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
        if (!differ.empty())
            out.push_back(device + ": ceilings differ by more than their probes' noise (" +
                          list_ids(differ) +
                          "): the reports come from machines with different ceilings, so "
                          "times are not like for like; compare ceiling fractions");
    }
    return out;
}

Comparison Comparison::of(const Report& a, const Report& b, const CompareOptions& options) {
    Comparison out;
    out.m_warnings = ceiling_differences(a.context, b.context, options.ceiling_tolerance,
                                         options.bandwidth_ceiling_tolerance);
    std::map<std::string, const ProfileRow*> in_b;
    std::map<std::string, bool> used;
    for (const auto& r : b.rows)
        in_b.emplace(r.key(), &r); // first row wins on duplicate keys
    for (const auto& ra : a.rows) {
        const auto it = in_b.find(ra.key());
        if (it == in_b.end() || used[ra.key()]) {
            out.m_only_a.push_back(ra);
            continue;
        }
        used[ra.key()] = true;
        const ProfileRow& rb = *it->second;
        Pair p{ra, rb, {}};
        if (!ra.measured() || !rb.measured()) {
            p.result.verdict = "UNCERTAIN";
            p.result.note = "not measured in " + std::string(!ra.measured() ? "A" : "B") + " (" +
                            std::string(to_string(!ra.measured() ? ra.status : rb.status)) + ")";
        } else {
            // Reports thin their samples; without samples fall back to nothing (UNCERTAIN).
            p.result = compare_samples(ra.samples, rb.samples, options);
            if (p.result.ratio == 0 && ra.stats.median > 0)
                p.result.ratio = rb.stats.median / ra.stats.median;
        }
        out.m_pairs.push_back(std::move(p));
    }
    for (const auto& rb : b.rows)
        if (!used[rb.key()] || in_b[rb.key()] != &rb)
            out.m_only_b.push_back(rb);
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
                            {"ratio", std::isfinite(p.result.ratio) ? nlohmann::json(p.result.ratio)
                                                                    : nlohmann::json()},
                            {"p_value", p.result.p_value},
                            {"verdict", p.result.verdict},
                            {"parity_a", p.a.parity.verdict()},
                            {"parity_b", p.b.parity.verdict()}};
        if (!p.result.note.empty())
            j["note"] = p.result.note;
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
            {"pairs", pairs},
            {"only_in_a", unmatched(m_only_a)},
            {"only_in_b", unmatched(m_only_b)},
            {"warnings", m_warnings}};
}

namespace {

// printf-style formatting into a string of any length.
template <class... Args> std::string format(const char* fmt, Args... args) {
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    std::string out(std::size_t(n > 0 ? n : 0), '\0');
    std::snprintf(out.data(), out.size() + 1, fmt, args...);
    return out;
}

std::string pad(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

} // namespace

std::string Comparison::to_text() const {
    // Every field comes from a report file, which anyone may have written: a newline or a
    // control character in it is escaped, so it cannot forge a row or move the cursor.
    const auto esc = [](std::string_view s) { return text::escape_control(s); };
    std::ostringstream os;
    for (const auto& w : m_warnings)
        os << "warning: " << esc(w) << "\n";
    if (!m_warnings.empty())
        os << "\n";
    // Columns are padded, never cut: a long op name widens its row instead.
    os << pad("op", 16) << ' ' << pad("size", 14) << ' ' << pad("device", 8) << ' '
       << pad("backend", 10) << ' ' << pad("arch/variant", 20) << ' '
       << format("%12s %12s %8s %8s  %s\n", "A median", "B median", "B/A", "p", "verdict");
    for (const auto& p : m_pairs) {
        const auto av = esc(p.a.spec.arch + "/" + p.a.spec.variant);
        const std::string ratio =
            std::isfinite(p.result.ratio) ? format("%8.3f", p.result.ratio) : format("%8s", "n/a");
        os << pad(esc(p.a.spec.op), 16) << ' ' << pad(esc(p.a.spec.size), 14) << ' '
           << pad(esc(p.a.spec.device), 8) << ' ' << pad(esc(p.a.spec.backend), 10) << ' '
           << pad(av, 20) << ' '
           << format("%10.3fus %10.3fus ", p.a.stats.median * 1e6, p.b.stats.median * 1e6) << ratio
           << format(" %8.4f  ", p.result.p_value) << p.result.verdict
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
    return os.str();
}

} // namespace switchyard
