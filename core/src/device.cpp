// SPDX-License-Identifier: MIT
#include <switchyard/device.h>
#include <switchyard/deviceregistry.h>
#include <switchyard/hardware.h>

#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

namespace switchyard {

double Device::time_launches(const std::function<void()>& launch, int count) {
    synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        launch();
    synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json DeviceInfo::to_json() const {
    return {{"id", id},
            {"kind", kind},
            {"name", name},
            {"arch", arch},
            {"properties", properties},
            {"peak_bandwidth_gbs", peak_bandwidth_gbs},
            {"peak_bandwidth_source", peak_bandwidth_source},
            {"peak_gflops", peak_gflops},
            {"peak_gflops_source", peak_gflops_source},
            {"has_device_timer", has_device_timer}};
}

DeviceInfo DeviceInfo::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error("device: expected an object");
    DeviceInfo d;
    auto str = [&](const char* key, bool required) {
        if (!j.contains(key)) {
            if (required)
                throw std::runtime_error(std::string("device.") + key + ": missing");
            return std::string();
        }
        if (!j[key].is_string())
            throw std::runtime_error(std::string("device.") + key + ": expected a string");
        return j[key].get<std::string>();
    };
    auto num = [&](const char* key) {
        if (!j.contains(key))
            return 0.0;
        if (!j[key].is_number())
            throw std::runtime_error(std::string("device.") + key + ": expected a number");
        return j[key].get<double>();
    };
    d.id = str("id", true);
    d.kind = str("kind", false);
    d.name = str("name", false);
    d.arch = str("arch", false);
    if (j.contains("properties"))
        d.properties = j["properties"];
    d.peak_bandwidth_gbs = num("peak_bandwidth_gbs");
    d.peak_bandwidth_source = str("peak_bandwidth_source", false);
    d.peak_gflops = num("peak_gflops");
    d.peak_gflops_source = str("peak_gflops_source", false);
    if (j.contains("has_device_timer") && j["has_device_timer"].is_boolean())
        d.has_device_timer = j["has_device_timer"].get<bool>();
    return d;
}

namespace {

class CpuDevice final : public Device {
public:
    CpuDevice() {
        const auto& cpu = cpu_info();
        m_info.id = "cpu";
        m_info.kind = "cpu";
        m_info.name = cpu.brand.empty() ? cpu.vendor : cpu.brand;
        m_info.arch = cpu.best_level;
        m_info.properties = cpu.to_json();
        // The peaks are probed in prepare() so listing devices stays cheap.
    }

    const DeviceInfo& info() const override { return m_info; }

    void prepare() override {
        std::call_once(m_peaks_once, [this] {
            const auto& p = cpu_peaks();
            m_info.peak_bandwidth_gbs = p.triad_gbs;
            m_info.peak_bandwidth_source =
                "measured: STREAM triad, fp32, all threads, " + std::to_string(p.triad_bytes >> 20) + " MiB";
            m_info.peak_gflops = p.fma_gflops;
            m_info.peak_gflops_source = p.fma_gflops > 0 ? "measured: AVX2 FMA loop, all threads" : "";
        });
    }

    void* allocate(std::size_t bytes) override {
        return ::operator new[](std::max<std::size_t>(bytes, 64), std::align_val_t(64));
    }
    void release(void* buffer) noexcept override {
        if (buffer)
            ::operator delete[](buffer, std::align_val_t(64));
    }
    void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
    void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }

    void flush_caches() override {
        // Write then read a buffer twice the size of the last-level cache.
        if (m_flush.empty()) {
            const auto llc = std::max<std::int64_t>(cpu_info().last_level_cache_bytes(), 8 << 20);
            m_flush.assign(std::size_t(2 * llc / 8), 0);
        }
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < m_flush.size(); i += 8) {
            m_flush[i] += 1;
            sum += m_flush[i];
        }
        m_sink = sum;
    }

private:
    DeviceInfo m_info;
    std::once_flag m_peaks_once;
    std::vector<std::uint64_t> m_flush;
    volatile std::uint64_t m_sink = 0;
};

class CpuProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "cpu"; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        static auto device = make_cpu_device();
        return {device};
    }
};

} // namespace

std::shared_ptr<Device> make_cpu_device() { return std::make_shared<CpuDevice>(); }

DeviceRegistry::DeviceRegistry() { m_providers.push_back(std::make_shared<CpuProvider>()); }

DeviceRegistry& DeviceRegistry::instance() {
    static DeviceRegistry registry;
    return registry;
}

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

std::vector<std::shared_ptr<Device>> DeviceRegistry::devices() {
    std::lock_guard lock(m_mutex);
    if (!m_enumerated) {
        m_devices.clear();
        for (const auto& p : m_providers) {
            try {
                for (auto& d : p->enumerate())
                    if (d)
                        m_devices.push_back(std::move(d));
            } catch (...) {
                // A provider whose runtime fails contributes nothing; diagnosis says why.
            }
        }
        m_enumerated = true;
    }
    return m_devices;
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
