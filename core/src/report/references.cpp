// SPDX-License-Identifier: MIT
#include <switchyard/report/references.h>

#include "util/jsonread.h"
#include "util/safefile.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace switchyard {

namespace {

std::string row_key(const std::string& op, const std::string& size, const std::string& backend,
                    const std::string& device, const std::string& arch,
                    const std::string& variant) {
    return op + "|" + size + "|" + backend + "|" + device + "|" + arch + "|" + variant;
}

std::string seconds_text(double s) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4g us", s * 1e6);
    return buf;
}

std::optional<double> tolerance(const jsonread::Value& row, const char* key, bool lower) {
    const auto v = row.find(key);
    if (!v || v->raw().is_null())
        return std::nullopt;
    const double t = v->num();
    if (lower && (t < -1 || t > 0))
        v->fail("expected a number from -1 to 0 (or null: no lower bound), got " + v->raw().dump());
    if (!lower && t < 0)
        v->fail("expected a number >= 0 (or null: no upper bound), got " + v->raw().dump());
    return t;
}

nlohmann::json tolerance_json(const std::optional<double>& t) {
    return t ? nlohmann::json(*t) : nlohmann::json();
}

} // namespace

std::string ReferenceRow::key() const {
    return row_key(op, size, backend, device, arch, variant);
}

bool ReferenceSystem::matches(const Report& report) const {
    const RunContext& context = report.context;
    if (!machine_id.empty() && context.fingerprint.machine_id != machine_id)
        return false;
    if (hostnames.empty())
        return true;
    const auto& host = context.host.hostname;
    return std::any_of(hostnames.begin(), hostnames.end(), [&](const std::string& pattern) {
        return ::fnmatch(pattern.c_str(), host.c_str(), 0) == 0;
    });
}

const ReferenceSystem* References::match(const Report& report) const {
    for (const auto& s : systems)
        if (s.matches(report))
            return &s;
    return nullptr;
}

nlohmann::json References::to_json() const {
    auto systems_json = nlohmann::json::array();
    for (const auto& s : systems) {
        auto rows = nlohmann::json::array();
        for (const auto& r : s.rows)
            rows.push_back({{"op", r.op},
                            {"size", r.size},
                            {"device", r.device},
                            {"backend", r.backend},
                            {"arch", r.arch},
                            {"variant", r.variant},
                            {"value", r.value},
                            {"lower", tolerance_json(r.lower)},
                            {"upper", tolerance_json(r.upper)}});
        for (std::size_t i = 0; i < s.rows.size(); ++i) {
            if (s.rows[i].memory_gbs)
                rows[i]["memory_gbs"] = *s.rows[i].memory_gbs;
            if (!s.rows[i].band.empty())
                rows[i]["band"] = s.rows[i].band;
        }
        nlohmann::json match = nlohmann::json::object();
        if (!s.machine_id.empty())
            match["machine_id"] = s.machine_id;
        if (!s.hostnames.empty())
            match["hostnames"] = s.hostnames;
        nlohmann::json sys = {{"name", s.name}, {"match", match}, {"rows", rows}};
        if (s.reports > 1)
            sys["reports"] = s.reports;
        if (s.control)
            sys["control"] = {{"sentinel", s.control->sentinel},
                              {"fastest", s.control->fastest},
                              {"slowest", s.control->slowest}};
        systems_json.push_back(std::move(sys));
    }
    return {{"format", kFormat}, {"format_version", kFormatVersion}, {"systems", systems_json}};
}

