// SPDX-License-Identifier: MIT
#include <switchyard/sdk/registries.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace switchyard {

namespace detail {

std::uint64_t next_registry_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t intern_tuple(const std::vector<std::string>& parts) {
    if (parts.empty())
        return 0;
    // Length-prefixed parts, so ("a,b") and ("a", "b") never share an encoding.
    std::string encoded;
    for (const auto& p : parts) {
        const std::uint64_t n = p.size();
        encoded.append(reinterpret_cast<const char*>(&n), sizeof n);
        encoded += p;
    }
    static std::mutex mutex;
    static auto* table = new std::unordered_map<std::string, std::uint64_t>; // outlives statics
    std::lock_guard lock(mutex);
    auto [it, inserted] = table->try_emplace(std::move(encoded), table->size() + 1);
    return it->second;
}

} // namespace detail

std::string_view to_string(CellSource source) noexcept {
    switch (source) {
    case CellSource::Registered:
        return "registered";
    case CellSource::Builtin:
        return "builtin";
    case CellSource::Plugin:
        return "plugin";
    }
    return "registered";
}

KernelRegistry& kernels() {
    static KernelRegistry registry("kernels", {"op", "device", "arch", "variant"});
    return registry;
}

ComponentRegistry& components() {
    static ComponentRegistry registry("components", {"kind", "device", "variant"});
    return registry;
}

void CellRegistrar::add_kernel(KernelSpec spec) {
    KernelCell cell;
    cell.key = kernel_key(spec.op, spec.device, spec.arch, spec.variant);
    cell.fn = std::move(spec.fn);
    cell.available = std::move(spec.available);
    cell.source = m_source;
    cell.backend = m_backend;
    cell.meta = std::move(spec.meta);
    if (!cell.meta.is_object())
        cell.meta = nlohmann::json::object();
    cell.meta["workspace_bytes"] = spec.workspace_bytes;
    if (!cell.fn)
        throw std::invalid_argument("kernel " + cell.key.to_string() + " of backend '" + m_backend +
                                    "' has no implementation");
    m_kernels.push_back(std::move(cell));
}

void CellRegistrar::add_component(ComponentSpec spec) {
    ComponentCell cell;
    cell.key = component_key(spec.kind, spec.device, spec.variant);
    cell.fn = std::move(spec.fn);
    cell.available = std::move(spec.available);
    cell.source = m_source;
    cell.backend = m_backend;
    cell.meta = spec.meta.is_object() ? std::move(spec.meta) : nlohmann::json::object();
    if (!cell.fn)
        throw std::invalid_argument("component " + cell.key.to_string() + " of backend '" +
                                    m_backend + "' has no implementation");
    m_components.push_back(std::move(cell));
}

void CellRegistrar::add_device_provider(std::shared_ptr<DeviceProvider> provider) {
    if (!provider)
        throw std::invalid_argument("add_device_provider: null provider for backend '" + m_backend +
                                    "'");
    m_device_providers.push_back(std::move(provider));
}

void CellRegistrar::commit(KernelRegistry& k, ComponentRegistry& c) {
    k.put_all(std::move(m_kernels));
    c.put_all(std::move(m_components));
    m_kernels.clear();
    m_components.clear();
}

} // namespace switchyard
