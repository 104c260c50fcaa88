// SPDX-License-Identifier: MIT
#include <switchyard/hardware/deviceregistry.h>

#include <algorithm>

namespace switchyard {

void DeviceRegistry::add_provider(std::shared_ptr<DeviceProvider> provider) {
    if (!provider)
        return;
    std::lock_guard lock(m_mutex);
    const auto kind = provider->kind();
    std::erase_if(m_providers, [&](const auto& p) { return p->kind() == kind; });
    m_providers.push_back(std::move(provider));
    m_enumerated = false;
}

bool DeviceRegistry::remove_provider(std::string_view kind) {
    std::lock_guard lock(m_mutex);
    const auto n = std::erase_if(m_providers, [&](const auto& p) { return p->kind() == kind; });
    m_enumerated = false;
    return n > 0;
}

std::vector<std::string> DeviceRegistry::kinds() {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out;
    for (const auto& p : m_providers)
        out.push_back(p->kind());
    return out;
}

std::shared_ptr<DeviceProvider> DeviceRegistry::provider(std::string_view kind) {
    std::lock_guard lock(m_mutex);
    for (const auto& p : m_providers)
        if (p->kind() == kind)
            return p;
    return nullptr;
}

std::vector<std::shared_ptr<Device>> DeviceRegistry::devices() {
    std::lock_guard lock(m_mutex);
    enumerate_locked();
    return m_devices;
}

std::vector<std::pair<std::string, std::string>> DeviceRegistry::enumeration_errors() {
    std::lock_guard lock(m_mutex);
    enumerate_locked();
    return m_errors;
}

void DeviceRegistry::enumerate_locked() {
    if (m_enumerated)
        return;
    m_devices.clear();
    m_errors.clear();
    for (const auto& p : m_providers) {
        // A provider whose runtime fails contributes nothing; what it said is kept.
        try {
            for (auto& d : p->enumerate())
                if (d)
                    m_devices.push_back(std::move(d));
        } catch (const std::exception& e) {
            m_errors.emplace_back(p->kind(), e.what());
        } catch (...) {
            m_errors.emplace_back(p->kind(), "an exception that is not a std::exception");
        }
    }
    m_enumerated = true;
}

std::shared_ptr<Device> DeviceRegistry::find(std::string_view id) {
    for (auto& d : devices())
        if (d->info().id == id)
            return d;
    return nullptr;
}

void DeviceRegistry::refresh() {
    std::lock_guard lock(m_mutex);
    m_enumerated = false;
}

} // namespace switchyard