References References::from_json(const nlohmann::json& j, const std::string& origin) {
    try {
        const jsonread::Value v(j);
        v.expect(jsonread::Kind::Object);
        if (v.str("format", std::string()) != kFormat)
            v.at("format").fail(std::string("expected \"") + kFormat +
                                "\" (is this a references file? write one with check "
                                "--write-references)");
        const auto version = v.integer("format_version", std::nullopt, 1, 1 << 20);
        if (version > kFormatVersion)
            v.at("format_version")
                .fail("version " + std::to_string(version) + " is newer than this build reads (" +
                      std::to_string(kFormatVersion) + ")");
        References out;
        const auto systems = v.at("systems");
        systems.expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < systems.size(); ++i) {
            const auto s = systems[i];
            ReferenceSystem sys;
            sys.name = s.str("name");
            if (const auto m = s.find("match")) {
                m->expect(jsonread::Kind::Object);
                sys.machine_id = m->str("machine_id", std::string());
                sys.hostnames = m->strings("hostnames");
            }
            sys.reports = std::size_t(s.integer("reports", 1, 1, 1 << 20));
            if (const auto c = s.find("control"); c && !c->raw().is_null()) {
                c->expect(jsonread::Kind::Object);
                ReferenceControl control;
                control.sentinel = c->str("sentinel");
                control.fastest = c->num("fastest");
                control.slowest = c->num("slowest");
                if (!(control.fastest > 0) || control.slowest < control.fastest)
                    c->fail("expected times 0 < fastest <= slowest (seconds per launch)");
                sys.control = control;
            }
            const auto rows = s.at("rows");
            rows.expect(jsonread::Kind::Array);
            for (std::size_t k = 0; k < rows.size(); ++k) {
                const auto r = rows[k];
                ReferenceRow row;
                row.op = r.str("op");
                row.size = r.str("size");
                row.device = r.str("device");
                row.backend = r.str("backend", std::string("builtin"));
                row.arch = r.str("arch");
                row.variant = r.str("variant");
                row.value = r.num("value");
                if (!(row.value > 0))
                    r.at("value").fail("expected a time > 0 (seconds per launch)");
                row.lower = tolerance(r, "lower", true);
                row.upper = tolerance(r, "upper", false);
                if (const auto m = r.find("memory_gbs"); m && !m->raw().is_null()) {
                    row.memory_gbs = m->num();
                    if (!(*row.memory_gbs > 0))
                        m->fail("expected a bandwidth > 0 (GB/s) or null");
                }
                row.band = r.str("band", std::string());
                sys.rows.push_back(std::move(row));
            }
            out.systems.push_back(std::move(sys));
        }
        return out;
    } catch (const std::runtime_error& e) {
        throw ReferenceError(origin + ": " + e.what());
    }
}

References References::load(const std::string& path) {
    std::string text;
    try {
        auto in = safefile::InputFile(path, safefile::InputFile::Accept::RegularFileOrPipe);
        text = in.read_all(Report::kMaxBytes, "references file");
    } catch (const safefile::Error& e) {
        throw ReferenceError(e.what());
    }
    nlohmann::json j;
    try {
        jsonread::ParseLimits limits;
        limits.max_depth = Report::kMaxDepth;
        j = jsonread::parse(text, limits);
    } catch (const jsonread::ParseError& e) {
        throw ReferenceError(path + ": malformed JSON at byte " + std::to_string(e.byte()) + " (" +
                             e.position() + "): " + e.message());
    }
    return from_json(j, path);
}

void References::save(const std::string& path) const {
    try {
        safefile::write_file(path, jsonread::dump(to_json(), 1) + "\n");
    } catch (const safefile::Error& e) {
        throw ReferenceError(e.what());
    }
}

namespace {

// A time measured beside `memory` GB/s, at `at` GB/s instead: the part of it the memory
// accounts for (`share` of the memory, 0..1) scaled by the two.
double at_memory(double seconds, double share, double memory, double at) {
    return seconds / (1 - share + share * at / memory);
}

// The row's share of the memory beside it (gbps / memory, at most 1).
double memory_share(const ProfileRow& r) {
    return std::clamp(r.gbps / r.memory.median_gbs, 0.0, 1.0);
}

// The relative standard deviation of one row's run medians on the log scale, of its times at
// the row's memory where every run has the memory it got (a shared host's drift is not the
// row's noise); nullopt with fewer than two runs.
std::optional<double> between_runs(const ProfileRow& r, bool by_memory) {
    std::vector<double> logs;
    for (const auto& run : r.runs) {
        if (!(run.median > 0) || (by_memory && !(run.memory_gbs > 0)))
            return std::nullopt;
        logs.push_back(std::log(
            by_memory ? at_memory(run.median, memory_share(r), run.memory_gbs, r.memory.median_gbs)
                      : run.median));
    }
    if (logs.size() < 2)
        return std::nullopt;
    double mean = 0;
    for (const double x : logs)
        mean += x / double(logs.size());
    double var = 0;
    for (const double x : logs)
        var += (x - mean) * (x - mean) / double(logs.size() - 1);
    return std::sqrt(var);
}

} // namespace

