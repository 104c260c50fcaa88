// SPDX-License-Identifier: MIT
#include <switchyard/tuning/tune.h>

#include <switchyard/profiling/ops.h>
#include <switchyard/registry/fallback.h>

#include "util/textutil.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace switchyard {

namespace {

std::string cell_of(const RowSpec& r) {
    return r.arch + "/" + r.variant;
}

int runs_of(const ProfileRow& r) {
    return std::max<int>(1, int(r.runs.size()));
}

bool usable(const ProfileRow& r) {
    return r.status == RowStatus::Ok && r.stats.median > 0;
}

// "task 0 (vm) cpu", "cpu" on one machine.
std::string where(const SizeObservation& o) {
    return (o.node.empty() ? "" : o.node + " ") + o.pick->spec.device;
}

// One observation as the rule reads it: the row the pick's code measured best (the pick, or
// the cell it runs as on this device where that measured faster: RowSpec::runs_as) and every
// other cell measured beside it at the pick's tolerance.
struct Seen {
    const ProfileRow* code = nullptr;
    std::map<std::string, const ProfileRow*> cells;
    double fastest = 0; // the smallest median of them all, the pick's included
};
Seen seen_at(const SizeObservation& o) {
    const ProfileRow& pick = *o.pick;
    Seen s;
    s.code = &pick;
    s.fastest = pick.stats.median;
    for (const auto& r : o.report->rows) {
        if (&r == &pick || r.spec.op != pick.spec.op || r.spec.size != pick.spec.size ||
            r.spec.device != pick.spec.device || !usable(r) || !within_tolerance_of(r, pick))
            continue;
        s.fastest = std::min(s.fastest, r.stats.median);
        const std::string cell = cell_of(r.spec);
        if (!pick.spec.runs_as.empty() && cell == pick.spec.runs_as) {
            if (r.stats.median < s.code->stats.median)
                s.code = &r; // the same code: judged at its best, never a candidate
            continue;
        }
        s.cells.emplace(cell, &r);
    }
    return s;
}

bool beats(const ProfileRow& slower, const ProfileRow& faster) {
    return judge_cells(slower, faster).verdict == DispatchVerdict::Regret;
}

} // namespace

bool tie_order(std::string_view device_kind, std::string_view variant, const std::string& a,
               const std::string& b) {
    std::vector<std::string> ladder;
    try {
        ladder = arch_ladder(device_kind);
    } catch (const std::exception&) {
        // a kind without a ladder: names alone
    }
    const auto rank = [&](const std::string& cell) {
        for (std::size_t i = 0; i < ladder.size(); ++i)
            if (cell == ladder[i] + "/" + std::string(variant))
                return i;
        return cell == "generic/reference" ? ladder.size() : ladder.size() + 1;
    };
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
}

