// SPDX-License-Identifier: MIT
#include <switchyard/report/dispatch.h>

#include <switchyard/profiling/stats.h>
#include <switchyard/report/compare.h>

#include "util/jsonread.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace switchyard {

namespace {

std::string cell_name(const ProfileRow& r) {
    return r.spec.arch + "/" + r.spec.variant;
}

} // namespace

std::string DispatchFinding::message() const {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", speedup);
    const std::string where = op + " " + size + " on " + device;
    if (verdict == "regret")
        return where + ": dispatch picks " + resolved + "; " + fastest + " (" + fastest_backend +
               ") is " + ratio + " faster here";
    if (verdict == "uncertain")
        return where + ": dispatch picks " + resolved + "; " + fastest + " looks " + ratio +
               " faster, but the samples cannot tell (p = " + std::to_string(p_value).substr(0, 5) +
               ")";
    if (fastest == resolved)
        return where + ": dispatch picks " + resolved + ", the fastest cell here";
    if (same_code)
        return where + ": dispatch picks " + resolved + ", which runs " + fastest +
               "'s code on this device; the " + ratio +
               " between the two is this run's noise (the same kernel measured twice)";
    return where + ": dispatch picks " + resolved + "; the fastest, " + fastest + ", is within " +
           std::to_string(int(threshold * 100 + 0.5)) + " % (" + ratio + ")";
}

nlohmann::json DispatchFinding::to_json() const {
    return {{"verdict", verdict},
            {"op", op},
            {"size", size},
            {"device", device},
            {"resolved", resolved},
            {"resolved_backend", resolved_backend},
            {"resolved_index", resolved_index},
            {"resolved_median_s", resolved_median_s},
            {"fastest", fastest},
            {"fastest_backend", fastest_backend},
            {"fastest_index", fastest_index},
            {"fastest_median_s", fastest_median_s},
            {"speedup", speedup},
            {"p_value", p_value},
            {"threshold", threshold},
            {"same_code", same_code},
            {"message", message()}};
}

DispatchFinding DispatchFinding::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "dispatch");
    v.expect(jsonread::Kind::Object);
    DispatchFinding f;
    f.verdict = v.str("verdict");
    if (f.verdict != "regret" && f.verdict != "ok" && f.verdict != "uncertain")
        v.at("verdict").fail("expected regret, ok or uncertain, got '" + f.verdict + "'");
    f.op = v.str("op");
    f.size = v.str("size");
    f.device = v.str("device");
    f.resolved = v.str("resolved");
    f.resolved_backend = v.str("resolved_backend", std::string());
    f.resolved_index = v.integer("resolved_index", -1);
    f.resolved_median_s = v.num("resolved_median_s", 0.0);
    f.fastest = v.str("fastest");
    f.fastest_backend = v.str("fastest_backend", std::string());
    f.fastest_index = v.integer("fastest_index", -1);
    f.fastest_median_s = v.num("fastest_median_s", 0.0);
    f.speedup = v.num("speedup", 1.0);
    f.p_value = v.num("p_value", 1.0);
    f.threshold = v.num("threshold", 0.0);
    f.same_code = v.boolean("same_code", false);
    return f;
}

std::vector<DispatchFinding> dispatch_findings(const std::vector<ProfileRow>& rows,
                                               const DispatchOptions& options) {
    // Rows by (op, size, device), in the order they first appear.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const ProfileRow*>> groups;
    for (const auto& r : rows) {
        const auto key = r.spec.op + "|" + r.spec.size + "|" + r.spec.device;
        auto [it, added] = groups.try_emplace(key);
        if (added)
            order.push_back(key);
        it->second.push_back(&r);
    }
    std::vector<DispatchFinding> out;
    for (const auto& key : order) {
        const auto& group = groups[key];
        const ProfileRow* resolved = nullptr;
        const ProfileRow* fastest = nullptr;
        std::size_t candidates = 0;
        for (const auto* r : group) {
            if (r->spec.resolved)
                resolved = r;
            if (r->status != RowStatus::Ok || !(r->stats.median > 0))
                continue; // measured and parity PASS only
            candidates += !r->spec.is_reference();
            if (!fastest || r->stats.median < fastest->stats.median)
                fastest = r;
        }
        // A default run (the resolved cell and the reference) has nothing to compare.
        if (!resolved || !resolved->measured() || !(resolved->stats.median > 0) || !fastest ||
            candidates < 2)
            continue;
        DispatchFinding f;
        f.op = resolved->spec.op;
        f.size = resolved->spec.size;
        f.device = resolved->spec.device;
        f.resolved = cell_name(*resolved);
        f.resolved_backend = resolved->spec.backend;
        f.resolved_index = resolved->spec.index;
        f.resolved_median_s = resolved->stats.median;
        f.fastest = cell_name(*fastest);
        f.fastest_backend = fastest->spec.backend;
        f.fastest_index = fastest->spec.index;
        f.fastest_median_s = fastest->stats.median;
        f.speedup = resolved->stats.median / fastest->stats.median;
        // The resolved cell's code, at its best measurement: a cell that runs the same code
        // on this device (RowSpec::runs_as: OpenCL's default runs row8 on PoCL) is the same
        // kernel measured twice, so another cell is judged against the faster of the two,
        // and a gap between the two themselves is the run's noise.
        const ProfileRow* twin = nullptr;
        if (!resolved->spec.runs_as.empty())
            for (const auto* r : group)
                if (r != resolved && cell_name(*r) == resolved->spec.runs_as &&
                    r->status == RowStatus::Ok && r->stats.median > 0)
                    twin = r;
        f.same_code = twin && fastest == twin;
        const ProfileRow* code =
            twin && !f.same_code && twin->stats.median < resolved->stats.median ? twin : resolved;
        // A repeated run (profile --repeat) judges the runs, as compare does: the noise is
        // the spread between the runs, the test Welch's t on their log medians.
        const auto runs = compare_runs(code->run_medians(), fastest->run_medians());
        const double noise =
            runs ? runs->noise : std::max(code->stats.rel_noise, fastest->stats.rel_noise);
        f.threshold = std::max(options.min_effect, options.noise_factor * noise);
        if (fastest != resolved)
            f.p_value = runs ? runs->p_value : mann_whitney_p(code->samples, fastest->samples);
        if (fastest == resolved || f.same_code) {
            f.verdict = "ok";
        } else {
            const bool practical = code->stats.median / fastest->stats.median - 1 > f.threshold;
            const bool enough = runs || (code->samples.size() >= options.min_samples &&
                                         fastest->samples.size() >= options.min_samples);
            if (!practical)
                f.verdict = "ok";
            else if (enough && f.p_value < options.alpha)
                f.verdict = "regret";
            else
                f.verdict = "uncertain";
        }
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace switchyard