ReferenceSystem References::system_from(const Report& report, std::string name,
                                        std::vector<std::string> hostnames, const BandRule& rule) {
    ReferenceSystem s;
    const RunContext& context = report.context;
    s.name = name.empty() ? context.host.hostname : std::move(name);
    if (s.name.empty())
        s.name = "unnamed";
    s.machine_id = context.fingerprint.machine_id;
    s.hostnames = std::move(hostnames);
    for (const auto& r : report.rows) {
        if (r.status != RowStatus::Ok || !(r.stats.median > 0))
            continue;
        ReferenceRow row{r.spec.op,      r.spec.size,    r.spec.device, r.spec.backend, r.spec.arch,
                         r.spec.variant, r.stats.median, rule.lower,    rule.upper};
        const bool by_memory = r.memory.measured();
        if (by_memory)
            row.memory_gbs = r.memory.median_gbs;
        if (rule.upper) {
            row.band = "given";
        } else if (const auto sigma = between_runs(r, by_memory)) {
            const double n = double(r.runs.size());
            row.upper =
                std::max(rule.floor, std::expm1(rule.sigmas * *sigma * std::sqrt(1 + 1 / n)));
            row.band = "runs";
        } else {
            row.upper = rule.floor;
            row.band = "floor";
        }
        s.rows.push_back(std::move(row));
    }
    if (const auto& c = context.control; c && c->usable())
        s.control = ReferenceControl{c->sentinel, c->fastest(), c->slowest()};
    return s;
}

namespace {

// The standard deviation of `logs` (n - 1); nullopt for fewer than two.
std::optional<double> sd_of(const std::vector<double>& logs) {
    if (logs.size() < 2)
        return std::nullopt;
    double mean = 0;
    for (const double x : logs)
        mean += x / double(logs.size());
    double var = 0;
    for (const double x : logs)
        var += (x - mean) * (x - mean) / double(logs.size() - 1);
    return std::sqrt(var);
}

} // namespace

