// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profilerow.h>

#include "util/jsonread.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace switchyard {

namespace {

constexpr std::array<std::pair<RowStatus, std::string_view>, 5> kStatusIds = {{
    {RowStatus::Ok, "ok"},
    {RowStatus::Fail, "fail"},
    {RowStatus::Error, "error"},
    {RowStatus::Crashed, "crashed"},
    {RowStatus::TimedOut, "timed_out"},
}};

constexpr std::array<std::pair<Timer, std::string_view>, 2> kTimerIds = {{
    {Timer::Host, "host"},
    {Timer::Device, "device"},
}};

template <class Enum, std::size_t N>
std::string_view id_of(const std::array<std::pair<Enum, std::string_view>, N>& ids,
                       Enum value) noexcept {
    for (const auto& [e, id] : ids)
        if (e == value)
            return id;
    return ids[0].second;
}

template <class Enum, std::size_t N>
std::optional<Enum> enum_of(const std::array<std::pair<Enum, std::string_view>, N>& ids,
                            std::string_view id) noexcept {
    for (const auto& [e, name] : ids)
        if (name == id)
            return e;
    return std::nullopt;
}

void read_dims(const jsonread::Value& v, Dims& dims) {
    if (v.raw().size() != 3 || !v.raw().is_array())
        v.fail("expected an array of 3 integers");
    for (std::size_t i = 0; i < 3; ++i) {
        const auto d = v[i];
        if (!d.raw().is_number_integer() || d.raw().get<std::int64_t>() < 0)
            d.fail("expected a non-negative integer");
        dims[i] = d.raw().get<std::int64_t>();
    }
}

std::vector<double> read_samples(const jsonread::Value& v) {
    if (!v.raw().is_array())
        v.fail("expected an array of numbers, got " + jsonread::type_name(v.raw()));
    std::vector<double> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto sample = v[i];
        if (!sample.raw().is_number())
            sample.fail("expected a number, got " + jsonread::type_name(sample.raw()));
        const double d = sample.num();
        if (d < 0)
            sample.fail("expected a non-negative number");
        out.push_back(d);
    }
    return out;
}

} // namespace

std::string_view to_string(RowStatus status) noexcept {
    return id_of(kStatusIds, status);
}
std::optional<RowStatus> row_status_from_string(std::string_view id) noexcept {
    return enum_of(kStatusIds, id);
}
std::string_view to_string(Timer timer) noexcept {
    return id_of(kTimerIds, timer);
}
std::optional<Timer> timer_from_string(std::string_view id) noexcept {
    return enum_of(kTimerIds, id);
}

void to_json(nlohmann::json& j, RowStatus status) {
    j = std::string(to_string(status));
}
void to_json(nlohmann::json& j, Timer timer) {
    j = std::string(to_string(timer));
}

void from_json(const nlohmann::json& j, RowStatus& status) {
    status = jsonread::Value(j, "status").id_as("status", row_status_from_string);
}

void from_json(const nlohmann::json& j, Timer& timer) {
    timer =
        jsonread::Value(j, "timer").id_as("timer", timer_from_string, "expected host or device");
}

std::string RowSpec::label() const {
    return op + " " + size + " " + device + " " + arch + "/" + variant;
}

void to_json(nlohmann::json& j, const RowSpec& r) {
    j = {{"index", r.index},
         {"op", r.op},
         {"size", r.size},
         {"dims", {r.dims[0], r.dims[1], r.dims[2]}},
         {"device", r.device},
         {"device_kind", r.device_kind},
         {"arch", r.arch},
         {"variant", r.variant},
         {"backend", r.backend},
         {"source", r.source},
         {"workspace_bytes", r.workspace_bytes}};
    if (!r.resolved_for.empty())
        j["resolved_for"] = r.resolved_for;
    if (r.resolved)
        j["resolved"] = true;
    if (!r.runs_as.empty())
        j["runs_as"] = r.runs_as;
    if (r.threads > 0)
        j["threads"] = r.threads;
    if (!r.tuned_from.empty())
        j["tuned_from"] = r.tuned_from;
    if (!r.code.backend.empty())
        j["code"] = {{"backend", r.code.backend},
                     {"version", r.code.version},
                     {"build_id", r.code.build_id}};
}

