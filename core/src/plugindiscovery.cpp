// SPDX-License-Identifier: MIT
#include "plugindiscovery.h"

#include <switchyard/pluginsearchpath.h>

namespace switchyard {

std::vector<std::shared_ptr<BackendProvider>> discover_default_plugins() {
    return PluginSearchPath::from_environment().discover();
}

} // namespace switchyard
