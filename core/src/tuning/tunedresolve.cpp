// SPDX-License-Identifier: MIT
#include <switchyard/tuning/tunedresolve.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/registry/fallback.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace switchyard {

namespace {

std::string times(double speedup) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", speedup);
    return text;
}

KernelRegistry::CellPtr cell_named(BackendRegistry& registry, const TuningEntry& e,
                                   const TunedCell& cell) {
    if (cell.arch().empty())
        return nullptr;
    // Declared and available, without loading a plugin (a placeholder's availability is its
    // manifest's): deciding runs no plugin code.
    auto found =
        registry.kernel_registry().lookup(kernel_key(e.op, e.device, cell.arch(), cell.variant()));
    return found && found->is_available() ? found : nullptr;
}

// Why `e` does not apply to `q` ("" when it does); `chosen` is set when it does.
std::string why_not(BackendRegistry& registry, const Tuning& t, const TuningEntry& e,
                    const TuningQuery& q, KernelRegistry::CellPtr& chosen) {
    if (!q.work)
        return "tuned for " + e.sizes_text() + "; give a size to use it";
    if (*q.work < e.min_work || *q.work > e.max_work)
        return "tuned for " + e.sizes_text() + ", not " + q.size;
    if (const auto then = machine_id_for(t.machine, q.device),
        now = machine_id_for(q.machine, q.device);
        then != now)
        return "tuned on another machine (" + then + " for " + q.device + "; this one is " + now +
               ")";
    if (e.overrides.cell != q.pick)
        return "it overrides " + e.overrides.cell + ", but the chain picks " +
               (q.pick.empty() ? std::string("nothing") : q.pick) + " now (tune again)";
    chosen = cell_named(registry, e, e.chosen);
    if (!chosen)
        return e.chosen.cell + " is not available here";
    if (const auto d = e.chosen.code.difference(code_identity(registry, *chosen)); !d.empty())
        return "the chosen cell's code changed: " + d + " (tune again)";
    if (const auto pick = cell_named(registry, e, e.overrides)) {
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

Profiler::TunedPicker tuned_picker(BackendRegistry& registry, TuningSet tunings,
                                   std::string variant,
                                   std::function<nlohmann::json(const DeviceInfo&)> machine_of,
                                   std::shared_ptr<std::vector<std::string>> ignored) {
    if (tunings.tunings.empty())
        return {};
    auto machines = std::make_shared<std::map<std::string, nlohmann::json>>();
    auto set = std::make_shared<const TuningSet>(std::move(tunings));
    return
        [&registry, set, machines, variant = std::move(variant), machine_of = std::move(machine_of),
         ignored](const OpInfo& op, const Dims& dims, const DeviceInfo& device,
                  const KernelCell& pick) -> KernelRegistry::CellPtr {
            TuningQuery q{std::string(op.name), pick.key[1], variant};
            q.pick = cell_name(pick.key);
            q.work = size_work(dims);
            q.size = dims_to_string(op, dims);
            auto [it, fresh] = machines->try_emplace(q.device);
            if (fresh)
                it->second = machine_of(device);
            q.machine = it->second;
            auto d = decide_tuning(registry, *set, q);
            if (ignored)
                for (auto& why : d.ignored)
                    if (std::find(ignored->begin(), ignored->end(), why) == ignored->end())
                        ignored->push_back(std::move(why));
            if (!d.use)
                return nullptr;
            // The chosen cell loaded (a plugin's placeholder on the way), as a run needs it.
            const std::array<TupleKey, 1> key{d.use->cell->key};
            return registry.kernel_registry().resolve_first(key);
        };
}

nlohmann::json this_machine() {
    return machine_fingerprint()["machine"];
}

std::shared_ptr<std::vector<std::string>> follow_tunings(Profiler& profiler,
                                                         BackendRegistry& registry) {
    auto ignored = std::make_shared<std::vector<std::string>>();
    if (!profiler.settings().use_tuning)
        return ignored;
    auto set = load_tunings(tuning_paths());
    *ignored = set.problems;
    auto machine_of = [machine = this_machine()](const DeviceInfo&) { return machine; };
    profiler.set_tuned_picker(
        tuned_picker(registry, std::move(set), profiler.settings().variant, machine_of, ignored));
    return ignored;
}

std::vector<TuningStanding> tuning_standings(BackendRegistry& registry, const TuningSet& tunings) {
    std::vector<TuningStanding> out;
    const auto machine = this_machine();
    for (const auto& t : tunings.tunings)
        for (const auto& e : t.entries) {
            TuningQuery q{e.op, e.device, e.variant};
            q.work = e.min_work; // the size question aside: what else keeps it from applying
            q.size = e.sizes.empty() ? std::string() : e.sizes.front();
            try {
                // The chain's pick as far as the manifests tell, loading nothing.
                for (const auto& key : fallback_chain(e.op, parse_target(e.device), e.variant))
                    if (const auto cell = registry.kernel_registry().lookup(key);
                        cell && cell->is_available()) {
                        q.pick = cell_name(key);
                        break;
                    }
            } catch (const std::exception&) {
            }
            q.machine = machine;
            TuningSet one;
            Tuning only = t;
            only.read_warnings.clear();
            only.entries = {e};
            one.tunings.push_back(std::move(only));
            auto d = decide_tuning(registry, one, q);
            out.push_back({e, t.source, d.use.has_value(), std::move(d.ignored)});
        }
    return out;
}

} // namespace switchyard
