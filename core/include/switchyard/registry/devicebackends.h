// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>

#include <string>
#include <vector>

namespace switchyard {

/// True when BackendRegistry::load_device_backends(kinds) loads `info`: Discovered and
/// available, declaring a cell for a device kind other than the CPU named by `kinds`
/// ("opencl", or a device id such as "opencl:1"; empty: every kind). The one rule, also
/// used by the inspection worker's device listing (worker/inspect.h).
SWITCHYARD_CORE_EXPORT bool is_device_backend(const BackendInfo& info,
                                              const std::vector<std::string>& kinds = {});

} // namespace switchyard