void from_json(const nlohmann::json& j, RowSpec& r) {
    const jsonread::Value v(j, "row");
    v.expect(jsonread::Kind::Object);
    r.index = v.integer("index", 0);
    r.op = v.str("op");
    r.size = v.str("size");
    if (const auto d = v.find("dims"))
        read_dims(*d, r.dims);
    r.device = v.str("device");
    r.device_kind = v.str("device_kind", r.device.substr(0, r.device.find(':')));
    r.arch = v.str("arch");
    r.variant = v.str("variant");
    r.backend = v.str("backend", std::string());
    r.source = v.str("source", std::string());
    r.resolved_for = v.str("resolved_for", std::string());
    r.workspace_bytes = v.integer("workspace_bytes", 0);
    r.resolved = v.boolean("resolved", false);
    r.runs_as = v.str("runs_as", std::string());
    r.threads = v.integer("threads", 0, 0, RowSpec::kMaxThreads);
    r.tuned_from = v.str("tuned_from", std::string());
    if (const auto code = v.find("code")) {
        code->expect(jsonread::Kind::Object);
        r.code.backend = code->str("backend");
        r.code.version = code->str("version", std::string());
        r.code.build_id = code->str("build_id", std::string());
    }
}

nlohmann::json RowSpec::to_json() const {
    return *this;
}

RowSpec RowSpec::from_json(const nlohmann::json& j) {
    return j.get<RowSpec>();
}

std::string ProfileRow::key() const {
    return spec.op + "|" + spec.size + "|" + spec.backend + "|" + spec.device + "|" + spec.arch +
           "|" + spec.variant;
}

bool ProfileRow::missed_noise_target(double max_noise) const noexcept {
    return measured() && stop_reason != "converged" && stats.rel_noise > max_noise;
}

namespace {

std::string percent_text(double fraction) {
    char buf[32];
    const double p = fraction * 100;
    std::snprintf(buf, sizeof buf, p < 10 ? "%.1f %%" : "%.0f %%", p);
    return buf;
}

} // namespace

NoiseVerdict noise_verdict(const std::vector<ProfileRow>& rows, double max_noise) {
    NoiseVerdict v;
    v.max_noise = max_noise;
    std::vector<double> noise;
    for (const auto& r : rows) {
        if (!r.measured())
            continue;
        ++v.measured;
        if (r.missed_noise_target(max_noise))
            noise.push_back(r.stats.rel_noise);
    }
    v.missed = noise.size();
    if (!noise.empty()) {
        std::nth_element(noise.begin(), noise.begin() + noise.size() / 2, noise.end());
        v.median_noise = noise[noise.size() / 2];
    }
    return v;
}

std::string NoiseVerdict::message() const {
    if (!noisy_machine())
        return {};
    return std::to_string(missed) + " of " + std::to_string(measured) + " rows missed the " +
           percent_text(max_noise) + " noise target (their median noise is " +
           percent_text(median_noise) +
           "): this machine is too noisy for that target, so their times are less certain than "
           "the target asks. What helps: a quieter machine (close other programs, avoid shared "
           "or virtual machines), a longer budget per row, 1-thread rows on an idle CPU "
           "(--pin-cpu <n>, SWITCHYARD_PIN_CPU; taskset -c for the whole run), more runs per row "
           "(--repeat), or a looser noise target.";
}

void to_json(nlohmann::json& j, const ProfileRow& r) {
    to_json(j, r.spec);
    j["status"] = r.status;
    if (!r.reason.empty())
        j["reason"] = r.reason;
    j["timer"] = r.timer;
    j["launches_per_sample"] = r.launches_per_sample;
    j["stop_reason"] = r.stop_reason;
    j["stats"] = r.stats;
    j["samples"] = r.samples;
    j["bytes"] = r.bytes;
    j["flops"] = r.flops;
    j["gbps"] = r.gbps;
    j["gflops"] = r.gflops;
    j["peak_bandwidth_gbs"] = r.peak_bandwidth_gbs;
    j["peak_gflops"] = r.peak_gflops;
    j["ceiling_id"] = r.ceiling_id;
    j["level"] = r.level;
    j["ceiling_value"] = r.ceiling_value;
    j["ceiling_fraction"] = r.ceiling_fraction;
    j["intensity"] = r.intensity;
    j["parity"] = r.parity;
    j["warnings"] = r.warnings;
    if (r.reference_speedup > 0)
        j["speedup_vs_reference"] = r.reference_speedup;
    // Every row has a clock, or the reason it has none.
    j["clock"] =
        r.clock.method.empty()
            ? RowClock::none("the row took no samples (" + std::string(to_string(r.status)) + ")")
            : r.clock;
    if (r.memory.measured())
        j["memory"] = r.memory;
    if (r.pinned_cpu >= 0)
        j["pinned_cpu"] = r.pinned_cpu;
    if (r.runs.size() >= 2)
        j["runs"] = r.runs;
}

