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

std::string times(double speedup) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", speedup);
    return ratio;
}

std::string p_text(double p) {
    return std::to_string(p).substr(0, 5);
}

std::string threads_text(std::int64_t n) {
    return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

// A candidate against the resolved cell's code: the threshold from the two rows' noise (a
// repeated run's from the spread between its runs, the test Welch's t on their log medians,
// as compare does; else the samples' U test) and the verdict.
struct Judged {
    DispatchVerdict verdict = DispatchVerdict::Ok;
    double p_value = 1, threshold = 0;
};

Judged judge(const ProfileRow& code, const ProfileRow& other, const DispatchOptions& options) {
    Judged j;
    const auto runs = compare_runs(code.run_medians(), other.run_medians());
    const double noise = runs ? runs->noise : std::max(code.stats.rel_noise, other.stats.rel_noise);
    j.threshold = std::max(options.min_effect, options.noise_factor * noise);
    if (&code == &other)
        return j;
    j.p_value = runs ? runs->p_value : mann_whitney_p(code.samples, other.samples);
    const bool practical = code.stats.median / other.stats.median - 1 > j.threshold;
    const bool enough = runs || (code.samples.size() >= options.min_samples &&
                                 other.samples.size() >= options.min_samples);
    if (practical)
        j.verdict = enough && j.p_value < options.alpha ? DispatchVerdict::Regret
                                                        : DispatchVerdict::Uncertain;
    return j;
}

// "; at 1 thread the pick is the fastest" and the like, for a peer finding "at" something.
std::string peer_clause(const DispatchFinding& f, const SameThreadsFinding& s,
                        const std::string& at_what) {
    const std::string at = "; at " + at_what;
    if (s.fastest == f.resolved)
        return at + " the pick is the fastest";
    if (s.verdict == DispatchVerdict::Regret)
        return at + ", " + s.fastest + " (" + s.fastest_backend + ") is " + times(s.speedup) +
               " faster";
    if (s.verdict == DispatchVerdict::Uncertain)
        return at + ", " + s.fastest + " looks " + times(s.speedup) +
               " faster, but the samples cannot tell (p = " + p_text(s.p_value) + ")";
    return at + ", the fastest, " + s.fastest + ", is within " +
           std::to_string(int(s.threshold * 100 + 0.5)) + " % (" + times(s.speedup) + ")";
}

// The clauses of the peer findings (empty without any).
std::string peer_clauses(const DispatchFinding& f) {
    std::string out;
    if (f.same_threads)
        out += peer_clause(f, *f.same_threads, threads_text(f.resolved_threads));
    if (f.same_tolerance)
        out += "; it passed a looser tolerance than the pick (its own)" +
               peer_clause(f, *f.same_tolerance, "the pick's tolerance");
    return out;
}

// a's tolerance is looser than b's: a larger atol or rtol.
bool looser(const Tolerance& a, const Tolerance& b) {
    return a.atol > b.atol * (1 + 1e-9) || a.rtol > b.rtol * (1 + 1e-9);
}

nlohmann::json peer_json(const SameThreadsFinding& s) {
    return {{"verdict", to_string(s.verdict)},
            {"fastest", s.fastest},
            {"fastest_backend", s.fastest_backend},
            {"fastest_index", s.fastest_index},
            {"fastest_median_s", s.fastest_median_s},
            {"speedup", s.speedup},
            {"p_value", s.p_value},
            {"threshold", s.threshold}};
}

// The "verdict" of a finding or a peer: regret, ok or uncertain.
DispatchVerdict read_verdict(const jsonread::Value& v) {
    const auto verdict = v.str("verdict");
    const auto parsed = dispatch_verdict_from_string(verdict);
    if (!parsed)
        v.at("verdict").fail("expected regret, ok or uncertain, got '" + verdict + "'");
    return *parsed;
}

SameThreadsFinding peer_from_json(const jsonread::Value& st) {
    st.expect(jsonread::Kind::Object);
    SameThreadsFinding s;
    s.verdict = read_verdict(st);
    s.fastest = st.str("fastest");
    s.fastest_backend = st.str("fastest_backend", std::string());
    s.fastest_index = st.integer("fastest_index", -1, -1);
    s.fastest_median_s = st.num("fastest_median_s", 0.0);
    s.speedup = st.num("speedup", 1.0);
    s.p_value = st.num("p_value", 1.0);
    s.threshold = st.num("threshold", 0.0);
    return s;
}

} // namespace

namespace {
constexpr std::pair<DispatchVerdict, std::string_view> kVerdicts[] = {
    {DispatchVerdict::Ok, "ok"},
    {DispatchVerdict::Regret, "regret"},
    {DispatchVerdict::Uncertain, "uncertain"},
};
} // namespace

std::string_view to_string(DispatchVerdict verdict) noexcept {
    for (const auto& [v, id] : kVerdicts)
        if (v == verdict)
            return id;
    return "ok";
}

std::optional<DispatchVerdict> dispatch_verdict_from_string(std::string_view text) noexcept {
    for (const auto& [v, id] : kVerdicts)
        if (id == text)
            return v;
    return std::nullopt;
}

