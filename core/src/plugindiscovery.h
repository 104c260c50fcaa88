// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/backendregistry.h>

#include <memory>
#include <vector>

namespace switchyard {

/// Plugins on the default search path (SWITCHYARD_PLUGIN_PATH, the user's plugin folder,
/// the install's lib/switchyard/plugins relative to the executable), manifests only.
std::vector<std::shared_ptr<BackendProvider>> discover_default_plugins();

} // namespace switchyard
