// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/tuning/tuning.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchyard {

/// What the tunings say for one resolution.
struct SWITCHYARD_CORE_EXPORT TuningDecision {
    /// The entry that applies, and the cell it chose (loaded, available).
    struct Use {
        TuningEntry entry;
        std::string file; // the tuning file it came from
        KernelRegistry::CellPtr cell;
        /// "tuned -> x86-64-v4/threaded (1.83x the chain's x86-64-v4/default, 2026-12-05,
        /// report r.json); the chain would pick x86-64-v4/default".
        std::string explanation() const;
    };
    std::optional<Use> use;
    /// Entries for this (op, device, variant, size) that do not apply, each with why ("<file>:
    /// gemm on cpu, 2048x2048x2048: tuned on another machine (…)"); and files that could not
    /// be read.
    std::vector<std::string> ignored;
};

/// The query: what the chain picked, for which size, on which machine.
struct SWITCHYARD_CORE_EXPORT TuningQuery {
    std::string op, device, variant = "default"; // device: the kernel key's device kind
    std::string pick;           // the chain's pick, "arch/variant" ("" when none resolved)
    std::optional<double> work; // size_work() of the size asked for; none: no entry applies
    std::string size;           // the size as asked for, for the notes
    /// This machine's fingerprint, its machine part (machine_fingerprint()["machine"]): compared
    /// with the tuning's through machine_id_for(device).
    nlohmann::json machine;
};

/// Which entry of `tunings` applies to `query`. An entry applies only when all hold, and
/// otherwise is said in `ignored` with the first that fails (entries of other ops, devices
/// or variants are not mentioned; one for another size range only where no size was given):
///  1. the size's work is within the entry's range;
///  2. the tuning was measured on this machine (machine_id_for() of both, for the device);
///  3. the chain still picks the cell the entry overrides;
///  4. the chosen cell is declared and available here;
///  5. both cells' code is what was measured (backend, version, build ID: a rebuilt plugin
///     does not inherit its old tuning).
/// The first entry that applies wins (files in tuning_paths() order, entries in file order).
SWITCHYARD_CORE_EXPORT TuningDecision decide_tuning(BackendRegistry& registry,
                                                    const TuningSet& tunings,
                                                    const TuningQuery& query);

/// A profiler's tuned picker (Profiler::set_tuned_picker) over `tunings`, for a run asking for
/// `variant`: each resolved row runs the cell decide_tuning() chooses for its size, where an
/// entry applies. `machine_of`
/// gives this machine's fingerprint part for a device kind's devices (asked once per kind).
/// What was ignored, and why, is added to `ignored` (once per distinct reason) when given.
SWITCHYARD_CORE_EXPORT Profiler::TunedPicker
tuned_picker(BackendRegistry& registry, TuningSet tunings, std::string variant,
             std::function<nlohmann::json(const DeviceInfo&)> machine_of,
             std::shared_ptr<std::vector<std::string>> ignored = {});

/// This machine as a tuning sees it: the fingerprint's machine part (profiling/fingerprint.h:
/// the host's CPU and GPUs, no device backend loaded; machine_id_for() takes the part a device
/// kind needs). What TuningQuery::machine holds.
SWITCHYARD_CORE_EXPORT nlohmann::json this_machine();

/// One entry of the tuning files as it stands on this machine, sizes aside.
struct SWITCHYARD_CORE_EXPORT TuningStanding {
    TuningEntry entry;
    std::string file;
    bool applies = false;             // for the sizes of its range
    std::vector<std::string> ignored; // where not: why (decide_tuning()'s reasons)
};

/// Every entry of `tunings`, judged as decide_tuning() judges it at the smallest size of its
/// range, against the chain's pick as far as the manifests tell (no plugin is loaded), on
/// this machine (this_machine()). What `matrix` marks and `doctor` warns of.
SWITCHYARD_CORE_EXPORT std::vector<TuningStanding> tuning_standings(BackendRegistry& registry,
                                                                    const TuningSet& tunings);

/// Makes `profiler` follow the tuning files (tuning_paths()) where its settings ask for it
/// (ProfileSettings::use_tuning), on this machine (this_machine()). Returns the entries
/// ignored while planning, and why (filled as plan() runs): the run's context says them.
SWITCHYARD_CORE_EXPORT std::shared_ptr<std::vector<std::string>>
follow_tunings(Profiler& profiler, BackendRegistry& registry);

} // namespace switchyard
