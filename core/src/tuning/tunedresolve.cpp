// SPDX-License-Identifier: MIT
#include <switchyard/tuning/tunedresolve.h>

#include <cstdio>

namespace switchyard {

namespace {

std::string times(double speedup) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", speedup);
    return text;
}

std::string work_range(const TuningEntry& e) {
    return e.sizes.empty()       ? std::string("its sizes")
           : e.sizes.size() == 1 ? e.sizes.front()
                                 : e.sizes.front() + " to " + e.sizes.back();
}

KernelRegistry::CellPtr cell_named(BackendRegistry& registry, const TuningEntry& e,
                                   const std::string& cell) {
    const auto slash = cell.find('/');
    if (slash == std::string::npos)
        return nullptr;
    // Declared and available, without loading a plugin (a placeholder's availability is its
    // manifest's): deciding runs no plugin code.
    auto found = registry.kernel_registry().lookup(
        kernel_key(e.op, e.device, cell.substr(0, slash), cell.substr(slash + 1)));
    return found && found->is_available() ? found : nullptr;
}

// Why `e` does not apply to `q` ("" when it does); `chosen` is set when it does.
std::string why_not(BackendRegistry& registry, const Tuning& t, const TuningEntry& e,
                    const TuningQuery& q, KernelRegistry::CellPtr& chosen) {
    if (!q.work)
        return "tuned for " + work_range(e) + "; give a size to use it";
    if (*q.work < e.min_work || *q.work > e.max_work)
        return "tuned for " + work_range(e) + ", not " + q.size;
    if (const auto then = machine_id_for(t.machine, q.device),
        now = machine_id_for(q.machine, q.device);
        then != now)
        return "tuned on another machine (" + then + " for " + q.device + "; this one is " + now +
               ")";
    if (e.overrides.cell != q.pick)
        return "it overrides " + e.overrides.cell + ", but the chain picks " +
               (q.pick.empty() ? std::string("nothing") : q.pick) + " now (tune again)";
    chosen = cell_named(registry, e, e.chosen.cell);
    if (!chosen)
        return e.chosen.cell + " is not available here";
    if (const auto d = e.chosen.code.difference(code_identity(registry, *chosen)); !d.empty())
        return "the chosen cell's code changed: " + d + " (tune again)";
    if (const auto pick = cell_named(registry, e, e.overrides.cell)) {
        if (const auto d = e.overrides.code.difference(code_identity(registry, *pick)); !d.empty())
            return "the overridden cell's code changed: " + d + " (tune again)";
    }
    return {};
}

} // namespace

std::string TuningDecision::Use::explanation() const {
    std::string out = "tuned -> " + entry.chosen.cell + " (" + times(entry.speedup()) +
                      " the chain's " + entry.overrides.cell;
    if (!entry.date.empty())
        out += ", " + entry.date.substr(0, 10);
    if (!entry.report.empty())
        out += ", report " + entry.report;
    return out + "); the chain would pick " + entry.overrides.cell;
}

TuningDecision decide_tuning(BackendRegistry& registry, const TuningSet& tunings,
                             const TuningQuery& query) {
    TuningDecision d;
    for (const auto& problem : tunings.problems)
        d.ignored.push_back(problem);
    for (const auto& t : tunings.tunings) {
        for (const auto& warning : t.read_warnings)
            d.ignored.push_back(t.source + ": " + warning);
        for (const auto& e : t.entries) {
            if (e.op != query.op || e.device != query.device || e.variant != query.variant)
                continue;
            if (d.use) // an earlier entry applies already
                continue;
            KernelRegistry::CellPtr chosen;
            if (auto why = why_not(registry, t, e, query, chosen); !why.empty()) {
                d.ignored.push_back(t.source + ": " + e.label() + ": " + why);
                continue;
            }
            d.use = TuningDecision::Use{e, t.source, std::move(chosen)};
        }
    }
    return d;
}

} // namespace switchyard
