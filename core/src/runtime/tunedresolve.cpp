// SPDX-License-Identifier: MIT
// The SDK's resolve_tuned() (sdk/tunedresolve.h), over the process-wide registry: the chain,
// the tuning files (tuning/tunedresolve.h) and, on a tuned choice's first use in this process,
// its parity check.
#include <switchyard/sdk/tunedresolve.h>

#include <switchyard/hardware/devicekind.h>

#include <switchyard/doctor/doctor.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/tuning/tunedresolve.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace switchyard {

namespace {

// Each tuned choice's parity verdict in this process ("" passed), by the entry and the code
// it names: checked once, on first use. Owned here, at the composition root.
std::mutex g_parity_mutex;
std::map<std::string, std::string> g_parity;

// Why the tuned choice must not be used ("" when it may): its parity check, on the op's
// smallest default size, at the tolerance of the cell it overrides.
std::string parity_failure(BackendRegistry& backends, const TuningDecision::Use& use,
                           const OpInfo& op, const KernelCell* overridden) {
    if (device_kind(use.entry.device) != DeviceKind::Cpu)
        return {}; // device cells are checked by the profile that tuned them
    const std::string key = use.file + "|" + use.entry.label() + "|" + use.entry.chosen.cell + "|" +
                            use.entry.chosen.code.build_id;
    std::lock_guard lock(g_parity_mutex);
    if (const auto it = g_parity.find(key); it != g_parity.end())
        return it->second;
    std::string why;
    try {
        const std::array<TupleKey, 1> chosen{use.cell->key}; // loads a plugin's placeholder
        const auto cell = backends.kernel_registry().resolve_first(chosen);
        if (!cell)
            throw std::runtime_error("it did not load");
        const auto sizes = default_sizes(op, cpu_info().last_level_cache_bytes());
        const auto parity = check_cpu_cell(*cell, op, sizes.front(), overridden);
        if (!parity.pass)
            why =
                parity.first_failure.empty() ? std::string(parity.verdict()) : parity.first_failure;
    } catch (const std::exception& e) {
        why = e.what();
    }
    if (!why.empty())
        why = "it failed its parity check when first used in this process (" + why + ")";
    g_parity.emplace(key, why);
    return why;
}

TunedResolveResult runtime_resolve_tuned(const TunedResolveRequest& request) {
    TunedResolveResult out;
    const OpInfo* op = find_op(request.op);
    if (!op) {
        out.error = "unknown op '" + request.op + "'";
        return out;
    }
    auto& backends = default_backends();
    backends.ensure_initialized();
    const Target target = parse_target(request.device);
    const auto chain = fallback_chain(request.op, target, request.variant);
    KernelRegistry::CellPtr pick = backends.kernel_registry().resolve_first(chain);
    out.cell = pick;
    out.cell_name = pick ? cell_name(pick->key) : std::string();
    out.explanation = pick ? "the fallback chain's pick" : "nothing resolves on this machine";
    if (!request.use_tuning)
        return out;
    TuningQuery q{request.op, target.device, request.variant};
    q.pick = out.cell_name;
    q.work = size_work(request.dims);
    q.size = dims_to_string(*op, request.dims);
    q.machine = this_machine();
    const auto set =
        load_tunings(request.tuning_files.empty() ? tuning_paths() : request.tuning_files);
    auto decision = decide_tuning(backends, set, q);
    out.ignored = std::move(decision.ignored);
    if (!decision.use)
        return out;
    if (const auto why = parity_failure(backends, *decision.use, *op, pick.get()); !why.empty()) {
        out.ignored.push_back(decision.use->file + ": " + decision.use->entry.label() + ": " + why);
        return out;
    }
    const std::array<TupleKey, 1> chosen{decision.use->cell->key};
    if (auto cell = backends.kernel_registry().resolve_first(chosen)) {
        out.cell = cell;
        out.cell_name = cell_name(cell->key);
        out.tuned = true;
        out.explanation = decision.use->explanation();
    }
    return out;
}

// Wired when the core loads: the SDK's entry point answers from here.
[[maybe_unused]] const bool g_wired = (detail::set_tuned_resolver(&runtime_resolve_tuned), true);

} // namespace

void apply_tunings(DoctorReport& report, BackendRegistry& backends) {
    const auto set = load_tunings(tuning_paths());
    auto warn = [&](const std::string& subject, const std::string& problem,
                    const std::string& fix) {
        DoctorProblem p;
        p.severity = Severity::Warning;
        p.subject = subject;
        p.problem = problem;
        p.fix = fix;
        report.problems.push_back(std::move(p));
    };
    for (const auto& problem : set.problems)
        warn("tuning", problem, "Fix or remove the file; `switchyard-cli tune` writes a new one.");
    for (const auto& t : set.tunings)
        for (const auto& w : t.read_warnings)
            warn("tuning", t.source + ": " + w, "`switchyard-cli tune` writes the entry anew.");
    for (const auto& standing : tuning_standings(backends, set)) {
        const auto& e = standing.entry;
        for (const auto& why : standing.ignored)
            warn("tuning", why,
                 "Re-tune on this machine: switchyard-cli tune --op " + e.op + " --device " +
                     e.device + (e.variant == "default" ? "" : " --variant " + e.variant) +
                     " (resolve ignores this entry meanwhile).");
    }
}

} // namespace switchyard