void to_json(nlohmann::json& j, const RunSummary& run) {
    j = {{"median", run.median}, {"count", run.count}, {"rel_noise", run.rel_noise}};
    if (run.clock_ghz > 0)
        j["clock_ghz"] = run.clock_ghz;
    if (run.memory_gbs > 0)
        j["memory_gbs"] = run.memory_gbs;
    if (run.launches_per_sample > 0)
        j["launches_per_sample"] = run.launches_per_sample;
}

void to_json(nlohmann::json& j, const RowMemory& memory) {
    j = {{"probe", memory.probe}, {"median_gbs", memory.median_gbs}, {"windows", memory.windows}};
}

void from_json(const nlohmann::json& j, RowMemory& memory) {
    const jsonread::Value v(j, "memory");
    memory.probe = v.str("probe");
    memory.median_gbs = v.num("median_gbs");
    memory.windows = v.integer("windows");
    if (memory.median_gbs < 0)
        v.at("median_gbs").fail("expected a non-negative number");
}

void from_json(const nlohmann::json& j, RunSummary& run) {
    const jsonread::Value v(j, "run");
    run.median = v.num("median", 0.0);
    run.count = v.integer("count", 0);
    run.rel_noise = v.num("rel_noise", 0.0);
    run.clock_ghz = v.num("clock_ghz", 0.0);
    run.memory_gbs = v.num("memory_gbs", 0.0);
    run.launches_per_sample = v.integer("launches_per_sample", 0, 0, std::int64_t(1) << 40);
    if (run.memory_gbs < 0)
        v.at("memory_gbs").fail("expected a non-negative number");
    if (!(run.median >= 0) || !std::isfinite(run.median))
        v.at("median").fail("expected a non-negative finite number");
}

void from_json(const nlohmann::json& j, ProfileRow& r) {
    const jsonread::Value v(j, "row");
    from_json(j, r.spec); // the same object: the spec's keys sit beside the measurement's
    r.status = v.get<RowStatus>("status");
    r.reason = v.str("reason", std::string());
    r.timer = v.contains("timer") ? v.get<Timer>("timer") : Timer::Host;
    r.launches_per_sample = v.integer("launches_per_sample", 1);
    r.stop_reason = v.str("stop_reason", std::string());
    if (const auto s = v.find("stats"))
        r.stats = s->get<SampleStats>();
    if (const auto s = v.find("samples"))
        r.samples = read_samples(*s);
    r.bytes = v.num("bytes", 0.0);
    r.flops = v.num("flops", 0.0);
    r.gbps = v.num("gbps", 0.0);
    r.gflops = v.num("gflops", 0.0);
    // Reports before format_version 3 also hold bandwidth_fraction / flops_fraction (of
    // the headline peaks): they are not read.
    r.peak_bandwidth_gbs = v.num("peak_bandwidth_gbs", 0.0);
    r.peak_gflops = v.num("peak_gflops", 0.0);
    r.ceiling_id = v.str("ceiling_id", std::string());
    r.level = v.str("level", std::string());
    r.ceiling_value = v.num("ceiling_value", 0.0);
    r.ceiling_fraction = v.num("ceiling_fraction", 0.0);
    r.intensity = v.num("intensity", 0.0);
    if (const auto p = v.find("parity"))
        r.parity = p->get<ParityResult>();
    r.warnings = v.strings("warnings");
    r.reference_speedup = v.num("speedup_vs_reference", 0.0);
    if (const auto c = v.find("clock"))
        r.clock = c->get<RowClock>();
    if (const auto m = v.find("memory"))
        r.memory = m->get<RowMemory>();
    r.pinned_cpu = int(v.integer("pinned_cpu", -1, 0, std::int64_t(1) << 20));
    if (r.reference_speedup < 0)
        v.at("speedup_vs_reference").fail("expected a non-negative number");
    if (const auto runs = v.find("runs")) {
        runs->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < runs->size(); ++i)
            r.runs.push_back((*runs)[i].get<RunSummary>());
    }
}

