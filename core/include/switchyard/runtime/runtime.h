// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// The composition root: the process-wide objects, wired from the modules below. Nothing
// under core/src/<module>/ reaches for these; executables, the GUI and tests do.

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/profiling/ceilingcache.h>
#include <switchyard/registry/backendregistry.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace switchyard {

struct DoctorReport;
struct InspectResult;
struct InspectOptions;

/// The built-in backends ("cpu"), in one explicit function (not static initialisation).
SWITCHYARD_CORE_EXPORT std::vector<BackendSpec> builtin_backends();

/// The process-wide backend registry over kernels() and components(): the built-in
/// backends, plugins on the default search path (SWITCHYARD_PLUGIN_PATH, the user's
/// folder, the install's lib/switchyard/plugins), device providers published into
/// default_devices().
SWITCHYARD_CORE_EXPORT BackendRegistry& default_backends();

/// The process-wide device registry: the host CPU, plus the devices of loaded backends.
SWITCHYARD_CORE_EXPORT DeviceRegistry& default_devices();

/// Wires the built-in backends into `registry` the way default_backends() has them
/// (tests and tools that build their own registry).
SWITCHYARD_CORE_EXPORT void use_builtins(BackendRegistry& registry);

/// What an inspection worker saw (worker/inspect.h), onto a doctor's report: each backend
/// it loaded with the state it reached there, and an error problem when the worker could
/// not finish (a device backend that crashed or hung while listing or probing devices).
SWITCHYARD_CORE_EXPORT void apply_inspection(DoctorReport& report, const InspectResult& inspected);

/// The tuning files (tuning/tuning.h, tuning_paths()) onto a doctor's report: a warning for
/// each file that cannot be read and each entry that can never apply here as it stands (another
/// machine, a chain that picks another cell now, a chosen cell that is missing, code rebuilt
/// since it was tuned), with the command that re-tunes it. Nothing is loaded or run.
SWITCHYARD_CORE_EXPORT void apply_tunings(DoctorReport& report, BackendRegistry& backends);

/// The user's cache of measured CPU ceilings (profiling/ceilingcache.h), read from the
/// environment on each call: SWITCHYARD_CEILINGS_CACHE's folder where it names one, none
/// where it is "off" (every run measures), else the user's data folder's `ceilings/`
/// ($XDG_DATA_HOME/switchyard/ceilings, ~/.local/share/switchyard/ceilings).
SWITCHYARD_CORE_EXPORT std::optional<CeilingCache> default_ceiling_cache();

/// SWITCHYARD_CEILINGS_MAX_AGE (days) where it is set, else kDefaultCeilingsMaxAgeDays: the
/// default of `profile --ceilings-max-age`. Throws std::invalid_argument naming the variable
/// when it is not a number of days (0 or more).
SWITCHYARD_CORE_EXPORT double default_ceilings_max_age_days();

/// The devices' measured figures for a front end that lists them (`hardware`, `doctor
/// --probe`), kept between runs as a profile keeps them: the CPU device of `devices` takes
/// its ceilings from default_ceiling_cache() (or measures and keeps them there), and
/// `inspect` is set so that the inspection worker's devices keep theirs there too
/// (prepare_device()). `policy`: SWITCHYARD_CEILINGS_MAX_AGE's age limit unless given.
/// Returns the CPU's set as a report's context.ceiling_set records it (null without a CPU
/// device). Throws std::invalid_argument for a bad SWITCHYARD_CEILINGS_MAX_AGE.
SWITCHYARD_CORE_EXPORT nlohmann::json
prepare_with_ceiling_cache(DeviceRegistry& devices, InspectOptions& inspect,
                           std::optional<CeilingCachePolicy> policy = std::nullopt);

} // namespace switchyard
