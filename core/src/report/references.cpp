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
        systems_json.push_back({{"name", s.name}, {"match", match}, {"rows", rows}});
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
    std::map<std::string, const ProfileRow*> rows;
    for (const auto& r : report.rows)
        rows.emplace(r.key(), &r);
    std::map<std::string, bool> referenced;
    for (const auto& ref : system->rows) {
        CheckedRow c;
        c.label = ref.op + " " + ref.size + " " + ref.device + " " + ref.arch + "/" + ref.variant +
                  " [" + ref.backend + "]";
        c.value = ref.value;
        if (ref.lower)
            c.low = ref.value * (1 + *ref.lower);
        if (ref.upper)
            c.high = ref.value * (1 + *ref.upper);
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