SizeChoice choose_at(const std::vector<SizeObservation>& observations) {
    SizeChoice c;
    if (observations.empty() || !observations.front().pick || !observations.front().report) {
        c.why = "nothing was measured";
        return c;
    }
    const ProfileRow& first = *observations.front().pick;
    c.pick = cell_of(first.spec);
    c.overrides = {c.pick, first.spec.code};
    std::vector<Seen> seen;
    for (const auto& o : observations) {
        if (!o.pick || !o.report) {
            c.why = "an observation has no row";
            return c;
        }
        if (cell_of(o.pick->spec) != c.pick) {
            c.why = "the chain picks " + c.pick + " on " + where(observations.front()) + " but " +
                    cell_of(o.pick->spec) + " on " + where(o);
            c.notes.push_back(c.why + "; the chain's pick stays");
            return c;
        }
        if (!(o.pick->spec.code == first.spec.code)) {
            c.why = "the pick runs other code on " + where(o) + " (" + o.pick->spec.code.text() +
                    ") than on " + where(observations.front()) + " (" + first.spec.code.text() +
                    ")";
            c.notes.push_back(c.why + "; the chain's pick stays");
            return c;
        }
        seen.push_back(seen_at(o));
    }

    // The candidates: measured everywhere, with one code, beating the pick everywhere. A cell
    // that beats it on some observations only is said, with where it does not.
    std::set<std::string> cells;
    for (const auto& s : seen)
        for (const auto& [cell, row] : s.cells)
            cells.insert(cell);
    std::vector<std::string> candidates;
    for (const auto& cell : cells) {
        std::vector<std::string> beat, missing, not_beat;
        const ProfileRow* one = nullptr;
        bool one_code = true;
        for (std::size_t i = 0; i < seen.size(); ++i) {
            const auto it = seen[i].cells.find(cell);
            if (it == seen[i].cells.end()) {
                missing.push_back(where(observations[i]));
                continue;
            }
            if (!one)
                one = it->second;
            else if (!(it->second->spec.code == one->spec.code))
                one_code = false;
            (beats(*seen[i].code, *it->second) ? beat : not_beat).push_back(where(observations[i]));
        }
        if (!one_code) {
            if (!beat.empty())
                c.notes.push_back(cell + " runs other code on some observations: not a candidate");
            continue;
        }
        if (beat.size() == seen.size()) {
            candidates.push_back(cell);
        } else if (!beat.empty()) {
            std::string note = cell + " beats " + c.pick + " on " + text::join(beat);
            if (!not_beat.empty())
                note += "; not on " + text::join(not_beat);
            if (!missing.empty())
                note += "; not measured on " + text::join(missing);
            c.notes.push_back(note);
        }
    }
    if (candidates.empty()) {
        c.why = seen.size() == 1 ? "no cell beats the pick beyond the noise"
                                 : "no cell beats the pick beyond the noise on every observation";
        return c;
    }

    const auto worst = [&](const std::string& cell) {
        double w = 1;
        for (const auto& s : seen)
            w = std::max(w, s.cells.at(cell)->stats.median / s.fastest);
        return w;
    };
    const std::string& kind = first.spec.device_kind;
    const std::string& variant = first.spec.variant;
    std::string best = candidates.front();
    double best_worst = worst(best);
    for (const auto& cell : candidates)
        if (const double w = worst(cell);
            w < best_worst || (w == best_worst && tie_order(kind, variant, cell, best))) {
            best = cell;
            best_worst = w;
        }
    // The tie: the candidates that the best does not beat on every observation, nor they it
    // (one observation's burst of noise does not break a tie; a gap every node measured does).
    const auto beats_everywhere = [&](const std::string& slower, const std::string& faster) {
        for (const auto& s : seen)
            if (!beats(*s.cells.at(slower), *s.cells.at(faster)))
                return false;
        return true;
    };
    std::vector<std::string> tie{best};
    for (const auto& cell : candidates)
        if (cell != best && !beats_everywhere(cell, best) && !beats_everywhere(best, cell))
            tie.push_back(cell);
    std::sort(tie.begin(), tie.end(), [&](const std::string& a, const std::string& b) {
        return tie_order(kind, variant, a, b);
    });
    c.chosen = tie.front();
    c.tied.assign(tie.begin() + 1, tie.end());
    c.chosen_cell = {c.chosen, seen.front().cells.at(c.chosen)->spec.code};
    c.worst_regret = worst(c.chosen);
    // The evidence: where the chosen cell beat the pick least.
    for (std::size_t i = 0; i < seen.size(); ++i) {
        const ProfileRow& row = *seen[i].cells.at(c.chosen);
        const ProfileRow& code = *seen[i].code;
        const auto j = judge_cells(code, row);
        if (i == 0 || j.speedup < c.evidence.speedup) {
            c.evidence = {first.spec.size,
                          row.stats.median,
                          code.stats.median,
                          j.speedup,
                          j.p_value,
                          j.threshold,
                          std::min(runs_of(code), runs_of(row))};
            c.weakest = i;
        }
    }
    return c;
}