std::string DispatchFinding::message() const {
    const std::string ratio = times(speedup);
    const std::string where = op + " " + size + " on " + device;
    const bool threads_differ = same_threads.has_value();
    const std::string picks =
        where + ": dispatch picks " + resolved +
        (threads_differ ? " (" + threads_text(resolved_threads) + ")" : std::string());
    const std::string other =
        fastest + " (" + fastest_backend +
        (threads_differ ? ", " + threads_text(fastest_threads) : std::string()) + ")";
    if (verdict == DispatchVerdict::Regret)
        return picks + "; " + other + " is " + ratio + " faster here" + peer_clauses(*this);
    if (verdict == DispatchVerdict::Uncertain)
        return picks + "; " + other + " looks " + ratio +
               " faster, but the samples cannot tell (p = " + p_text(p_value) + ")" +
               peer_clauses(*this);
    if (fastest == resolved)
        return where + ": dispatch picks " + resolved + ", the fastest cell here";
    if (same_code)
        return where + ": dispatch picks " + resolved + ", which runs " + fastest +
               "'s code on this device; the " + ratio +
               " between the two is this run's noise (the same kernel measured twice)";
    return picks + "; the fastest, " + fastest +
           (threads_differ ? " (" + threads_text(fastest_threads) + ")" : std::string()) +
           ", is within " + std::to_string(int(threshold * 100 + 0.5)) + " % (" + ratio + ")" +
           peer_clauses(*this);
}

nlohmann::json DispatchFinding::to_json() const {
    nlohmann::json j = {{"verdict", to_string(verdict)},
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
    if (resolved_threads > 0 || fastest_threads > 0)
        j["threads"] = {{"resolved", resolved_threads}, {"fastest", fastest_threads}};
    if (same_threads)
        j["same_threads"] = peer_json(*same_threads);
    if (same_tolerance)
        j["same_tolerance"] = peer_json(*same_tolerance);
    return j;
}

DispatchFinding DispatchFinding::from_json(const nlohmann::json& j) {
    const jsonread::Value v(j, "dispatch");
    v.expect(jsonread::Kind::Object);
    DispatchFinding f;
    f.verdict = read_verdict(v);
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
    if (const auto t = v.find("threads")) {
        t->expect(jsonread::Kind::Object);
        f.resolved_threads = t->integer("resolved", 0, 0, RowSpec::kMaxThreads);
        f.fastest_threads = t->integer("fastest", 0, 0, RowSpec::kMaxThreads);
    }
    if (const auto st = v.find("same_threads"))
        f.same_threads = peer_from_json(*st);
    if (const auto st = v.find("same_tolerance"))
        f.same_tolerance = peer_from_json(*st);
    return f;
}

CellJudgement judge_cells(const ProfileRow& pick, const ProfileRow& other,
                          const DispatchOptions& options) {
    const auto j = judge(pick, other, options);
    const double speedup = other.stats.median > 0 ? pick.stats.median / other.stats.median : 1.0;
    return {j.verdict, speedup, j.p_value, j.threshold};
}

bool within_tolerance_of(const ProfileRow& row, const ProfileRow& pick) {
    return !row.parity.checked || !pick.parity.checked ||
           !looser(row.parity.tolerance, pick.parity.tolerance);
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
        const auto judged = judge(*code, *fastest, options);
        f.threshold = judged.threshold;
        f.p_value = judged.p_value;
        f.verdict = f.same_code ? DispatchVerdict::Ok : judged.verdict;
        // The fastest of the rows `like` the resolved one, judged as the fastest was.
        const auto peer_of = [&](auto&& like) -> std::optional<SameThreadsFinding> {
            const ProfileRow* peer = nullptr;
            for (const auto* r : group)
                if (like(*r) && r->status == RowStatus::Ok && r->stats.median > 0 &&
                    (!peer || r->stats.median < peer->stats.median))
                    peer = r;
            if (!peer)
                return std::nullopt;
            SameThreadsFinding s;
            s.fastest = cell_name(*peer);
            s.fastest_backend = peer->spec.backend;
            s.fastest_index = peer->spec.index;
            s.fastest_median_s = peer->stats.median;
            s.speedup = resolved->stats.median / peer->stats.median;
            const auto j = judge(*code, *peer, options);
            s.threshold = j.threshold;
            s.p_value = j.p_value;
            s.verdict = peer == twin ? DispatchVerdict::Ok : j.verdict;
            return s;
        };
        // More threads, not a faster chain? The fastest cell on the resolved one's threads.
        f.resolved_threads = resolved->spec.threads;
        f.fastest_threads = fastest->spec.threads;
        if (f.resolved_threads > 0 && f.fastest_threads > 0 &&
            f.resolved_threads != f.fastest_threads)
            f.same_threads =
                peer_of([&](const ProfileRow& r) { return r.spec.threads == f.resolved_threads; });
        // A looser numeric contract, not a faster kernel? The fastest checked at the resolved
        // cell's tolerance or a tighter one.
        if (fastest->parity.checked && resolved->parity.checked &&
            looser(fastest->parity.tolerance, resolved->parity.tolerance))
            f.same_tolerance = peer_of([&](const ProfileRow& r) {
                return r.parity.checked && !looser(r.parity.tolerance, resolved->parity.tolerance);
            });
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace switchyard
