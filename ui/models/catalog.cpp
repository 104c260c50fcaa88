// SPDX-License-Identifier: MIT
#include "models/catalog.h"

namespace switchyard::ui {

const BackendInfo* CatalogSnapshot::backend(const std::string& name) const {
    // The owner of a name comes first (infos() sorts by name, then priority).
    for (const auto& b : backends)
        if (b.name == name)
            return &b;
    return nullptr;
}

const Resolution* TargetResolution::find(const std::string& op) const {
    for (const auto& r : resolutions)
        if (r.op == op)
            return &r;
    return nullptr;
}

} // namespace switchyard::ui
