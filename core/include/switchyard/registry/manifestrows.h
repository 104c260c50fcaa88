// SPDX-License-Identifier: MIT
#pragma once

// The seed's manifest(): a registry's cells as flat JSON rows (the key fields, available,
// source, backend, then the cell's metadata). The CLI's `matrix` writes these rows; the SDK's
// TupleRegistry::manifest() gives the cells themselves.

#include <switchyard/hardware/sdkjson.h>
#include <switchyard/sdk/tupleregistry.h>

#include <nlohmann/json.hpp>

#include <string>

namespace switchyard {

/// One cell's row.
template <class Fn>
nlohmann::json manifest_row(const TupleRegistry<Fn>& registry,
                            const typename TupleRegistry<Fn>::ManifestEntry& m) {
    nlohmann::json row = nlohmann::json::object();
    const auto& fields = registry.key_fields();
    for (std::size_t i = 0; i < fields.size(); ++i)
        row[fields[i]] = m.cell->key[i];
    row["available"] = m.available;
    row["source"] = std::string(to_string(m.cell->source));
    row["backend"] = m.cell->backend;
    if (m.cell->meta.is_object())
        for (const auto& [key, value] : m.cell->meta.members())
            row[key] = value;
    return row;
}

/// Every cell's row, in manifest() order.
template <class Fn> nlohmann::json manifest_json(const TupleRegistry<Fn>& registry) {
    auto rows = nlohmann::json::array();
    for (const auto& m : registry.manifest())
        rows.push_back(manifest_row(registry, m));
    return rows;
}

} // namespace switchyard
