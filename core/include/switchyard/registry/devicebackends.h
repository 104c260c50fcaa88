// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>

#include <string>
#include <vector>

namespace switchyard {

/// The device kinds (never "cpu") `info` provides, knowing every backend `all`: its manifest's
/// "provides_devices" when it has that key; otherwise (a manifest older than the key) each
/// kind of its declared cells that no backend of `all` claims in its own "provides_devices".
/// So a plugin that only adds kernels for a kind another backend provides (cuBLAS cells for
/// the cuda backend's devices) is not a device backend, and an older device backend for a
/// kind nobody claims still lists its devices.
SWITCHYARD_CORE_EXPORT std::vector<std::string>
provided_device_kinds(const BackendInfo& info, const std::vector<BackendInfo>& all);

/// The backends of `infos` that BackendRegistry::load_device_backends(kinds) loads, by name:
/// Discovered and available, providing (provided_device_kinds) a kind named by `kinds`
/// ("opencl", or a device id such as "opencl:1"; empty: every kind). The one rule, also used
/// for the inspection worker's device listing (worker/inspect.h).
SWITCHYARD_CORE_EXPORT std::vector<std::string>
device_backends(const std::vector<BackendInfo>& infos, const std::vector<std::string>& kinds = {});

} // namespace switchyard
