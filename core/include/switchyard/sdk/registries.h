// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/device.h>
#include <switchyard/sdk/kernel.h>
#include <switchyard/sdk/tupleregistry.h>
#include <switchyard/sdk/value.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchyard {

/// A component builder: materializes a weight-bearing component from a config (an object).
using ComponentFn = std::function<std::shared_ptr<void>(const Value& config)>;

using KernelRegistry = TupleRegistry<KernelFn>;       // (op, device, arch, variant)
using ComponentRegistry = TupleRegistry<ComponentFn>; // (kind, device, variant)
using KernelCell = Registration<KernelFn>;
using ComponentCell = Registration<ComponentFn>;

/// The process-wide registries (function-local singletons).
SWITCHYARD_CORE_EXPORT KernelRegistry& kernels();
SWITCHYARD_CORE_EXPORT ComponentRegistry& components();

inline TupleKey kernel_key(std::string_view op, std::string_view device, std::string_view arch,
                           std::string_view variant) {
    return TupleKey{op, device, arch, variant};
}
inline TupleKey component_key(std::string_view kind, std::string_view device,
                              std::string_view variant) {
    return TupleKey{kind, device, variant};
}

/// A kernel or component cell a backend declares (from its manifest or its registration).
struct SWITCHYARD_CORE_EXPORT DeclaredCell {
    std::vector<std::string> key; // (op, device, arch, variant) or (kind, device, variant)
    std::int64_t workspace_bytes = 0;

    friend bool operator==(const DeclaredCell&, const DeclaredCell&) = default;
};

/// A backend's declared cells: a read-only list whose copies share one vector (a manifest
/// of 100 cells is described, listed and shown many times, and copied each time). Each
/// cell's key is interned when the list is built (on the thread that reads the manifest), so
/// the registry keys a plugin's placeholder cells without hashing their strings again.
/// Writing (push_back, assignment) copies the vector first when another list shares it.
class SWITCHYARD_CORE_EXPORT DeclaredCells {
public:
    using value_type = DeclaredCell;
    using const_iterator = std::vector<DeclaredCell>::const_iterator;
    using iterator = const_iterator;

    DeclaredCells() = default;
    DeclaredCells(std::vector<DeclaredCell> cells);
    DeclaredCells(std::initializer_list<DeclaredCell> cells)
        : DeclaredCells(std::vector<DeclaredCell>(cells)) {}

    const std::vector<DeclaredCell>& cells() const noexcept {
        return m_data ? m_data->cells : none();
    }
    operator const std::vector<DeclaredCell>&() const noexcept { return cells(); }
    /// Cell `i`'s key, interned: TupleKey(cells()[i].key) without the lookup.
    TupleKey key(std::size_t i) const noexcept { return TupleKey(m_data->keys[i]); }

    const_iterator begin() const noexcept { return cells().begin(); }
    const_iterator end() const noexcept { return cells().end(); }
    std::size_t size() const noexcept { return m_data ? m_data->cells.size() : 0; }
    bool empty() const noexcept { return size() == 0; }
    const DeclaredCell& operator[](std::size_t i) const { return m_data->cells[i]; }
    const DeclaredCell& at(std::size_t i) const { return cells().at(i); }
    const DeclaredCell& front() const { return m_data->cells.front(); }
    const DeclaredCell& back() const { return m_data->cells.back(); }

    void push_back(DeclaredCell cell);
    void clear() noexcept { m_data.reset(); }

    friend bool operator==(const DeclaredCells& a, const DeclaredCells& b) {
        return a.m_data == b.m_data || a.cells() == b.cells();
    }

private:
    struct Data {
        std::vector<DeclaredCell> cells;
        std::vector<const detail::InternedTuple*> keys; // keys[i]: cells[i].key interned
    };
    static const std::vector<DeclaredCell>& none() noexcept {
        static const std::vector<DeclaredCell> cells;
        return cells;
    }
    std::shared_ptr<Data> m_data; // written only while not shared
};

/// What a backend hands to its registration hook. Cells are buffered and published
/// together by the caller only when the whole hook succeeds, so a hook that throws
/// leaves nothing behind.
class SWITCHYARD_CORE_EXPORT CellRegistrar {
public:
    struct KernelSpec {
        std::string op, device, arch, variant = "default";
        KernelFn fn;
        std::function<bool()> available; // empty: always available
        std::int64_t workspace_bytes = 0;
        Value meta = Value::object(); // extra metadata shown in the matrix (an object)
    };
    struct ComponentSpec {
        std::string kind, device, variant = "default";
        ComponentFn fn;
        std::function<bool()> available;
        Value meta = Value::object();
    };

    CellRegistrar(std::string backend, CellSource source)
        : m_backend(std::move(backend)), m_source(source) {}

    void add_kernel(KernelSpec spec);
    void add_component(ComponentSpec spec);
    /// Adds the backend's device provider (one per device kind); published with the cells
    /// into the device registry the backend registry feeds, and removed with the backend.
    void add_device_provider(std::shared_ptr<DeviceProvider> provider);

    const std::string& backend() const noexcept { return m_backend; }
    const std::vector<KernelCell>& pending_kernels() const noexcept { return m_kernels; }
    const std::vector<ComponentCell>& pending_components() const noexcept { return m_components; }
    const std::vector<std::shared_ptr<DeviceProvider>>& device_providers() const noexcept {
        return m_device_providers;
    }

    /// Publishes everything added so far into the given registries (all at once).
    void commit(KernelRegistry& k, ComponentRegistry& c);

private:
    std::string m_backend;
    CellSource m_source;
    std::vector<KernelCell> m_kernels;
    std::vector<ComponentCell> m_components;
    std::vector<std::shared_ptr<DeviceProvider>> m_device_providers;
};

} // namespace switchyard