ReferenceSystem References::system_from(std::span<const Report> reports, std::string name,
                                        std::vector<std::string> hostnames, const BandRule& rule) {
    if (reports.empty())
        throw ReferenceError("references need at least one report");
    if (reports.size() == 1)
        return system_from(reports.front(), std::move(name), std::move(hostnames), rule);
    const auto& first = reports.front().context;
    for (std::size_t i = 1; i < reports.size(); ++i)
        if (reports[i].context.fingerprint.machine_id != first.fingerprint.machine_id)
            throw ReferenceError(
                "the reports of one system must come from one machine: report " +
                std::to_string(i + 1) + " has machine_id '" +
                reports[i].context.fingerprint.machine_id + "', the first '" +
                first.fingerprint.machine_id +
                "' (give each machine's reports a system of their own: --system NAME)");
    ReferenceSystem s = system_from(reports.front(), std::move(name), std::move(hostnames), rule);
    s.rows.clear();
    s.reports = reports.size();
    // Every report's measured rows by key.
    std::vector<std::map<std::string, const ProfileRow*>> by_key(reports.size());
    for (std::size_t i = 0; i < reports.size(); ++i)
        for (const auto& r : reports[i].rows)
            if (r.status == RowStatus::Ok && r.stats.median > 0)
                by_key[i].emplace(r.key(), &r);
    struct Pending {
        ReferenceRow row;
        std::optional<double> sigma; // between the reports, on the log scale
    };
    std::vector<Pending> pending;
    for (const auto& r : reports.front().rows) {
        const auto key = r.key();
        std::vector<const ProfileRow*> all;
        for (const auto& m : by_key)
            if (const auto it = m.find(key); it != m.end())
                all.push_back(it->second);
        if (all.size() != reports.size())
            continue; // not measured in every report
        ReferenceRow row{r.spec.op,      r.spec.size, r.spec.device, r.spec.backend, r.spec.arch,
                         r.spec.variant, 0,           rule.lower,    rule.upper};
        // With memory beside the row in every report: each report's time at the memories'
        // geometric mean, as check judges it.
        const bool by_memory = std::all_of(all.begin(), all.end(), [](const ProfileRow* x) {
            return x->memory.measured() && x->memory.median_gbs > 0;
        });
        if (by_memory) {
            double log_memory = 0;
            for (const auto* x : all)
                log_memory += std::log(x->memory.median_gbs) / double(all.size());
            row.memory_gbs = std::exp(log_memory);
        }
        std::vector<double> logs;
        for (const auto* x : all)
            logs.push_back(std::log(by_memory ? at_memory(x->stats.median, memory_share(*x),
                                                          x->memory.median_gbs, *row.memory_gbs)
                                              : x->stats.median));
        double mean = 0;
        for (const double x : logs)
            mean += x / double(logs.size());
        row.value = std::exp(mean);
        pending.push_back({std::move(row), sd_of(logs)});
    }
    // The machine's drift between reports is shared by its rows: a row's own sigma (K - 1
    // degrees of freedom) is taken at least at the median over the system's rows.
    std::vector<double> sigmas;
    for (const auto& p : pending)
        if (p.sigma)
            sigmas.push_back(*p.sigma);
    std::sort(sigmas.begin(), sigmas.end());
    const double typical = sigmas.empty() ? 0 : sigmas[sigmas.size() / 2];
    const double k = double(reports.size());
    for (auto& p : pending) {
        if (rule.upper) {
            p.row.band = "given";
        } else {
            const double sigma = std::max(p.sigma.value_or(0), typical);
            p.row.upper =
                std::max(rule.floor, std::expm1(rule.sigmas * sigma * std::sqrt(1 + 1 / k)));
            p.row.band = "reports";
        }
        s.rows.push_back(std::move(p.row));
    }
    // The range of the machine's drift control over every reference run.
    std::optional<ReferenceControl> control;
    for (const auto& rep : reports) {
        const auto& c = rep.context.control;
        if (!c || !c->usable() || (control && control->sentinel != c->sentinel)) {
            control.reset();
            break;
        }
        if (!control)
            control = ReferenceControl{c->sentinel, c->fastest(), c->slowest()};
        control->fastest = std::min(control->fastest, c->fastest());
        control->slowest = std::max(control->slowest, c->slowest());
    }
    s.control = control;
    return s;
}

void References::put(ReferenceSystem system) {
    for (auto& s : systems)
        if (s.name == system.name) {
            s = std::move(system);
            return;
        }
    systems.push_back(std::move(system));
}

const char* to_string(CheckedRow::Status status) noexcept {
    switch (status) {
    case CheckedRow::Status::Pass:
        return "pass";
    case CheckedRow::Status::Fail:
        return "FAIL";
    case CheckedRow::Status::Missing:
        return "MISSING";
    case CheckedRow::Status::NotMeasured:
        return "NOT MEASURED";
    case CheckedRow::Status::NoReference:
        break;
    }
    return "no reference";
}

std::size_t CheckResult::failures() const {
    return std::size_t(
        std::count_if(rows.begin(), rows.end(), [](const CheckedRow& r) { return r.failed(); }));
}