std::vector<double> ProfileRow::run_medians() const {
    std::vector<double> out;
    if (runs.size() < 2)
        return out;
    for (const auto& r : runs)
        out.push_back(r.median);
    return out;
}

ProfileRow merge_runs(std::vector<ProfileRow> runs, std::int64_t keep_samples) {
    if (runs.empty())
        throw std::invalid_argument("merge_runs: no runs");
    std::size_t first = runs.size();
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].measured() && runs[i].stats.median > 0 && !runs[i].samples.empty()) {
            first = i;
            break;
        }
    if (first == runs.size())
        return std::move(runs.front());
    ProfileRow out = runs[first];
    out.runs.clear();
    std::vector<double> pooled;
    std::int64_t discarded = 0;
    std::vector<double> memory; // each run's median of its memory probe
    out.memory.windows = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        if (!r.measured() || !(r.stats.median > 0) || r.samples.empty()) {
            out.warnings.push_back(
                "run " + std::to_string(i + 1) + " of " + std::to_string(runs.size()) +
                " did not measure (" + std::string(to_string(r.status)) +
                (r.reason.empty() ? "" : ": " + r.reason) + "); the row pools the others");
            continue;
        }
        out.runs.push_back({r.stats.median, r.stats.count, r.stats.rel_noise, r.clock.median_ghz,
                            r.memory.measured() ? r.memory.median_gbs : 0.0,
                            r.launches_per_sample});
        pooled.insert(pooled.end(), r.samples.begin(), r.samples.end());
        discarded += r.clock.samples_discarded;
        if (r.memory.measured() && r.memory.probe == out.memory.probe) {
            memory.push_back(r.memory.median_gbs);
            out.memory.windows += r.memory.windows;
        }
        if (r.pinned_cpu != runs[first].pinned_cpu)
            out.pinned_cpu = -1; // not one CPU over the runs
        if (r.clock.throttled)
            out.clock.throttled = true;
        out.clock.best_ghz = std::max(out.clock.best_ghz, r.clock.best_ghz);
        if (r.clock.min_ghz > 0)
            out.clock.min_ghz = out.clock.min_ghz > 0 ? std::min(out.clock.min_ghz, r.clock.min_ghz)
                                                      : r.clock.min_ghz;
        if (r.status == RowStatus::Fail)
            out.status = RowStatus::Fail; // a parity failure in any run fails the row
        for (const auto& w : r.warnings)
            if (i != first &&
                std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end())
                out.warnings.push_back(w);
    }
    const double old_median = out.stats.median;
    out.stats = SampleStats::from(pooled);
    thin_samples(pooled, keep_samples);
    out.samples = std::move(pooled);
    if (out.stats.median > 0) {
        out.gbps = out.bytes / out.stats.median / 1e9;
        out.gflops = out.flops / out.stats.median / 1e9;
        out.ceiling_fraction *= old_median / out.stats.median; // achieved is 1 / time
    }
    out.clock.samples_discarded = int(discarded);
    out.memory.median_gbs = memory.empty() ? 0.0 : SampleStats::from(memory).median;
    if (out.runs.size() < 2)
        out.runs.clear();
    return out;
}

double reference_speedup(const ProfileRow& row, const ProfileRow& reference) {
    if (!row.measured() || !reference.measured() || !(row.stats.median > 0) ||
        !(reference.stats.median > 0))
        return 0;
    return reference.stats.median / row.stats.median;
}

void apply_reference_speedups(std::vector<ProfileRow>& rows) {
    std::map<std::string, const ProfileRow*> refs;
    for (const auto& r : rows)
        if (r.spec.is_reference() && r.measured())
            refs.emplace(r.spec.op + "|" + r.spec.size, &r);
    for (auto& r : rows) {
        const auto it = refs.find(r.spec.op + "|" + r.spec.size);
        r.reference_speedup = it == refs.end() ? 0 : reference_speedup(r, *it->second);
    }
}

nlohmann::json ProfileRow::to_json() const {
    return *this;
}

ProfileRow ProfileRow::from_json(const nlohmann::json& j) {
    return j.get<ProfileRow>();
}

} // namespace switchyard
