// SPDX-License-Identifier: MIT
// A device and its provider the way a GPU backend would plug in, for tests.
#pragma once

#include <switchyard/hardware/deviceregistry.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchyard::test {

// Its own "memory", a device timer, a peak from a spec sheet.
class FakeDevice final : public Device {
public:
    explicit FakeDevice(int n) {
        m_info.id = "fake:" + std::to_string(n);
        m_info.kind = "fake";
        m_info.name = "Fake accelerator";
        m_info.arch = "fk_1";
        m_info.peak_bandwidth_gbs = 1000;
        m_info.peak_bandwidth_source = "spec";
        m_info.has_device_timer = true;
        m_info.properties = {{"memory_bytes", 1 << 30}};
    }
    const DeviceInfo& info() const override { return m_info; }
    void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
    void release(void* p) noexcept override { ::operator delete(p); }
    void upload(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
    void download(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
    double time_launches(const std::function<void()>& launch, int count) override {
        for (int i = 0; i < count; ++i)
            launch();
        return 1e-3 * count; // "events" say 1 ms each
    }

private:
    DeviceInfo m_info;
};

// Lists fake:0 and fake:1.
class FakeProvider final : public DeviceProvider {
public:
    std::string kind() const override { return "fake"; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        return {std::make_shared<FakeDevice>(0), std::make_shared<FakeDevice>(1)};
    }
};

} // namespace switchyard::test