CheckResult check_report(const Report& report, const References& references, std::string name) {
    CheckResult out;
    out.report = std::move(name);
    const auto* system = references.match(report);
    if (!system)
        return out;
    out.system = system->name;
    // How far this report's machine went beyond the references' (their drift controls): the
    // band follows it, since a row that much slower (or faster) is the machine's.
    double drift_low = 1, drift_high = 1;
    std::string drift_note;
    if (const auto& c = report.context.control;
        c && c->usable() && system->control && system->control->sentinel == c->sentinel) {
        drift_high = std::max(1.0, c->slowest() / system->control->slowest);
        drift_low = std::min(1.0, c->fastest() / system->control->fastest);
        char buf[200];
        if (drift_high > 1)
            std::snprintf(buf, sizeof buf,
                          "; its machine ran the drift control up to %.2fx slower than in any "
                          "reference run, and the band's top follows it",
                          drift_high);
        else if (drift_low < 1)
            std::snprintf(buf, sizeof buf,
                          "; its machine ran the drift control up to %.2fx faster than in any "
                          "reference run, and the band's bottom follows it",
                          1 / drift_low);
        else
            buf[0] = '\0';
        drift_note = buf;
    }
    std::map<std::string, const ProfileRow*> rows;
    for (const auto& r : report.rows)
        rows.emplace(r.key(), &r);
    std::map<std::string, bool> referenced;
    for (const auto& ref : system->rows) {
        CheckedRow c;
        c.label = ref.op + " " + ref.size + " " + ref.device + " " + ref.arch + "/" + ref.variant +
                  " [" + ref.backend + "]";
        c.value = ref.value;
        c.drift_low = drift_low;
        c.drift_high = drift_high;
        if (ref.lower)
            c.low = ref.value * (1 + *ref.lower) * drift_low;
        if (ref.upper)
            c.high = ref.value * (1 + *ref.upper) * drift_high;
        referenced[ref.key()] = true;
        const auto it = rows.find(ref.key());
        if (it == rows.end()) {
            c.status = CheckedRow::Status::Missing;
            c.message = "the report has no such row (another --op, --sizes or build?)";
        } else if (it->second->status != RowStatus::Ok || !(it->second->stats.median > 0)) {
            c.status = CheckedRow::Status::NotMeasured;
            c.message = std::string(to_string(it->second->status)) +
                        (it->second->reason.empty() ? "" : ": " + it->second->reason);
        } else {
            const auto& row = *it->second;
            c.measured = row.stats.median;
            // A row with memory beside it, and a reference that has it too: its time at the
            // reference's memory.
            double m = c.measured;
            std::string judged = seconds_text(m);
            if (ref.memory_gbs && row.memory.measured()) {
                // The part of its time the memory accounts for: its share of the memory
                // beside it (1 at the memory's limit; a scalar loop over DRAM, less).
                m = at_memory(c.measured, memory_share(row), row.memory.median_gbs,
                              *ref.memory_gbs);
                c.at_reference_memory = m;
                char gbs[96];
                std::snprintf(gbs, sizeof gbs,
                              " at %.1f GB/s of memory beside it, %.4g us at the "
                              "reference's %.1f GB/s,",
                              row.memory.median_gbs, m * 1e6, *ref.memory_gbs);
                judged += gbs;
                c.message = "judged at the reference's memory:" +
                            std::string(gbs).substr(0, std::string(gbs).size() - 1);
            }
            const bool below = c.low && m < *c.low, above = c.high && m > *c.high;
            c.status = below || above ? CheckedRow::Status::Fail : CheckedRow::Status::Pass;
            if (above)
                c.message = judged + " is slower than the upper bound " + seconds_text(*c.high) +
                            " (reference " + seconds_text(ref.value) + ")";
            else if (below)
                c.message = judged + " is faster than the lower bound " + seconds_text(*c.low) +
                            " (reference " + seconds_text(ref.value) +
                            "): update the reference if the change is intended";
            if ((drift_high > 1 && c.high) || (drift_low < 1 && c.low))
                c.message +=
                    (c.message.empty() ? "judged with the drift control" : "") + drift_note;
        }
        out.rows.push_back(std::move(c));
    }
    for (const auto& r : report.rows) {
        if (referenced.count(r.key()))
            continue;
        CheckedRow c;
        c.label = r.spec.label() + " [" + r.spec.backend + "]";
        c.measured = r.measured() ? r.stats.median : 0;
        out.rows.push_back(std::move(c));
    }
    return out;
}

} // namespace switchyard
