// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// The composition root: the process-wide objects, wired from the modules below. Nothing
// under core/src/<module>/ reaches for these; executables, the GUI and tests do.

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/registry/backendregistry.h>

#include <vector>

namespace switchyard {

struct DoctorReport;
struct InspectResult;

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

} // namespace switchyard
