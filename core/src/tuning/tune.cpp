// SPDX-License-Identifier: MIT
#include <switchyard/tuning/tune.h>

#include <switchyard/profiling/ops.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>

namespace switchyard {

namespace {

std::string cell_of(const RowSpec& r) {
    return r.arch + "/" + r.variant;
}

// One measured size of an (op, device kind): the winner and the evidence for it.
struct Point {
    double work = 0;
    std::string size;
    std::string pick, winner;
    TunedCell chosen, overrides; // set where the winner is not the pick
    TuningEvidence evidence;
    bool agreed = true;                   // every device of the kind had the same winner
    std::vector<const ProfileRow*> picks; // the pick's row on each device of the kind
};

const ProfileRow* row_at(const Report& report, std::int64_t index) {
    for (const auto& r : report.rows)
        if (r.spec.index == index)
            return &r;
    return nullptr;
}

int runs_of(const ProfileRow& r) {
    return std::max<int>(1, int(r.runs.size()));
}

bool usable(const ProfileRow& r) {
    return r.status == RowStatus::Ok && r.stats.median > 0;
}

// The measured rows beside `pick` (its op, size and device) that passed parity at its
// tolerance: `cell`'s, and the fastest of all.
struct Beside {
    const ProfileRow* cell = nullptr;
    const ProfileRow* fastest = nullptr;
};
Beside beside(const Report& report, const ProfileRow& pick, const std::string& cell) {
    Beside b;
    for (const auto& r : report.rows) {
        if (r.spec.op != pick.spec.op || r.spec.size != pick.spec.size ||
            r.spec.device != pick.spec.device || !usable(r) || !within_tolerance_of(r, pick))
            continue;
        if (cell_of(r.spec) == cell)
            b.cell = &r;
        if (!b.fastest || r.stats.median < b.fastest->stats.median)
            b.fastest = &r;
    }
    return b;
}

// The winner of one finding: the fastest at the pick's tolerance, when it beats the pick by
// the dispatch-regret rule.
struct Winner {
    std::string cell;
    std::int64_t index = -1;
    double median_s = 0, speedup = 1, p_value = 1, threshold = 0;
};
std::optional<Winner> winner_of(const DispatchFinding& f) {
    if (f.same_code)
        return std::nullopt;
    if (f.same_tolerance) { // the fastest passed only a looser tolerance than the pick's
        const auto& s = *f.same_tolerance;
        if (s.verdict != DispatchVerdict::Regret || s.fastest == f.resolved)
            return std::nullopt;
        return Winner{s.fastest, s.fastest_index, s.fastest_median_s,
                      s.speedup, s.p_value,       s.threshold};
    }
    if (f.verdict != DispatchVerdict::Regret)
        return std::nullopt;
    return Winner{f.fastest, f.fastest_index, f.fastest_median_s,
                  f.speedup, f.p_value,       f.threshold};
}

// Whether `cell` holds at `p` too, where another cell measured fastest: on every device of the
// kind it beats the pick by the dispatch-regret rule, and the fastest does not beat it by the
// same rule (the two are within noise of each other). A range then keeps one cell rather than
// flipping between two tied ones at each size. The evidence: `cell` against the pick.
std::optional<TuningEvidence> holds_at(const Report& report, const Point& p,
                                       const std::string& cell) {
    std::optional<TuningEvidence> out;
    for (const ProfileRow* pick : p.picks) {
        const auto b = beside(report, *pick, cell);
        if (!b.cell || !b.fastest || b.cell == pick)
            return std::nullopt;
        const auto against_pick = judge_cells(*pick, *b.cell);
        if (against_pick.verdict != DispatchVerdict::Regret ||
            judge_cells(*b.cell, *b.fastest).verdict == DispatchVerdict::Regret)
            return std::nullopt;
        if (!out)
            out = TuningEvidence{p.size,
                                 b.cell->stats.median,
                                 pick->stats.median,
                                 against_pick.speedup,
                                 against_pick.p_value,
                                 against_pick.threshold,
                                 std::min(runs_of(*pick), runs_of(*b.cell))};
    }
    return out;
}

} // namespace

TuneResult tune_report(const Report& report, const std::string& report_path) {
    TuneResult out;
    Tuning& t = out.tuning;
    t.machine_id = report.context.fingerprint.machine_id;
    t.machine = report.context.fingerprint.machine;
    t.core_version = report.context.switchyard.version;
    t.created = report.context.date;
    const std::string variant = report.context.settings.variant;

    // (op, device kind) -> size -> point
    std::map<std::pair<std::string, std::string>, std::map<std::string, Point>> points;
    for (const auto& f : report.dispatch) {
        const ProfileRow* pick = row_at(report, f.resolved_index);
        if (!pick)
            continue;
        const auto& spec = pick->spec;
        TuneDecision d{f.op, f.device, f.size, f.resolved, f.resolved, f.verdict, f.message()};
        const auto won = winner_of(f);
        const ProfileRow* fastest = won ? row_at(report, won->index) : nullptr;
        if (won && fastest)
            d.winner = won->cell;
        out.decisions.push_back(d);

        Point p;
        p.work = size_work(spec.dims);
        p.size = spec.size;
        p.pick = f.resolved;
        p.winner = d.winner;
        p.picks.push_back(pick);
        if (won && fastest) {
            p.chosen = {won->cell, fastest->spec.code};
            p.overrides = {f.resolved, spec.code};
            p.evidence = {spec.size,
                          won->median_s,
                          f.resolved_median_s,
                          won->speedup,
                          won->p_value,
                          won->threshold,
                          std::min(runs_of(*pick), runs_of(*fastest))};
        }
        auto& by_size = points[{spec.op, spec.device_kind}];
        auto it = by_size.find(spec.size);
        if (it == by_size.end()) {
            by_size.emplace(spec.size, std::move(p));
            continue;
        }
        it->second.picks.push_back(pick);
        if (it->second.winner != p.winner) {
            // Two devices of one kind disagree: that size keeps the chain's pick.
            it->second.agreed = false;
            out.notes.push_back(spec.op + " " + spec.size + " on " + spec.device_kind +
                                ": the devices disagree (" + it->second.winner + " against " +
                                p.winner + "); the chain's pick stays");
        }
    }
    if (report.dispatch.empty())
        out.notes.push_back("the report has no dispatch findings: tune needs a run of every "
                            "variant (profile --all-variants), best repeated (--repeat 3)");

    for (auto& [key, by_size] : points) {
        std::vector<Point*> ordered;
        for (auto& [size, p] : by_size)
            ordered.push_back(&p);
        std::sort(ordered.begin(), ordered.end(),
                  [](const Point* a, const Point* b) { return a->work < b->work; });
        // Runs of consecutive sizes where one cell beats the pick; each, an entry.
        for (std::size_t i = 0; i < ordered.size();) {
            const Point& first = *ordered[i];
            std::size_t j = i + 1;
            if (!first.agreed || first.winner == first.pick) {
                i = j;
                continue;
            }
            std::vector<TuningEvidence> evidence{first.evidence};
            while (j < ordered.size() && ordered[j]->agreed && ordered[j]->pick == first.pick) {
                const Point& next = *ordered[j];
                if (next.winner == first.winner) {
                    evidence.push_back(next.evidence);
                } else if (auto held = holds_at(report, next, first.winner)) {
                    evidence.push_back(*held);
                    out.notes.push_back(key.first + " " + next.size + " on " + key.second + ": " +
                                        next.winner +
                                        " measured fastest, within noise "
                                        "of " +
                                        first.winner + ", which the range keeps");
                } else {
                    break;
                }
                ++j;
            }
            TuningEntry e;
            e.op = key.first;
            e.device = key.second;
            e.variant = variant;
            e.chosen = first.chosen;
            e.overrides = first.overrides;
            e.min_work = ordered[i]->work;
            e.max_work = ordered[j - 1]->work;
            for (std::size_t k = i; k < j; ++k)
                e.sizes.push_back(ordered[k]->size);
            e.evidence = std::move(evidence);
            e.date = report.context.date;
            e.report = report_path;
            t.entries.push_back(std::move(e));
            i = j;
        }
    }
    return out;
}

TuneWrite tune_and_write(const Report& report, std::string file, std::string report_path,
                         bool dry_run) {
    TuneWrite w;
    w.file = file.empty() ? default_tuning_file(report.context.fingerprint.machine_id) : file;
    if (!dry_run) { // the user's tuning folder may not exist yet
        std::error_code ec;
        if (const auto folder = std::filesystem::path(w.file).parent_path(); !folder.empty())
            std::filesystem::create_directories(folder, ec);
    }
    const bool save_report = report_path.empty();
    w.report = save_report ? report_beside(w.file, report.context.date) : report_path;
    if (save_report && !dry_run)
        report.save(w.report);
    w.result = tune_report(report, w.report);
    w.fresh = w.result.tuning.entries.size();
    w.written = merge_with_file(w.result.tuning, w.file, w.result.notes);
    if (!dry_run)
        w.written.save(w.file);
    return w;
}

std::string TuneWrite::summary(bool dry_run) const {
    char speedup[32];
    std::string out = std::to_string(fresh) + (fresh == 1 ? " tuned entry" : " tuned entries") +
                      (dry_run ? " (not written: dry run)" : " written to " + file) + "\n";
    for (std::size_t i = 0; i < fresh && i < written.entries.size(); ++i) {
        const auto& e = written.entries[i];
        std::snprintf(speedup, sizeof speedup, "%.2fx", e.speedup());
        out += "  " + e.label() + ": " + e.chosen.cell + " instead of " + e.overrides.cell + " (" +
               speedup + " at least, " + e.chosen.code.text() + ")\n";
    }
    for (const auto& n : result.notes)
        out += "note: " + n + "\n";
    return out;
}

} // namespace switchyard