TuneChoices tune_points(const std::vector<TunePoint>& points) {
    TuneChoices out;
    for (const auto& p : points) {
        auto choice = choose_at(p.observations);
        const std::string at = p.op + " " + p.size + " on " + p.device_kind + ": ";
        for (const auto& n : choice.notes)
            out.notes.push_back(at + n);
        if (!choice.tied.empty())
            out.notes.push_back(
                at + choice.chosen + " and " + text::join(choice.tied) +
                (p.observations.size() > 1 ? " tie (no gap between them held on every node)"
                                           : " tie (within noise of each other)") +
                "; " + choice.chosen + " is kept (a tie goes by the chain's order, then the name)");
        out.choices.emplace_back(p, std::move(choice));
    }

    // (op, device kind, variant) -> the choices, by work.
    std::map<std::tuple<std::string, std::string, std::string>,
             std::vector<const std::pair<TunePoint, SizeChoice>*>>
        groups;
    for (const auto& pc : out.choices)
        groups[{pc.first.op, pc.first.device_kind, pc.first.variant}].push_back(&pc);
    for (auto& [key, ordered] : groups) {
        std::stable_sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
            return a->first.work < b->first.work;
        });
        for (std::size_t i = 0; i < ordered.size();) {
            const SizeChoice& head = ordered[i]->second;
            std::size_t j = i + 1;
            if (head.chosen.empty()) {
                i = j;
                continue;
            }
            while (j < ordered.size() && ordered[j]->second.chosen == head.chosen &&
                   ordered[j]->second.chosen_cell.code == head.chosen_cell.code &&
                   ordered[j]->second.pick == head.pick &&
                   ordered[j]->second.overrides.code == head.overrides.code)
                ++j;
            TuningEntry e;
            e.op = std::get<0>(key);
            e.device = std::get<1>(key);
            e.variant = std::get<2>(key);
            e.chosen = head.chosen_cell;
            e.overrides = head.overrides;
            e.min_work = ordered[i]->first.work;
            e.max_work = ordered[j - 1]->first.work;
            // The entry names the report behind its weakest promise.
            double weakest = 0;
            for (std::size_t k = i; k < j; ++k) {
                const auto& [point, choice] = *ordered[k];
                e.sizes.push_back(point.size);
                e.evidence.push_back(choice.evidence);
                if (k == i || choice.evidence.speedup < weakest) {
                    weakest = choice.evidence.speedup;
                    const auto& o = point.observations.at(choice.weakest);
                    e.date = o.report->context.date;
                    e.report = o.path;
                }
            }
            out.entries.push_back(std::move(e));
            i = j;
        }
    }
    return out;
}

TuneResult tune_report(const Report& report, const std::string& report_path) {
    TuneResult out;
    Tuning& t = out.tuning;
    t.machine_id = report.context.fingerprint.machine_id;
    t.machine = report.context.fingerprint.machine;
    t.core_version = report.context.switchyard.version;
    t.created = report.context.date;

    // One point per (op, device kind, variant, size), one observation per device of the kind.
    std::vector<TunePoint> points;
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> at;
    for (const auto& f : report.dispatch) {
        const ProfileRow* pick = nullptr;
        for (const auto& r : report.rows)
            if (r.spec.index == f.resolved_index)
                pick = &r;
        if (!pick || !usable(*pick))
            continue;
        const auto& spec = pick->spec;
        const auto key = std::make_tuple(spec.op, spec.device_kind, spec.variant, spec.size);
        auto [it, fresh] = at.emplace(key, points.size());
        if (fresh)
            points.push_back(
                {spec.op, spec.device_kind, spec.variant, spec.size, size_work(spec.dims), {}});
        points[it->second].observations.push_back({"", report_path, &report, pick});
    }
    if (report.dispatch.empty())
        out.notes.push_back("the report has no dispatch findings: tune needs a run of every "
                            "variant (profile --all-variants), best repeated (--repeat 3)");

    auto chosen = tune_points(points);
    t.entries = std::move(chosen.entries);
    out.notes.insert(out.notes.end(), chosen.notes.begin(), chosen.notes.end());
    for (const auto& f : report.dispatch) {
        TuneDecision d{f.op, f.device, f.size, f.resolved, f.resolved, f.verdict, f.message()};
        for (const auto& [point, choice] : chosen.choices)
            if (point.op == f.op && point.size == f.size && !choice.chosen.empty())
                for (const auto& o : point.observations)
                    if (o.pick->spec.device == f.device)
                        d.winner = choice.chosen;
        out.decisions.push_back(std::move(d));
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
